"""The contained tier through the Claude Code hook: a command that asks only because what
it runs is unknown is allowed as the sandbox runs it (PreToolUse's `updatedInput` wraps it
in `signoff sandbox -- bash -c COMMAND`); the wrapped command really runs contained (a
write inside lands, a write outside fails inside and changes nothing); without a sandbox,
or with `[sandbox] enabled = false`, it asks as before; and the clients that cannot be
told to run a command differently (Codex, Gemini, Cursor) still ask."""

from __future__ import annotations

import shlex
import shutil
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from adapter_helpers import decision, event, hook, reason, ws
from signoff.adapters import codex, cursor, gemini
from signoff.adapters.core import Adapter, HookCall
from signoff.sandbox import probe

__all__ = ["ws"]  # the fixture, imported for pytest

needs_sandbox = pytest.mark.skipif(
    not probe().available, reason=f"no sandbox here: {probe().reason}"
)


def updated_command(out: dict[str, object] | None) -> str:
    assert out is not None
    answer = out["hookSpecificOutput"]
    assert isinstance(answer, dict)
    updated = answer["updatedInput"]
    assert isinstance(updated, dict)
    command = updated["command"]
    assert isinstance(command, str)
    return command


@needs_sandbox
def test_a_contained_command_is_allowed_as_the_sandbox_runs_it(ws: Path) -> None:
    doc = event(ws, "Bash", {"command": "python3 make_note.py", "description": "run it"})
    out, code, _ = hook(ws, doc)
    assert (decision(out), code) == ("allow", 0)
    assert "contained" in reason(out)
    argv = shlex.split(updated_command(out))
    assert argv[-4:] == ["--", "bash", "-c", "python3 make_note.py"]  # exactly the judged one
    assert "sandbox" in argv and argv[argv.index("--workspace") + 1] == str(ws)
    assert out is not None and out["hookSpecificOutput"]["updatedInput"]["description"] == "run it"


@pytest.fixture
def outside() -> Iterator[Path]:
    """A file outside the workspace and outside /tmp (the sandbox's /tmp is its own, so a
    write there would vanish rather than fail): under the repository's ignored .cache."""
    folder = Path(__file__).resolve().parents[1] / ".cache" / f"contained-{uuid.uuid4().hex}"
    folder.mkdir(parents=True)
    try:
        yield folder / "outside.txt"
    finally:
        shutil.rmtree(folder)


@needs_sandbox
def test_the_updated_command_runs_contained(ws: Path, outside: Path) -> None:
    script = ws / "make_note.py"
    script.write_text(
        "import pathlib\n"
        "pathlib.Path('note.txt').write_text('made inside')\n"
        f"try:\n    pathlib.Path({str(outside)!r}).write_text('escaped')\n"
        "except OSError as exc:\n    print('blocked:', type(exc).__name__)\n"
    )
    out, _, _ = hook(ws, event(ws, "Bash", {"command": "python3 make_note.py"}))
    done = subprocess.run(
        ["bash", "-c", updated_command(out)],
        cwd=ws,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert (ws / "note.txt").read_text() == "made inside"  # the change landed
    assert not outside.exists()  # the write outside failed inside
    assert "blocked:" in done.stdout


def test_without_a_sandbox_it_asks(ws: Path) -> None:
    (ws / ".signoff").mkdir()
    (ws / ".signoff" / "settings.toml").write_text("[sandbox]\nenabled = false\n")
    out, _, _ = hook(ws, event(ws, "Bash", {"command": "python3 make_note.py"}), ask="native")
    assert decision(out) == "ask"
    assert out is not None and "updatedInput" not in out["hookSpecificOutput"]


@needs_sandbox
def test_a_deny_or_an_ask_is_never_contained(ws: Path) -> None:
    (ws / ".signoff").mkdir()
    (ws / ".signoff" / "settings.toml").write_text(
        '[permissions]\ndeny = ["Bash(python3 evil.py)"]\nask = ["Bash(make deploy:*)"]\n'
    )
    denied, _, _ = hook(ws, event(ws, "Bash", {"command": "python3 evil.py"}))
    assert decision(denied) == "deny"
    asked, _, _ = hook(ws, event(ws, "Bash", {"command": "make deploy"}), ask="native")
    assert decision(asked) == "ask"
    online, _, _ = hook(ws, event(ws, "Bash", {"command": "pip install x"}), ask="native")
    assert decision(online) == "ask"


@pytest.mark.parametrize(
    ("client", "tool"), [(codex.CLIENT, "Bash"), (gemini.CLIENT, "run_shell_command")]
)
def test_clients_that_cannot_be_told_to_contain_still_ask(
    ws: Path, client: object, tool: str
) -> None:
    adapter = Adapter(client, ws)  # type: ignore[arg-type]
    try:
        call = HookCall(client.name, "pre", "s", "t", tool, {"command": "pytest -q"}, str(ws))  # type: ignore[attr-defined]
        verdict = adapter.judge(call)
    finally:
        adapter.close()
    assert (verdict.effect, verdict.contained) == ("ask", False)


def test_cursor_cannot_be_told_to_contain_either() -> None:
    assert cursor.CLIENT.contained_input is None
