"""Every wait on a lock another process holds ends at a deadline, with one line.

A writer stopped (SIGSTOP) while it holds the store's lock used to make every hook wait
as long as it stayed stopped (Claude Code waits out its 900 s hook timeout). Here a real
process takes the lock the way a signoff writer does and is really stopped, and the real
`signoff hook` (and `signoff worker`, the HTTP hook of `signoff serve`, `signoff mcp
proxy`, `signoff keys rotate`) must give up within the deadline, block with one line that
names the lock and the stopped process, and write nothing. When the holder goes, the
next call goes through.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from adapter_helpers import event, ws
from signoff.exceptions import ConfigurationError
from signoff.keys import key_file_path
from signoff.store import open_store
from signoff.store.anchor import anchor_path, read_anchor
from signoff.waits import DEFAULT_LOCK_WAIT_S, LOCK_WAIT_ENV, FileLock, LockTimeout
from store_helpers import Backend

__all__ = ["ws"]

pytestmark = pytest.mark.slow  # processes stopped and waited out
SRC = str(Path(__file__).resolve().parent.parent / "src")
HERE = Path(__file__).resolve().parent
FAST = {LOCK_WAIT_ENV: "2"}  # the deadline these tests wait out (the default is 10 s)

# How a signoff writer holds the store: inside its write transaction (SQLite: the writers'
# file lock and BEGIN IMMEDIATE; PostgreSQL: the chain's end, as an append takes it).
WRITER = """
import sys, time
sys.path.insert(0, {src!r})
from signoff.store import open_store
store = open_store({url!r})
with store._write() as tx:
    tx.lock_chain()
    print("held", flush=True)
    time.sleep(600)
