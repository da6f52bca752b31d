"""`signoff hook claude-code` as Claude Code runs it (a process per event), an inbox
decision made by another process, a deferred session resumed by `signoff worker` through a
fake `claude`, install/uninstall, and the HTTP hook on `signoff serve`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from adapter_helpers import event, ws
from signoff.accounts import Accounts
from signoff.adapters.core import request_id
from signoff.adapters.install import install, uninstall
from signoff.store import open_store
from web_helpers import LiveServer

__all__ = ["ws"]

SRC = str(Path(__file__).resolve().parent.parent / "src")


def signoff(*args: str, stdin: str = "", cwd: Path, **kw: Any) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": SRC}
    return subprocess.run(
        [sys.executable, "-m", "signoff", *args],
        input=stdin,
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=120,
        check=False,
        **kw,
    )


def hook_process(ws: Path, doc: Any, *extra: str) -> subprocess.CompletedProcess[str]:
    text = doc if isinstance(doc, str) else json.dumps(doc)
    return signoff("hook", "claude-code", *extra, stdin=text, cwd=ws)


def pre_decision(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 0, done.stderr
    return str(json.loads(done.stdout)["hookSpecificOutput"]["permissionDecision"])


# ------------------------------------------------------------------ the command hook


def test_the_hook_process_denies_with_the_reason(ws: Path) -> None:
    done = hook_process(ws, event(ws, "Bash", {"command": "rm -rf build /"}))
    assert pre_decision(done) == "deny"
    out = json.loads(done.stdout)
    assert "rm -r" in out["hookSpecificOutput"]["permissionDecisionReason"]
    assert done.stdout.startswith("{") and done.stdout.count("\n") == 1  # one object only


STRAY_PRINTER = """
import os, sys
from signoff.adapters import claude_code

real = claude_code.answer

def noisy(*args, **kwargs):
    print("stray print from a library")
    sys.stdout.flush()
    os.system("echo stray output of a child process")
    return real(*args, **kwargs)

