"""`signoff serve` resumes runs itself: a real server subprocess, a decision through its API,
and the run finishes with no other process; with a `signoff worker` beside it every approved
call still runs once; `--no-worker` leaves the run paused and its page says how to resume it.

Waits below are deadlines against a hang, never speed checks."""

from __future__ import annotations

import html
import os
import re
import shlex
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from serve_agent import AGENT_REF, make_agent
from signoff.accounts import Accounts
from signoff.runs.runner import Runner
from signoff.store import Store, open_store

ROOT = Path(__file__).resolve().parent.parent
DEADLINE = 60.0


def env() -> dict[str, str]:
    out = dict(os.environ)
    out.pop("SIGNOFF_DB", None)
    out["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), str(ROOT / "tests")])
    return out


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def wait_until(check: Callable[[], bool], what: str, proc: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + DEADLINE
    while not check():
        if proc.poll() is not None:
            raise AssertionError(f"{what}: the process ended: {proc.communicate()}")
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} did not happen within {DEADLINE:g} s (a hang)")
        time.sleep(0.05)


def stop(proc: subprocess.Popen[str]) -> tuple[str, str]:
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=30)
    assert "Traceback" not in err, err
    return out, err


@contextmanager
def serving(db: str, workspace: Path, *extra: str) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    port = free_port()
    argv = [sys.executable, "-m", "signoff", "serve", "--db", db, "--workspace", str(workspace)]
    argv += ["--port", str(port), "--log-level", "warning", *extra]
    proc = subprocess.Popen(
        argv, env=env(), text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    url = f"http://127.0.0.1:{port}"

    def up() -> bool:
        try:
            return httpx.get(f"{url}/api/health", timeout=2).status_code == 200
        except httpx.HTTPError:
            return False

    try:
        wait_until(up, "the server answering", proc)
        yield url, proc
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()


def start_run(store: Store, log: Path, to: str) -> tuple[str, str]:
    metadata = {"log": str(log), "to": to}
    run = Runner(store, make_agent(metadata), agent_ref=AGENT_REF).start(
        [{"role": "user", "content": f"send it to {to}"}], metadata=metadata
    )
    return run.id, run.waiting_on[0]


@pytest.fixture
def setup(tmp_path: Path) -> Iterator[tuple[str, Path, Store, dict[str, str]]]:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    db = str(tmp_path / "signoff.db")
    store = open_store(db)
    accounts = Accounts(db)
    auth = {"Authorization": f"Bearer {accounts.add('alice', 'approver')}"}
    accounts.close()
    yield db, workspace, store, auth
    store.close()


def approve(url: str, auth: dict[str, str], rid: str) -> str:
    """Approve through the API; the answer's next step."""
    answer = httpx.post(
        f"{url}/api/requests/{rid}/decide", headers=auth, json={"kind": "approve"}, timeout=10
    )
    assert answer.status_code == 200, answer.text
    next_step: str = answer.json()["what_next"]
    return next_step


def test_serve_resumes_an_approved_run_by_itself(
    setup: tuple[str, Path, Store, dict[str, str]],
) -> None:
    db, workspace, store, auth = setup
    log = workspace / "sent.log"
    run_id, rid = start_run(store, log, "carol")
    with serving(db, workspace) as (url, proc):
        page = httpx.get(f"{url}/requests/{rid}", headers=auth).text
        assert "paused, waiting on this decision" in page
        assert approve(url, auth, rid) == f"It will run. This server resumes run {run_id} now."
        wait_until(lambda: store.get_run(run_id).status == "finished", "the run finishing", proc)
        page = httpx.get(f"{url}/requests/{rid}", headers=auth).text
        out, _ = stop(proc)
    assert proc.returncode in (0, -signal.SIGTERM)  # uvicorn re-raises the signal it caught
    assert "runs resume here" in out
    assert log.read_text().splitlines() == [f"carol {rid}"]
    assert store.load_messages(run_id)[-1]["content"] == "Done: sent to carol"
    # the page tells the story: the result, the run's state, the model's next words
    assert 'id="run-status">finished<' in page
    assert "Done: sent to carol" in page and "sent to carol" in page


def test_serve_and_a_worker_run_each_approved_call_once(
    setup: tuple[str, Path, Store, dict[str, str]],
) -> None:
    db, workspace, store, auth = setup
    log = workspace / "sent.log"
    runs = [start_run(store, log, f"person{i}") for i in range(8)]
    worker = subprocess.Popen(
        [sys.executable, "-m", "signoff", "worker", "--db", db, "--poll", "0.2"],
        env=env(),
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        with serving(db, workspace) as (url, proc):
            for _, rid in runs:
                approve(url, auth, rid)
            wait_until(
                lambda: all(store.get_run(r).status == "finished" for r, _ in runs),
                "every run finishing",
                proc,
            )
            stop(proc)
    finally:
        stop(worker)
    lines = sorted(log.read_text().splitlines())
    assert lines == sorted(f"person{i} {rid}" for i, (_, rid) in enumerate(runs))


def test_no_worker_leaves_the_run_and_its_page_says_how_to_resume(
    setup: tuple[str, Path, Store, dict[str, str]], tmp_path: Path
) -> None:
    db, workspace, store, auth = setup
    log = workspace / "sent.log"
    run_id, rid = start_run(store, log, "carol")
    with serving(db, workspace, "--no-worker") as (url, proc):
        approve(url, auth, rid)
        page = httpx.get(f"{url}/requests/{rid}", headers=auth).text
        out, _ = stop(proc)
    assert "--no-worker" in out
    assert store.get_run(run_id).status == "paused" and not log.exists()
    assert "This server does not resume runs" in page
    hint = re.search(r'<code id="resume-command">(signoff resume [^<]+)</code>', page)
    assert hint is not None, page
    # the hint works pasted into a shell somewhere else
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    argv = [sys.executable, "-m", "signoff", *shlex.split(html.unescape(hint.group(1)))[1:]]
    done = subprocess.run(argv, cwd=elsewhere, env=env(), text=True, capture_output=True)
    assert done.returncode == 0, done.stderr
    assert store.get_run(run_id).status == "finished"
    assert log.read_text().splitlines() == [f"carol {rid}"]


def test_a_run_the_server_cannot_rebuild_is_said_on_its_page(
    setup: tuple[str, Path, Store, dict[str, str]],
) -> None:
    db, workspace, store, auth = setup
    log = workspace / "sent.log"
    metadata = {"log": str(log), "to": "carol"}
    run = Runner(store, make_agent(metadata), agent_ref="no_such_module:make_agent").start(
        [{"role": "user", "content": "send it"}], metadata=metadata
    )
    rid = run.waiting_on[0]
    with serving(db, workspace) as (url, proc):
        approve(url, auth, rid)

        def said() -> bool:
            return (
                "this server cannot resume it"
                in httpx.get(f"{url}/requests/{rid}", headers=auth).text
            )

        wait_until(said, "the page saying the run cannot be resumed here", proc)
        page = httpx.get(f"{url}/requests/{rid}", headers=auth).text
        _, err = stop(proc)
    assert 'data-moving=""' in page  # the page stops polling: nothing will happen here
    assert "No module named" in page and "PYTHONPATH" in page
    assert f"could not resume run {run.id}" in err
    assert store.get_run(run.id).status == "paused" and not log.exists()
    # the stopped server let the run go: resumed elsewhere (here, where it imports) at once
    assert Runner(store, make_agent(metadata)).resume(run.id).status == "finished"
    assert log.read_text().splitlines() == [f"carol {rid}"]
