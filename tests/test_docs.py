"""The docs' examples are run: Python blocks execute, `$ signoff ...` lines are invoked and
the JSON they print must contain the key/value pairs the docs show."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = sorted([ROOT / "README.md", *(ROOT / "docs").glob("*.md")])
BLOCK = re.compile(r"^```(\w+)\n(.*?)^```", re.DOTALL | re.MULTILINE)
PAIR = re.compile(r'"(\w+)": ("[^"]*"|-?\d+(?:\.\d+)?|true|false|null)')


def blocks(path: Path, language: str) -> list[str]:
    return [body for lang, body in BLOCK.findall(path.read_text()) if lang == language]


@pytest.mark.parametrize("doc", [d for d in DOCS if blocks(d, "python")], ids=lambda d: d.name)
def test_python_examples_run(doc: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {"__name__": "__doc_example__"}
    for block in blocks(doc, "python"):
        exec(compile(block, str(doc), "exec"), namespace)


def console_examples() -> list[tuple[str, str, list[str]]]:
    found = []
    for doc in DOCS:
        for block in blocks(doc, "console"):
            lines = block.splitlines()
            for index, line in enumerate(lines):
                if line.startswith("$ signoff "):
                    expected = []
                    for following in lines[index + 1 :]:
                        if following.startswith("$ "):
                            break
                        expected.append(following)
                    found.append((doc.name, line[2:], expected))
    return found


@pytest.mark.slow  # runs the CLI in other processes
@pytest.mark.parametrize(
    ("doc", "command", "expected"),
    console_examples(),
    ids=[f"{d}:{c[:40]}" for d, c, _ in console_examples()],
)
def test_console_examples(doc: str, command: str, expected: list[str], tmp_path: Path) -> None:
    argv = shlex.split(command, comments=True)
    if argv[1] != "check":  # the examples read a store that exists (reads never create one)
        migrate = [sys.executable, "-m", "signoff", "migrate"]
        subprocess.run(migrate, cwd=tmp_path, check=True, capture_output=True)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "signoff",
            *argv[1:],
            *(["--no-user-settings"] if argv[1] == "check" else []),
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    for line in expected:
        pairs = PAIR.findall(line)
        if not pairs:
            continue
        actual = json.loads(done.stdout.splitlines()[0])
        for key, value in pairs:
            assert actual.get(key) == json.loads(value), (key, actual)
        # the keys shown come in the order the tool prints them (a reader compares them)
        shown = [key for key, _ in pairs]
        assert shown == [key for key in actual if key in shown], (line, list(actual))


def test_the_audit_docs_list_every_event_kind() -> None:
    """Each kind signoff writes has a row in docs/audit.md's table (one source: kinds.py)."""
    from signoff.kinds import EVENT_KINDS

    text = (ROOT / "docs" / "audit.md").read_text()
    rows = [line for line in text.splitlines() if line.startswith("| `")]
    missing = [k for k in EVENT_KINDS if not any(f"`{k}`" in row for row in rows)]
    assert missing == []


def test_the_policy_docs_list_every_settings_table_and_key() -> None:
    from signoff.settings import _KNOWN

    text = (ROOT / "docs" / "policy.md").read_text()
    table = text[text.index("### Every table and key") : text.index("## Modes")]
    for name, keys in _KNOWN.items():
        assert f"`[{name}" in table, name
        for key in keys or ():
            assert f"`{key}`" in table, f"{name}.{key}"
