"""The contained tier through the real Claude Code client: code the agent runs
(`python3 script.py`) is allowed without a question, and Claude Code itself runs it inside
`signoff sandbox` (PreToolUse's updatedInput). A script that tries to write outside the
project and to read a planted key fails inside, the model reads why, nothing outside
changes; a script that edits the project lands its edits, and `signoff review` shows the
change set, which `signoff revert` undoes.

Claude Code's own check is opened (`--allowedTools`) so that only signoff stands in the
way. Everything happens in the test's folders (the outside file under the repository's
ignored .cache: the sandbox's /tmp is its own, so a write there would vanish, not fail).
"""

from __future__ import annotations

import json
import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from claude_code_harness import REPO, Claude
from test_claude_code_e2e import assert_ok, audit, echo_last_result, install, signoff

from signoff.llm.fake_anthropic import FakeAnthropicServer, ToolUse
from signoff.sandbox import probe

OPEN = ("--allowedTools", "Bash,Read,Write,Edit")
KEY = "-----BEGIN OPENSSH PRIVATE KEY----- planted-by-the-test"

pytestmark = pytest.mark.skipif(not probe().available, reason=f"no sandbox here: {probe().reason}")


@pytest.fixture
def outside() -> Iterator[Path]:
    folder = REPO / ".cache" / f"contained-claude-{uuid.uuid4().hex}"
    folder.mkdir(parents=True)
    try:
        yield folder
    finally:
        shutil.rmtree(folder)


def bash(command: str, ident: str) -> ToolUse:
    return ToolUse("Bash", {"command": command, "description": "scripted"}, id=ident)


def test_contained_code_cannot_leave_and_its_edits_are_reviewable(
    claude: Claude, outside: Path
) -> None:
    (claude.home / ".ssh").mkdir(parents=True)
    (claude.home / ".ssh" / "id_rsa").write_text(KEY + "\n")
    (claude.project / "notes.txt").write_text("first draft\n")
    (claude.project / "leak.py").write_text(
        "import os, pathlib\n"
        "try:\n"
        "    print(pathlib.Path(os.path.expanduser('~/.ssh/id_rsa')).read_text())\n"
        "except OSError as exc:\n"
        "    print('no key:', type(exc).__name__)\n"
        f"pathlib.Path({str(outside / 'escaped.txt')!r}).write_text('out')\n"
    )
    (claude.project / "edit.py").write_text(
        "import pathlib\npathlib.Path('notes.txt').write_text('second draft\\n')\n"
    )
    install(claude, "--ask", "inbox", hooks={"wait": "2s"})
    script = [bash("python3 leak.py", "toolu_leak"), bash("python3 edit.py", "toolu_edit")]
    with FakeAnthropicServer([*script, echo_last_result]) as api:
        run = claude.run(api, "run the scripts", *OPEN)
    assert_ok(run)
    results = {r.tool_use_id: r for r in api.tool_results()}
    leak = results["toolu_leak"].text
    assert KEY not in leak  # the key is hidden inside
    assert "no key:" in leak
    assert "Read-only file system" in leak or "Permission denied" in leak  # the write failed
    assert list(outside.iterdir()) == []  # nothing outside changed
    assert (claude.project / "notes.txt").read_text() == "second draft\n"  # the edit landed
    verdicts = [
        (e["data"]["call"]["arguments"]["command"], e["data"]["verdict"])
        for e in audit(claude)
        if e["kind"] == "verdict"
    ]
    assert [(c, v["effect"], v.get("contained")) for c, v in verdicts] == [
        ("python3 leak.py", "notify", True),
        ("python3 edit.py", "notify", True),
    ]
    reviewed = json.loads(signoff(claude, "review", "--json").stdout)
    edits = [
        i
        for i in reviewed
        if i.get("contained") and i["call"]["arguments"]["command"] == "python3 edit.py"
    ]
    (item,) = edits
    assert item["changes"] == [
        {"path": "notes.txt", "action": "modified", "kind": "file", "detail": ""}
    ]
    signoff(claude, "revert", item["id"])
    assert (claude.project / "notes.txt").read_text() == "first draft\n"
