"""Crash tests: real processes killed with SIGKILL at each boundary of the lifecycle.

No call ever runs twice, no decision is lost, and every interrupted run is either
resumable or shows the call as in doubt for a person to resolve.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from signoff.store import open_store

HARNESS = Path(__file__).parent / "helpers" / "crash_harness.py"
LEASE = 0.5
TRIALS = 3
KILLED = -9


def harness(db: Path, phase: str, boundary: str, effects: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(HARNESS), str(db), phase, boundary, str(effects)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def lines(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


def request_state(db: Path) -> tuple[str, str]:
    store = open_store(str(db))
    try:
        (request,) = store.list_requests()
        return request.id, request.state
    finally:
        store.close()


def resolve(db: Path, outcome: str) -> None:
    store = open_store(str(db))
    try:
        (request,) = store.list_requests()
        store.resolve_in_doubt(request.id, outcome, actor="alice")  # type: ignore[arg-type]
    finally:
        store.close()


def run_status(db: Path) -> str:
    store = open_store(str(db))
    try:
        return store.get_run("run_crash").status
    finally:
        store.close()


@pytest.fixture
def paths(tmp_path: Path) -> tuple[Path, Path]:
    return tmp_path / "signoff.db", tmp_path / "effects.log"


@pytest.mark.parametrize("trial", range(TRIALS))
def test_crash_after_request_is_stored(paths: tuple[Path, Path], trial: int) -> None:
    db, effects = paths
    assert harness(db, "start", "after_request", effects).returncode == KILLED
    assert request_state(db)[1] == "pending"
    time.sleep(LEASE + 0.1)
    assert harness(db, "resume", "none", effects).stdout.startswith("paused")
    assert harness(db, "decide", "none", effects).returncode == 0
    assert harness(db, "resume", "none", effects).stdout.startswith("finished")
    assert len(lines(effects)) == 1


@pytest.mark.parametrize("trial", range(TRIALS))
def test_crash_after_the_decision(paths: tuple[Path, Path], trial: int) -> None:
    db, effects = paths
    assert harness(db, "start", "none", effects).stdout.startswith("paused")
    assert harness(db, "decide", "after_decision", effects).returncode == KILLED
    assert request_state(db)[1] == "approved"  # the decision was not lost
    assert harness(db, "resume", "none", effects).stdout.startswith("finished")
    assert len(lines(effects)) == 1


@pytest.mark.parametrize("trial", range(TRIALS))
def test_crash_after_claim_before_execution(paths: tuple[Path, Path], trial: int) -> None:
    db, effects = paths
    harness(db, "start", "none", effects)
    harness(db, "decide", "none", effects)
    assert harness(db, "resume", "after_claim", effects).returncode == KILLED
    time.sleep(LEASE + 0.1)
    out = harness(db, "resume", "none", effects)
    assert out.stdout.startswith("needs_attention") and "in doubt" in out.stdout
    assert request_state(db)[1] == "in_doubt"
    assert lines(effects) == []  # never silently retried
    resolve(db, "retry")  # a person knows it did not run
    assert harness(db, "resume", "none", effects).stdout.startswith("finished")
    assert len(lines(effects)) == 1


@pytest.mark.parametrize("trial", range(TRIALS))
def test_crash_during_execution(paths: tuple[Path, Path], trial: int) -> None:
    db, effects = paths
    harness(db, "start", "none", effects)
    harness(db, "decide", "none", effects)
    assert harness(db, "resume", "during_execution", effects).returncode == KILLED
    assert len(lines(effects.with_suffix(".log.started"))) == 1
    time.sleep(LEASE + 0.1)
    assert harness(db, "resume", "none", effects).stdout.startswith("needs_attention")
    assert request_state(db)[1] == "in_doubt"
    resolve(db, "failed")
    assert harness(db, "resume", "none", effects).stdout.startswith("finished")
    assert lines(effects) == []
    assert run_status(db) == "finished"


@pytest.mark.parametrize("trial", range(TRIALS))
def test_crash_after_execution_before_finish(paths: tuple[Path, Path], trial: int) -> None:
    db, effects = paths
    harness(db, "start", "none", effects)
    harness(db, "decide", "none", effects)
    assert harness(db, "resume", "after_execution", effects).returncode == KILLED
    assert len(lines(effects)) == 1
    time.sleep(LEASE + 0.1)
    for _ in range(2):  # resuming again and again never runs it twice
        assert harness(db, "resume", "none", effects).stdout.startswith("needs_attention")
    assert len(lines(effects)) == 1
    resolve(db, "done")
    assert harness(db, "resume", "none", effects).stdout.startswith("finished")
    assert len(lines(effects)) == 1
    key = lines(effects)[0].split()[0]
    assert key == request_state(db)[0]  # the tool got the request id as idempotency key