claude_code.answer = noisy
sys.exit(claude_code.main())
"""


def test_nothing_but_the_answer_reaches_stdout(ws: Path, tmp_path: Path) -> None:
    """Claude Code ignores an answer that follows other output and lets the call go
    ahead, a deny included: prints and child processes write to stderr while judging."""
    script = tmp_path / "noisy_hook.py"
    script.write_text(STRAY_PRINTER)
    done = subprocess.run(
        [sys.executable, str(script)],
        input=json.dumps(event(ws, "Bash", {"command": "rm -rf build /"})),
        capture_output=True,
        text=True,
        cwd=ws,
        env={**os.environ, "PYTHONPATH": SRC},
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("{") and done.stdout.count("\n") == 1, done.stdout
    assert json.loads(done.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert "stray print" in done.stderr and "child process" in done.stderr


def test_the_hook_process_allows_a_read(ws: Path) -> None:
    done = hook_process(ws, event(ws, "Read", {"file_path": str(ws / "app.py")}))
    assert pre_decision(done) == "allow"


@pytest.mark.parametrize("text", ["", "not json", "[1, 2]", '{"hook_event_name": "PreToolUse"}'])
def test_bad_input_exits_2_with_the_reason_on_stderr(ws: Path, text: str) -> None:
    done = hook_process(ws, text)
    assert done.returncode == 2
    assert done.stdout == ""
    assert "blocked" in done.stderr


def test_bad_arguments_block(ws: Path) -> None:
    done = hook_process(ws, event(ws, "Read", {"file_path": "x"}), "--ask", "yolo")
    assert done.returncode == 2 and "blocked" in done.stderr


def test_the_workspace_comes_from_claude_project_dir(ws: Path, tmp_path: Path) -> None:
    (ws / ".signoff").mkdir()
    (ws / ".signoff" / "settings.toml").write_text('[permissions]\ndeny = ["Bash(ls:*)"]\n')
    sub = ws / "sub"
    sub.mkdir()
    doc = event(ws, "Bash", {"command": "ls"}, cwd=str(sub))
    env = {**os.environ, "PYTHONPATH": SRC, "CLAUDE_PROJECT_DIR": str(ws)}
    done = subprocess.run(
        [sys.executable, "-m", "signoff", "hook", "claude-code"],
        input=json.dumps(doc),
        capture_output=True,
        text=True,
        cwd=sub,
        env=env,
        timeout=120,
        check=False,
    )
    assert pre_decision(done) == "deny"


def test_an_inbox_decision_from_another_process_lets_the_waiting_hook_allow(ws: Path) -> None:
    (ws / ".signoff").mkdir()
    (ws / ".signoff" / "settings.toml").write_text('[hooks]\nask = "inbox"\nwait = "2m"\n')
    doc = event(ws, "Bash", {"command": "git push origin feature-x"})
    env = {**os.environ, "PYTHONPATH": SRC}
    waiting = subprocess.Popen(
        [sys.executable, "-m", "signoff", "hook", "claude-code"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ws,
        env=env,
    )
    assert waiting.stdin is not None
    waiting.stdin.write(json.dumps(doc))
    waiting.stdin.close()
    rid = request_id(f"claude-code/{doc['session_id']}/{doc['tool_use_id']}")
    store = open_store(workspace=ws)
    try:
        for _ in range(600):  # until the hook has made its request
            if store.list_requests(state="pending"):
                break
            time.sleep(0.05)
        assert [r.id for r in store.list_requests(state="pending")] == [rid]
    finally:
        store.close()
    decided = signoff("approve", rid, "--workspace", str(ws), cwd=ws)
    assert decided.returncode == 0, decided.stderr
    assert waiting.wait(timeout=120) == 0
    assert waiting.stdout is not None
    out = waiting.stdout.read()
    answer = json.loads(out)["hookSpecificOutput"]
    assert answer["permissionDecision"] == "allow"


# ------------------------------------------------------------------ defer + worker

FAKE_CLAUDE = """#!{python}
# A stand-in for `claude -p --resume SESSION`: it records how it was started, then fires
# the PreToolUse hook again for the deferred call, as the real client does on resume.
import json, os, subprocess, sys
log = {log!r}
hook_input = {hook_input!r}
done = subprocess.run([sys.executable, "-m", "signoff", "hook", "claude-code"],
                      input=hook_input, capture_output=True, text=True)
with open(log, "a") as handle:
    handle.write(json.dumps({{"argv": sys.argv[1:], "cwd": os.getcwd(),
                             "hook": done.stdout, "code": done.returncode}}) + "\\n")
