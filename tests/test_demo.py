"""`signoff demo` end to end: in a real pseudo-terminal, and across processes without one."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pexpect
import pytest

from signoff.store import open_store

MENU = r"\[y\] approve"


def env_for(home: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update(HOME=str(home), SIGNOFF_LANG="en", COLUMNS="120", TERM="xterm")
    env.pop("SIGNOFF_DB", None)
    return env


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    (home / "precious.txt").write_text("must survive")
    return home


def transcript(workspace: Path) -> list[dict[str, Any]]:
    store = open_store(str(workspace / ".signoff" / "signoff.db"))
    try:
        (run,) = store.list_runs()
        return store.load_messages(run.id)
    finally:
        store.close()


def tool_results(workspace: Path) -> dict[str, str]:
    return {m["tool_call_id"]: m["content"] for m in transcript(workspace) if m["role"] == "tool"}


def spawn_demo(workspace: Path, home: Path) -> pexpect.spawn:
    return pexpect.spawn(
        sys.executable,
        ["-m", "signoff", "demo", "--workspace", str(workspace)],
        env=env_for(home),
        encoding="utf-8",
        timeout=60,
        dimensions=(50, 120),
    )


def test_interactive_always_edit_and_answer(tmp_path: Path, home: Path) -> None:
    ws = tmp_path / "ws"
    child = spawn_demo(ws, home)
    child.expect("rm -rf build/")
    child.expect(MENU)
    child.sendline("a")  # always: the exact rule is shown before it is saved
    child.expect(r"This will save the rule (.+?) with scope")
    assert child.match.group(1) == "execute_command(rm -rf build/)"
    child.expect(r"\[y/N\]")
    child.sendline("y")
    child.expect("client@example.com")
    child.expect(MENU)
    child.sendline("e")
    child.expect("json> ")
    child.sendline('{"to": "boss@example.com", "subject": "0.2 done", "body": "Shipped."}')
    child.sendline("")  # the blank line that ends the block, as the prompt says
    child.expect("judged again")  # the edited call is shown as it will run
    child.expect(r"Approve the edited call\? \[y/N\]")
    child.sendline("y")
    child.expect("Which version should I tag")
    child.sendline("2")
    child.expect(r"finished")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert not (ws / "build").exists()
    assert (home / "precious.txt").read_text() == "must survive"  # rm -rf ~ never ran
    outbox = (ws / ".signoff" / "outbox.mbox").read_text()
    assert "boss@example.com" in outbox and "client@example.com" not in outbox  # the edit ran
    results = tool_results(ws)
    assert "denied by policy" in results["call_home"]
    assert results["call_ask"] == "1.0.0"


def test_interactive_reject_reason_reaches_the_transcript(tmp_path: Path, home: Path) -> None:
    ws = tmp_path / "ws"
    child = spawn_demo(ws, home)
    child.expect("rm -rf build/")
    child.expect(MENU)
    child.sendline("y")
    child.expect("client@example.com")
    child.expect(MENU)
    child.sendline("n")
    child.expect("[Rr]eason")
    child.sendline("the client is on holiday")
    child.expect("Which version should I tag")
    child.sendline("0.2.0")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert not (ws / ".signoff" / "outbox.mbox").exists()
    assert "the client is on holiday" in tool_results(ws)["call_email"]
    assert (home / "precious.txt").exists()


def signoff(*args: str, cwd: Path, home: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "signoff", *args],
        cwd=cwd,
        env=env_for(home),
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
        check=False,
    )


def test_without_a_terminal_the_run_pauses_and_other_processes_finish_it(
    tmp_path: Path, home: Path
) -> None:
    ws = tmp_path / "ws"
    first = signoff("demo", "--workspace", str(ws), cwd=tmp_path, home=home)
    assert first.returncode == 0, first.stderr
    assert "SCRIPTED" in first.stdout and "signoff resume" in first.stdout
    run_id = first.stdout.split("Run ", 1)[1].split()[0]
    assert (ws / "build").exists()  # nothing asked has run
    decisions = 0
    for _ in range(6):
        inbox = signoff("inbox", "--json", "--workspace", str(ws), cwd=tmp_path, home=home)
        pending = json.loads(inbox.stdout)
        if not pending:
            break
        for request in pending:
            name = request["call"]["name"]
            if name == "ask_human":
                done = signoff(
                    "answer",
                    request["id"],
                    "0.2.0",
                    "--workspace",
                    str(ws),
                    cwd=tmp_path,
                    home=home,
                )
            else:
                done = signoff(
                    "approve",
                    request["id"],
                    "--as",
                    "alice",
                    "--workspace",
                    str(ws),
                    cwd=tmp_path,
                    home=home,
                )
            assert done.returncode == 0, done.stderr
            assert "signoff resume" in done.stdout
            decisions += 1
        resumed = signoff("resume", run_id, "--workspace", str(ws), cwd=tmp_path, home=home)
        assert resumed.returncode == 0, resumed.stderr
    runs = json.loads(
        signoff("runs", "--json", "--workspace", str(ws), cwd=tmp_path, home=home).stdout
    )
    assert runs[0]["status"] == "finished"
    assert decisions == 3
    assert not (ws / "build").exists()
    assert (home / "precious.txt").exists()
    results = tool_results(ws)
    assert "denied by policy" in results["call_home"]
    again = signoff("resume", run_id, "--workspace", str(ws), cwd=tmp_path, home=home)
    assert again.returncode == 2 and "finished" in again.stderr