"""
# A connection outside signoff's queue (the sqlite3 shell, another program).
RAW_SQLITE = """
import sqlite3, time
conn = sqlite3.connect({url!r}, isolation_level=None)
conn.execute("BEGIN IMMEDIATE")
print("held", flush=True)
time.sleep(600)
"""
FLOCK = """
import sys, time
sys.path.insert(0, {src!r})
from signoff.waits import FileLock
FileLock({url!r}, "a lock").acquire()
print("held", flush=True)
time.sleep(600)
"""


@contextlib.contextmanager
def stopped(script: str, url: str) -> Iterator[int]:
    """A process that takes a lock with `script`, then is stopped (SIGSTOP); its id."""
    proc = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(script.format(src=SRC, url=url))],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
        os.kill(proc.pid, signal.SIGSTOP)
        yield proc.pid
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        os.kill(proc.pid, signal.SIGCONT)
        proc.wait(timeout=30)


def run(
    argv: list[str], *, cwd: Path | None = None, stdin: str = "", env: dict[str, str] | None = None
) -> tuple[subprocess.CompletedProcess[str], float]:
    start = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "signoff", *argv],
        input=stdin,
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": SRC, **(env or {})},
        timeout=120,
        check=False,
    )
    return done, time.monotonic() - start


def one_line(done: subprocess.CompletedProcess[str]) -> str:
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    return lines[0]


def hook(
    ws: Path, command: str = "ls", **env: str
) -> tuple[subprocess.CompletedProcess[str], float]:
    doc = json.dumps(event(ws, "Bash", {"command": command}))
    return run(["hook", "claude-code"], cwd=ws, stdin=doc, env=env)


def store_of(ws: Path) -> str:
    url = str(ws / ".signoff" / "signoff.db")
    with open_store(url) as store:
        store.record("verdict", {"before": True})
    return url


def entries(url: str) -> int:
    with open_store(url) as store:
        return store.last_seq()


# ----------------------------------------------------------------------------- hooks


def test_a_stopped_writer_blocks_the_hook_within_the_default_deadline(ws: Path) -> None:
    url = store_of(ws)
    with stopped(WRITER, url) as pid:
        done, took = hook(ws)
        assert done.returncode == 2 and done.stdout == ""
        line = one_line(done)
        assert DEFAULT_LOCK_WAIT_S <= took < DEFAULT_LOCK_WAIT_S + 10, took
        assert f"{url}.lock" in line and f"process {pid} (" in line and "stopped" in line
        assert f"more than {DEFAULT_LOCK_WAIT_S:g} s" in line and LOCK_WAIT_ENV in line
    done, _ = hook(ws)  # the holder is gone: the next call is judged and recorded
    assert done.returncode == 0, done.stderr
    assert entries(url) == 2


def test_sqlites_own_lock_held_by_another_program_blocks_the_hook(ws: Path) -> None:
    url = store_of(ws)
    with stopped(RAW_SQLITE, url) as pid:
        done, took = hook(ws, **FAST)
        assert done.returncode == 2 and took < 12, took
        line = one_line(done)
        assert "its database lock" in line and f"process {pid} (" in line and "stopped" in line
    assert entries(url) == 1


def test_a_stopped_postgres_writer_blocks_the_hook(ws: Path, tmp_path: Path) -> None:
    db = Backend("postgres", tmp_path)
    try:
        with open_store(db.url) as store:
            store.record("verdict", {"before": True})
        with stopped(WRITER, db.url) as pid:
            done, took = hook(ws, SIGNOFF_DB=db.url, **FAST)
            assert done.returncode == 2 and took < 12, took
            line = one_line(done)
            assert "a lock it needed" in line and "more than 2 s" in line
            assert f"signoff pid {pid}" in line and "idle in transaction" in line
        assert entries(db.url) == 1
        done, _ = hook(ws, SIGNOFF_DB=db.url)
        assert done.returncode == 0, done.stderr
        assert entries(db.url) == 2
    finally:
        db.close()


def test_a_held_anchor_lock_does_not_hold_the_hook_up(ws: Path) -> None:
    url = store_of(ws)
    location = f"sqlite:{os.path.realpath(url)}"
    lock = os.path.join(os.path.dirname(anchor_path(location)), ".lock")
    with stopped(FLOCK, lock):
        done, took = hook(ws, **FAST)
        assert done.returncode == 0 and took < 8, (took, done.stderr)  # anchored later
    assert entries(url) == 2
    with open_store(url) as store:
        store.verify_chain()  # moves the anchor on, now that the lock is free
        anchor = read_anchor(store._keys, location)  # type: ignore[attr-defined]
    assert anchor is not None and anchor.seq == 2


def test_a_stopped_key_file_writer_blocks_a_rotation(tmp_path: Path) -> None:
    done, _ = run(["keys", "show"])
    assert done.returncode == 0
    with stopped(FLOCK, f"{key_file_path()}.lock") as pid:
        done, took = run(["keys", "rotate"], env=FAST)
        assert done.returncode == 2 and took < 12, took
        line = one_line(done)
        assert "the key file's lock" in line and f"process {pid} (" in line


def test_a_bad_deadline_is_refused_by_name(ws: Path) -> None:
    store_of(ws)
    done, _ = hook(ws, **{LOCK_WAIT_ENV: "soon"})
    assert done.returncode == 2 and LOCK_WAIT_ENV in one_line(done)


# ----------------------------------------------------------------------------- the other paths


def test_the_worker_blocks_with_one_line(ws: Path) -> None:
    url = store_of(ws)
    with stopped(WRITER, url) as pid:
        done, took = run(["worker", "--once", "--quiet", "--db", url], env=FAST)
        assert done.returncode == 2 and took < 12, took
        assert f"process {pid} (" in one_line(done)
    done, _ = run(["worker", "--once", "--quiet", "--db", url])
    assert done.returncode == 0, done.stderr


def test_the_http_hook_of_serve_denies_with_the_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from web_helpers import LiveServer

    monkeypatch.setenv(LOCK_WAIT_ENV, "2")
    monkeypatch.setenv("SIGNOFF_HOOK_TOKEN", "t0ken")
    with LiveServer(tmp_path) as server, stopped(WRITER, server.db) as pid:
        before = server.store.last_seq()
        with server.client("t0ken") as client:
            client.timeout = 60
            answer = client.post(
                "/hooks/claude-code", json=event(server.workspace, "Bash", {"command": "ls"})
            ).json()["hookSpecificOutput"]
        assert answer["permissionDecision"] == "deny"
        reason = answer["permissionDecisionReason"]
        assert f"process {pid} (" in reason and "\n" not in reason
        assert server.store.last_seq() == before


async def test_the_mcp_proxy_refuses_the_call_and_sends_nothing_upstream(tmp_path: Path) -> None:
    pytest.importorskip("mcp")
    from mcp import Client

    from mcp_servers import proxy_params, text_of, write_config

    project = tmp_path / "project"
    project.mkdir()
    spec, log = tmp_path / "tools.json", tmp_path / "log.txt"
    spec.write_text("{}")
    upstream = {
        "command": sys.executable,
        "args": [str(HERE / "mcp_upstream.py"), str(spec), str(log)],
    }
    config = write_config(project, {"up": upstream}, tools={"up__note": {"tier": "read"}})
    url = store_of(project)
    async with Client(proxy_params(config, env=FAST)) as client:
        with stopped(WRITER, url) as pid:
            result = await client.call_tool("up__note", {"text": "locked"})
        assert result.is_error and f"process {pid} (" in text_of(result)
        assert "note locked" not in (log.read_text() if log.exists() else "")


# ----------------------------------------------------------------------------- the lock itself


def test_a_waiter_given_up_on_lets_the_lock_go_when_it_gets_it(tmp_path: Path) -> None:
    path = str(tmp_path / "l.lock")
    lock = FileLock(path, "the test's lock")
    try:
        with stopped(FLOCK, path) as pid:
            with pytest.raises(LockTimeout, match=f"process {pid} ") as refused:
                lock.acquire(0.5)
            assert isinstance(refused.value, ConfigurationError)
        # the holder died: the waiter given up on takes the lock and lets it go at once
        lock.acquire(5)
        other = subprocess.run(["flock", "-n", path, "true"], check=False)
        assert other.returncode == 1  # held: by this lock, and only by it
        lock.release()
        other = subprocess.run(["flock", "-n", path, "true"], check=False)
        assert other.returncode == 0
    finally:
        lock.close()


def test_the_accounts_table_waits_as_long_as_the_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from signoff.accounts import Accounts

    monkeypatch.setenv(LOCK_WAIT_ENV, "3")
    accounts = Accounts(str(tmp_path / "s.db"))
    try:
        assert accounts._conn.execute("PRAGMA busy_timeout").fetchone() == (3000,)
    finally:
        accounts.close()
    db = Backend("postgres", tmp_path)
    try:
        accounts = Accounts(db.url)
        try:
            assert accounts._conn.execute("SHOW lock_timeout").fetchone() == ("3s",)
        finally:
            accounts.close()
    finally:
        db.close()