"""


def test_a_deferred_session_is_resumed_by_the_worker_once_decided(ws: Path, tmp_path: Path) -> None:
    doc = event(ws, "Bash", {"command": "git push origin feature-x"}, session="abc-123")
    log = tmp_path / "claude.log"
    fake = tmp_path / "claude"
    fake.write_text(
        FAKE_CLAUDE.format(python=sys.executable, log=str(log), hook_input=json.dumps(doc))
    )
    fake.chmod(0o755)
    (ws / ".signoff").mkdir()
    (ws / ".signoff" / "settings.toml").write_text(
        f'[hooks]\nask = "defer"\nclaude = "{fake}"\nresume_args = ["--output-format", "json"]\n'
    )
    assert pre_decision(hook_process(ws, doc)) == "defer"
    done = signoff("worker", "--once", "--workspace", str(ws), cwd=ws)
    assert done.returncode == 0, done.stderr
    assert not log.exists()  # nothing decided yet: nothing resumed
    rid = request_id(f"claude-code/abc-123/{doc['tool_use_id']}")
    assert signoff("approve", rid, "--workspace", str(ws), cwd=ws).returncode == 0
    done = signoff("worker", "--once", "--workspace", str(ws), cwd=ws)
    assert done.returncode == 0, done.stderr
    runs = [json.loads(line) for line in log.read_text().splitlines()]
    assert len(runs) == 1
    assert runs[0]["argv"] == ["-p", "--resume", "abc-123", "--output-format", "json"]
    assert runs[0]["cwd"] == str(ws)
    assert json.loads(runs[0]["hook"])["hookSpecificOutput"]["permissionDecision"] == "allow"
    # the worker resumes each decision once
    assert signoff("worker", "--once", "--workspace", str(ws), cwd=ws).returncode == 0
    assert len(log.read_text().splitlines()) == 1


def test_resume_refuses_a_session_id_that_reads_as_an_option(ws: Path) -> None:
    from signoff.adapters.core import HookOptions
    from signoff.adapters.defer import resume_command
    from signoff.exceptions import InvalidInput
    from signoff.models import Request, ToolCall, Verdict

    request = Request(
        "req_x",
        ToolCall("Bash", {"command": "ls"}),
        Verdict("ask", "low", None, ("x",)),
        metadata={"session_id": "--dangerously-skip-permissions"},
    )
    with pytest.raises(InvalidInput, match="session id"):
        resume_command(request, HookOptions())


# ------------------------------------------------------------------ install / uninstall

FOREIGN = {
    "model": "opus",
    "env": {"FOO": "1"},
    "permissions": {
        "allow": ["Bash(npm run test:*)", "Read(./docs/**)"],
        "deny": ["Bash(git push --force:*)", "Read(./.env)"],
        "ask": ["Bash(docker:*)"],
    },
    "hooks": {
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "mine.sh"}]}],
        "Stop": [{"hooks": [{"type": "command", "command": "bye.sh"}]}],
    },
}


def fake_version(tmp_path: Path, version: str) -> str:
    fake = tmp_path / f"claude-{version}"
    fake.write_text(f"#!/bin/sh\necho '{version} (Claude Code)'\n")
    fake.chmod(0o755)
    return str(fake)


def test_install_merges_imports_and_uninstall_restores(ws: Path, tmp_path: Path) -> None:
    settings = ws / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps(FOREIGN, indent=2))
    claude = fake_version(tmp_path, "2.1.328")
    report = install(ws, ask="inbox", claude=claude, command="signoff hook claude-code")
    doc = json.loads(settings.read_text())
    assert doc["model"] == "opus" and doc["env"] == {"FOO": "1"}
    assert doc["permissions"] == FOREIGN["permissions"]
    assert doc["hooks"]["Stop"] == FOREIGN["hooks"]["Stop"]
    pre = doc["hooks"]["PreToolUse"]
    assert pre[0] == FOREIGN["hooks"]["PreToolUse"][0]  # theirs first, kept
    ours = pre[1]["hooks"][0]
    assert ours["command"] == "signoff hook claude-code"
    assert ours["onFailure"] == "block" and ours["timeout"] >= 900
    for name in ("PermissionRequest", "PostToolUse", "PostToolUseFailure"):
        assert doc["hooks"][name][0]["hooks"][0]["onFailure"] == "block"
    assert list(settings.parent.glob("settings.json.signoff-backup-*"))
    toml = (ws / ".signoff" / "settings.toml").read_text()
    assert 'ask = "inbox"' in toml
    for rule in ("Bash(npm run test:*)", "Bash(git push --force:*)", "Read(./.env)"):
        assert rule in toml
    assert any("imported 5 rule" in line for line in report.lines)
    # the imported rules govern Claude's calls now
    done = hook_process(ws, event(ws, "Bash", {"command": "git push --force origin x"}))
    assert pre_decision(done) == "deny"
    # idempotent
    before = settings.read_text(), (ws / ".signoff" / "settings.toml").read_text()
    install(ws, ask="inbox", claude=claude, command="signoff hook claude-code")
    assert (settings.read_text(), (ws / ".signoff" / "settings.toml").read_text()) == before
    uninstall(ws)
    assert json.loads(settings.read_text()) == FOREIGN
    toml = (ws / ".signoff" / "settings.toml").read_text()
    assert toml.strip() == ""  # the file install made holds nothing it added


def test_install_keeps_rules_that_were_already_there(ws: Path, tmp_path: Path) -> None:
    (ws / ".signoff").mkdir()
    (ws / ".signoff" / "settings.toml").write_text(
        '# mine\n[permissions]\ndeny = ["Read(./.env)"]\n'
    )
    (ws / ".claude").mkdir()
    (ws / ".claude" / "settings.local.json").write_text(
        json.dumps({"permissions": {"deny": ["Read(./.env)"]}})
    )
    install(ws, claude=fake_version(tmp_path, "2.1.300"), command="x")
    uninstall(ws)
    text = (ws / ".signoff" / "settings.toml").read_text()
    assert "# mine" in text and 'deny = ["Read(./.env)"]' in text


def test_install_refuses_a_client_that_cannot_fail_closed(ws: Path, tmp_path: Path) -> None:
    from signoff.exceptions import ConfigurationError

    with pytest.raises(ConfigurationError, match="cannot fail closed"):
        install(ws, claude=fake_version(tmp_path, "2.1.200"))
    assert not (ws / ".claude").exists() and not (ws / ".signoff").exists()


def test_install_cli_with_user_and_http(ws: Path, tmp_path: Path) -> None:
    claude = fake_version(tmp_path, "2.1.328")
    done = signoff(
        "install", "claude-code", "--user", "--http", "--claude", claude, "--workspace", str(ws),
        cwd=ws,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    user_settings = Path(os.environ["HOME"]) / ".claude" / "settings.json"
    hook = json.loads(user_settings.read_text())["hooks"]["PreToolUse"][0]["hooks"][0]
    assert hook["type"] == "http" and hook["url"].endswith("/hooks/claude-code")
    assert hook["headers"]["Authorization"] == "Bearer $SIGNOFF_HOOK_TOKEN"
    assert hook["allowedEnvVars"] == ["SIGNOFF_HOOK_TOKEN"] and hook["onFailure"] == "block"
    done = signoff("uninstall", "claude-code", "--user", "--workspace", str(ws), cwd=ws)
    assert done.returncode == 0, done.stderr
    assert not user_settings.exists()  # install made it; nothing else was in it


def test_install_refuses_broken_settings(ws: Path, tmp_path: Path) -> None:
    from signoff.exceptions import InvalidInput

    (ws / ".claude").mkdir()
    (ws / ".claude" / "settings.json").write_text("{not json")
    with pytest.raises(InvalidInput, match="not valid JSON"):
        install(ws, claude=fake_version(tmp_path, "2.1.328"))
    assert (ws / ".claude" / "settings.json").read_text() == "{not json"


# ------------------------------------------------------------------ HTTP hook


@pytest.fixture
def server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    with LiveServer(tmp_path) as live:
        yield live


def test_http_hook_needs_a_token(server: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    doc = event(server.workspace, "Bash", {"command": "rm -rf /"})
    with server.client() as client:
        assert client.post("/hooks/claude-code", json=doc).status_code == 401
    with server.client("wrong") as client:
        assert client.post("/hooks/claude-code", json=doc).status_code == 401
    monkeypatch.setenv("SIGNOFF_HOOK_TOKEN", "s3cret-hook-token")
    with server.client("s3cret-hook-token") as client:
        response = client.post("/hooks/claude-code", json=doc)
    assert response.status_code == 200
    assert response.json()["hookSpecificOutput"]["permissionDecision"] == "deny"


def test_http_hook_with_a_hooks_token(server: Any) -> None:
    token = Accounts(server.db).add("laptop", "hook")
    ws = Path(os.path.realpath(server.workspace))
    with server.client(token) as client:
        allow = client.post("/hooks/claude-code", json=event(ws, "Bash", {"command": "git status"}))
        outside = client.post(
            "/hooks/claude-code", json=event(ws.parent, "Bash", {"command": "git status"})
        )
        garbage = client.post("/hooks/claude-code", content=b"{nope")
        post = client.post(
            "/hooks/claude-code",
            json=event(ws, "Bash", {"command": "git status"}, name="PostToolUse"),
        )
    assert allow.json()["hookSpecificOutput"]["permissionDecision"] == "allow"
    assert outside.json()["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert (
        "outside the workspace" in outside.json()["hookSpecificOutput"]["permissionDecisionReason"]
    )
    assert garbage.json()["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert post.status_code == 200


def test_one_server_judges_each_call_in_its_own_mode(
    server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The server keeps one adapter (its policies built once, per mode): a call in plan
    mode is judged in plan mode, the next one in default mode in default mode."""
    monkeypatch.setenv("SIGNOFF_HOOK_TOKEN", "s3cret-hook-token")
    ws = Path(os.path.realpath(server.workspace))
    write = {"file_path": str(ws / "notes.md"), "content": "hi"}
    answers = []
    with server.client("s3cret-hook-token") as client:
        for n, mode in enumerate(["default", "plan", "default", "plan"]):
            doc = event(ws, "Write", write, permission_mode=mode, tool_use_id=f"toolu_{n}")
            answer = client.post("/hooks/claude-code", json=doc).json()
            answers.append(answer["hookSpecificOutput"]["permissionDecision"])
    assert answers[0] == answers[2] != answers[1] == answers[3], answers
    assert answers[1] == "deny"  # plan mode writes nothing


