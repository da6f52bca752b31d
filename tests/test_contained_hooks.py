"""The contained tier through the Claude Code hook: a command that asks only because what
it runs is unknown is allowed as the sandbox runs it (PreToolUse's `updatedInput` wraps it
in `signoff sandbox -- bash -c COMMAND`); the wrapped command really runs contained (a
write inside lands, a write outside fails inside and changes nothing); without a sandbox,
or with `[sandbox] enabled = false`, it asks as before; and the clients that cannot be
told to run a command differently (Codex, Gemini, Cursor) still ask."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
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


@needs_sandbox
def test_a_contained_change_set_is_on_the_record_and_reverts_exactly(ws: Path) -> None:
    (ws / "keep.txt").write_text("mine\n")
    (ws / "gone.txt").write_text("old\n")
    script = ws / "tidy.py"
    script.write_text(
        "import os, pathlib, socket\n"
        "pathlib.Path('keep.txt').write_text('changed\\n')\n"
        "os.remove('gone.txt')\n"
        "pathlib.Path('new.txt').write_text('new\\n')\n"
        "try:\n"
        "    socket.create_connection(('1.1.1.1', 53), timeout=2)\n"
        "except OSError as exc:\n"
        "    raise SystemExit(f'network: {exc}')\n"
    )
    doc = event(ws, "Bash", {"command": "python3 tidy.py"}, tool_use_id="toolu_tidy")
    out, _, _ = hook(ws, doc)
    done = subprocess.run(
        ["bash", "-c", updated_command(out)], cwd=ws, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 1, done.stderr  # the connection failed inside: its exit code
    assert "a person can run it uncontained" in done.stderr or "blocked" in done.stderr
    assert (ws / "keep.txt").read_text() == "changed\n" and not (ws / "gone.txt").exists()
    post = {**doc, "hook_event_name": "PostToolUse", "tool_response": {"stdout": done.stdout}}
    hook(ws, post)
    reviewed = json.loads(signoff_cli(ws, "review", "--json"))
    (item,) = [i for i in reviewed if i.get("contained")]
    actions = {c["path"]: c["action"] for c in item["changes"]}
    assert actions == {"keep.txt": "modified", "gone.txt": "deleted", "new.txt": "created"}
    signoff_cli(ws, "revert", item["id"])
    assert (ws / "keep.txt").read_text() == "mine\n"
    assert (ws / "gone.txt").read_text() == "old\n"
    assert not (ws / "new.txt").exists()
    audit = json.loads(signoff_cli(ws, "audit", "--json"))
    (blocked,) = [e for e in audit if e["kind"] == "sandbox.blocked"]
    assert {b["kind"] for b in blocked["data"]["blocked"]} == {"network"}
    leftovers = list((ws / ".signoff" / "hooks").rglob("*.sandbox*"))
    assert leftovers == []  # the report and the backup went with the record


def signoff_cli(ws: Path, *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "signoff", *args, "--workspace", str(ws)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


@needs_sandbox
def test_a_read_the_policy_denies_stays_denied_inside(ws: Path) -> None:
    (ws / ".signoff").mkdir()
    (ws / ".signoff" / "settings.toml").write_text(
        '[permissions]\ndeny = ["Read(config/prod/**)", "Read(*.pem)"]\n'
    )
    (ws / "config" / "prod").mkdir(parents=True)
    (ws / "config" / "prod" / "db.yml").write_text("password: hunter2\n")
    (ws / "deploy.pem").write_text("PRIVATE\n")
    (ws / ".env").write_text("TOKEN=abc\n")
    (ws / "peek.py").write_text(
        "import pathlib\n"
        "for name in ('config/prod/db.yml', 'deploy.pem', '.env', 'app.py'):\n"
        "    try:\n"
        "        print(name, repr(pathlib.Path(name).read_text()))\n"
        "    except OSError as exc:\n"
        "        print(name, type(exc).__name__)\n"
    )
    out, _, _ = hook(ws, event(ws, "Bash", {"command": "python3 peek.py"}))
    assert decision(out) == "allow"
    done = subprocess.run(
        ["bash", "-c", updated_command(out)], cwd=ws, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    for secret in ("hunter2", "PRIVATE", "TOKEN=abc"):
        assert secret not in done.stdout
    assert "def main" in done.stdout  # the control: the project's own code is readable
    assert (ws / "config" / "prod" / "db.yml").read_text() == "password: hunter2\n"


@needs_sandbox
def test_a_deletion_runs_contained_and_reverts(ws: Path) -> None:
    (ws / "reproduce_bug.py").write_text("print('repro')\n")
    doc = event(ws, "Bash", {"command": "rm reproduce_bug.py"}, tool_use_id="toolu_rm")
    out, _, _ = hook(ws, doc)
    assert decision(out) == "allow"  # no question: what it deletes is kept
    done = subprocess.run(
        ["bash", "-c", updated_command(out)], cwd=ws, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert not (ws / "reproduce_bug.py").exists()
    hook(ws, {**doc, "hook_event_name": "PostToolUse", "tool_response": {"stdout": ""}})
    (item,) = [i for i in json.loads(signoff_cli(ws, "review", "--json")) if i.get("contained")]
    assert item["changes"][0]["action"] == "deleted"
    signoff_cli(ws, "revert", item["id"])
    assert (ws / "reproduce_bug.py").read_text() == "print('repro')\n"


@needs_sandbox
def test_a_hard_reset_runs_contained_and_reverts_to_the_same_commit(ws: Path) -> None:
    git = ["git", "-c", "user.email=a@b", "-c", "user.name=t", "-C", str(ws)]
    subprocess.run([*git, "init", "-q"], check=True)
    for text in ("one\n", "two\n"):
        (ws / "app.py").write_text(text)
        subprocess.run([*git, "add", "app.py"], check=True)
        subprocess.run([*git, "commit", "-qm", text.strip()], check=True)
    (ws / "app.py").write_text("uncommitted edit\n")
    head = subprocess.run([*git, "rev-parse", "HEAD"], capture_output=True, text=True).stdout
    doc = event(ws, "Bash", {"command": "git reset --hard HEAD~1"}, tool_use_id="toolu_reset")
    out, _, _ = hook(ws, doc)
    assert decision(out) == "allow"
    done = subprocess.run(
        ["bash", "-c", updated_command(out)], cwd=ws, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert (ws / "app.py").read_text() == "one\n"
    hook(ws, {**doc, "hook_event_name": "PostToolUse", "tool_response": {"stdout": ""}})
    (item,) = [i for i in json.loads(signoff_cli(ws, "review", "--json")) if i.get("contained")]
    signoff_cli(ws, "revert", item["id"])
    assert (ws / "app.py").read_text() == "uncommitted edit\n"  # the edit git discarded
    after = subprocess.run([*git, "rev-parse", "HEAD"], capture_output=True, text=True).stdout
    assert after == head  # and the commit the reset dropped


@needs_sandbox
def test_contained_code_cannot_rewrite_the_clients_settings(ws: Path) -> None:
    (ws / ".claude").mkdir()
    settings = ws / ".claude" / "settings.json"
    settings.write_text('{"hooks": {"PreToolUse": []}}\n')
    before = settings.read_bytes()
    command = "python3 -c \"open('.claude/settings.json','w').write('{}')\""
    out, _, _ = hook(ws, event(ws, "Bash", {"command": command}))
    assert decision(out) == "allow"
    done = subprocess.run(
        ["bash", "-c", updated_command(out)], cwd=ws, capture_output=True, text=True, timeout=120
    )
    assert done.returncode != 0  # read-only inside: the write fails there
    assert settings.read_bytes() == before
    (ws / ".mcp.json").unlink(missing_ok=True)
    out, _, _ = hook(ws, event(ws, "Bash", {"command": "python3 -c \"open('.mcp.json','w')\""}))
    subprocess.run(["bash", "-c", updated_command(out)], cwd=ws, capture_output=True, timeout=120)
    assert not (ws / ".mcp.json").exists()  # refused when the change set lands


def test_where_no_sandbox_can_be_made_the_hook_asks(ws: Path, tmp_path: Path) -> None:
    # a real hook process whose PATH holds no bubblewrap (and no answer kept from before)
    doc = event(ws, "Bash", {"command": "python3 make_note.py"})
    env = {
        **os.environ,
        "PATH": os.path.dirname(sys.executable),
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        "HOME": str(tmp_path / "home"),
    }
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "signoff",
            "hook",
            "claude-code",
            "--workspace",
            str(ws),
            "--ask",
            "native",
        ],
        input=json.dumps(doc),
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)["hookSpecificOutput"]
    assert answer["permissionDecision"] == "ask"
    assert "updatedInput" not in answer
