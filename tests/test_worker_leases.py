"""Leases of real `signoff worker` processes, with a lease of one second: a tool that runs
longer keeps its lease (renewed while it runs: nothing goes in doubt, the call runs once);
a worker whose lease was taken while it was stopped says so and carries on with other runs;
a worker killed with -9 renews nothing, so its call goes in doubt once the lease lapses.

Waits below are deadlines against a hang, never speed checks."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from signoff.approvals import decide
from signoff.models import Decision
from signoff.runs.runner import Runner
from signoff.store import Store, open_store

HELPERS = Path(__file__).parent / "helpers"
LEASE = "1"  # seconds: the lease every worker here asks for
DEADLINE = 60.0


def _slow_agent() -> object:
    sys.path.insert(0, str(HELPERS))
    try:
        import slow_agent
    finally:
        sys.path.remove(str(HELPERS))
    return slow_agent


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    opened = open_store(str(tmp_path / "signoff.db"))
    yield opened
    opened.close()


def start_run(store: Store, tmp_path: Path, seconds: float, name: str = "effects.log") -> str:
    agent = _slow_agent()
    metadata = {"effects": str(tmp_path / name), "seconds": seconds}
    run = Runner(store, agent.build(metadata), agent_ref="slow_agent:build").start(  # type: ignore[attr-defined]
        [{"role": "user", "content": "pay"}], metadata=metadata
    )
    assert run.status == "paused"
    return run.id


def worker(tmp_path: Path, *extra: str) -> subprocess.Popen[str]:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(HELPERS), os.environ.get("PYTHONPATH", "")]),
        "SIGNOFF_DB": str(tmp_path / "signoff.db"),
    }
    return subprocess.Popen(
        [sys.executable, "-m", "signoff", "worker", "--lease", LEASE, "--poll", "0.2", *extra],
        env=env,
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def wait_for(check: Callable[[], bool], what: str, *procs: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + DEADLINE
    while not check():
        for proc in procs:
            if proc.poll() is not None:
                raise AssertionError(f"{what}: a worker ended: {proc.communicate()}")
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} did not happen within {DEADLINE:g} s (a hang)")
        time.sleep(0.05)


def lines(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


def stop(proc: subprocess.Popen[str]) -> str:
    """SIGINT (Ctrl-C), then what it wrote to stderr."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    return err


def kinds_of(store: Store, request_id: str) -> list[str]:
    return [e.kind for e in store.events_after(0, limit=1000) if e.request_id == request_id]


def test_a_tool_longer_than_the_lease_keeps_it(store: Store, tmp_path: Path) -> None:
    run_id = start_run(store, tmp_path, seconds=4.0)  # four leases long
    request_id = store.get_run(run_id).waiting_on[0]
    workers = [worker(tmp_path), worker(tmp_path)]  # the other one sweeps and looks all along
    try:
        decide(store, request_id, Decision("approve"), actor="alice")
        wait_for(
            lambda: store.get_run(run_id).status in ("finished", "needs_attention"),
            "the run ending",
            *workers,
        )
        assert store.get_run(run_id).status == "finished", store.get_run(run_id).note
        assert store.get_request(request_id).state == "finished"
        assert "request.in_doubt" not in kinds_of(store, request_id)
        done = [line for line in lines(tmp_path / "effects.log") if line.startswith("done")]
        assert [line.split()[2] for line in done] == [request_id]
        assert all(w.poll() is None for w in workers)
    finally:
        errors = [stop(w) for w in workers]
    assert not any("Traceback" in err for err in errors), errors


def test_a_worker_whose_lease_was_taken_carries_on(store: Store, tmp_path: Path) -> None:
    first = start_run(store, tmp_path, seconds=3.0)
    request_id = store.get_run(first).waiting_on[0]
    stopped = worker(tmp_path)
    other: subprocess.Popen[str] | None = None
    try:
        decide(store, request_id, Decision("approve"), actor="alice")
        effects = tmp_path / "effects.log"
        wait_for(lambda: bool(lines(effects)), "the tool starting", stopped)
        stopped.send_signal(signal.SIGSTOP)  # its lease lapses; nothing renews it
        time.sleep(1.5)
        other = worker(tmp_path)  # finds the lapsed lease: the call goes in doubt
        wait_for(
            lambda: (
                store.get_request(request_id).state == "in_doubt"
                and store.get_run(first).status == "needs_attention"
            ),
            "the call going in doubt",
            other,
        )
        other.kill()
        other.communicate()
        stopped.send_signal(signal.SIGCONT)  # its tool ends; the run is no longer its own
        wait_for(
            lambda: any(line.startswith("done") for line in lines(effects)),
            "the tool ending",
            stopped,
        )
        time.sleep(1.0)
        assert stopped.poll() is None, stopped.communicate()
        # the run stays with the person; the worker goes on with the next one
        assert store.get_run(first).status == "needs_attention"
        second = start_run(store, tmp_path, seconds=0.0, name="second.log")
        decide(store, store.get_run(second).waiting_on[0], Decision("approve"), actor="alice")
        wait_for(lambda: store.get_run(second).status == "finished", "the next run", stopped)
    finally:
        if other is not None and other.poll() is None:
            other.kill()
            other.communicate()
        stopped.send_signal(signal.SIGCONT)
        err = stop(stopped)
    assert "Traceback" not in err, err
    assert first in err and "saved by someone else" not in err, err


def test_a_killed_worker_renews_nothing(store: Store, tmp_path: Path) -> None:
    run_id = start_run(store, tmp_path, seconds=30.0)
    request_id = store.get_run(run_id).waiting_on[0]
    killed = worker(tmp_path)
    other: subprocess.Popen[str] | None = None
    try:
        decide(store, request_id, Decision("approve"), actor="alice")
        effects = tmp_path / "effects.log"
        wait_for(lambda: bool(lines(effects)), "the tool starting", killed)
        killed.kill()  # kill -9: its renewals end with it
        killed.communicate()
        other = worker(tmp_path)
        # the call goes in doubt, then (a separate write) its run waits for a person
        wait_for(
            lambda: (
                store.get_request(request_id).state == "in_doubt"
                and store.get_run(run_id).status == "needs_attention"
            ),
            "the call going in doubt and its run to a person",
            other,
        )
        assert not any(line.startswith("done") for line in lines(effects))
    finally:
        if other is not None:
            stop(other)