def test_approving_from_the_web_inbox_lets_the_waiting_hook_allow(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The phone flow: the hook waits; a person approves through the web API."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    with LiveServer(tmp_path) as live:
        ws = Path(os.path.realpath(live.workspace))
        (ws / ".signoff").mkdir()
        token = Accounts(live.db).add("alice", "approver")
        doc = event(ws, "Write", {"file_path": str(ws / "deploy.sh"), "content": "echo hi\n"})
        (ws / ".signoff" / "settings.toml").write_text(
            '[hooks]\nask = "inbox"\nwait = "2m"\n[permissions]\nask = ["Write(./deploy.sh)"]\n'
        )
        waiting = subprocess.Popen(
            [sys.executable, "-m", "signoff", "hook", "claude-code"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=ws,
            env={**os.environ, "PYTHONPATH": SRC, "SIGNOFF_DB": live.db},
        )
        assert waiting.stdin is not None and waiting.stdout is not None
        waiting.stdin.write(json.dumps(doc))
        waiting.stdin.close()
        with live.client(token) as phone:
            rid = request_id(f"claude-code/{doc['session_id']}/{doc['tool_use_id']}")
            for _ in range(600):  # until the hook has made its request
                if rid in phone.get("/api/requests", params={"state": "pending"}).text:
                    break
                time.sleep(0.05)
            shown = phone.get(f"/api/requests/{rid}").json()
            assert "new file: deploy.sh" in json.dumps(shown)
            decided = phone.post(f"/api/requests/{rid}/decide", json={"kind": "approve"})
            assert decided.status_code == 200, decided.text
        assert waiting.wait(timeout=120) == 0, waiting.stderr.read() if waiting.stderr else ""
        answer = json.loads(waiting.stdout.read())["hookSpecificOutput"]
    assert answer["permissionDecision"] == "allow"
    assert "approved by alice" in answer["permissionDecisionReason"]


def test_the_hook_reads_and_answers_utf8_whatever_the_locale(ws: Path) -> None:
    doc = event(ws, "Read", {"file_path": str(ws / "数据.txt")})
    env = {**os.environ, "PYTHONPATH": SRC, "LANG": "C", "LC_ALL": "C"}
    env["PYTHONIOENCODING"] = "ascii"
    done = subprocess.run(
        [sys.executable, "-m", "signoff", "hook", "claude-code"],
        input=json.dumps(doc, ensure_ascii=False).encode("utf-8"),
        capture_output=True,
        cwd=ws,
        env=env,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["hookSpecificOutput"]["permissionDecision"] == "allow"
