"""Eight `signoff worker` processes and one ready run: the approved call runs once."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from signoff.approvals import decide
from signoff.models import Decision
from signoff.runs.runner import Runner
from store_helpers import Backend

HELPERS = Path(__file__).parent / "helpers"
WORKERS = 8


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
def test_eight_workers_one_ready_run(kind: str, tmp_path: Path) -> None:
    sys.path.insert(0, str(HELPERS))
    try:
        import race_agent
    finally:
        sys.path.remove(str(HELPERS))
    backend = Backend(kind, tmp_path)
    store = backend.open()
    effects = tmp_path / "effects.log"
    metadata = {"effects": str(effects)}
    run = Runner(store, race_agent.build(metadata), agent_ref="race_agent:build").start(
        [{"role": "user", "content": "pay"}], metadata=metadata
    )
    assert run.status == "paused"
    decide(store, run.waiting_on[0], Decision("approve"), actor="alice")
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(HELPERS), os.environ.get("PYTHONPATH", "")]),
        "SIGNOFF_DB": backend.url,
    }
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "signoff", "worker", "--once"],
            env=env,
            cwd=tmp_path,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(WORKERS)
    ]
    outputs = [p.communicate(timeout=120) for p in procs]
    assert all(p.returncode == 0 for p in procs), outputs
    resumed = sum(int(out.split("resumed ")[1].split()[0]) for out, _ in outputs)
    assert resumed >= 1
    lines = effects.read_text().splitlines()
    assert len(lines) == 1, lines
    assert lines[0].split()[1] == run.waiting_on[0]  # idempotency key = request id
    assert store.get_run(run.id).status == "finished"
    backend.close()


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
def test_worker_wakes_for_a_decision_made_while_it_looked(
    kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The decision lands just after the worker's look found nothing ready: the worker must
    # not sleep through it until the poll timeout (30 s here).
    from signoff.runs.worker import work
    from web_helpers import SENT, start_run

    backend = Backend(kind, tmp_path)
    try:
        store = backend.open()
        run = start_run(store, tmp_path, {"to": "carol", "body": "hi"})
        looks: list[object] = []
        real_claim_run = store.claim_run

        def claim_run(*args: object, **kwargs: object) -> object:
            found = real_claim_run(*args, **kwargs)  # type: ignore[arg-type]
            if not looks:
                decide(store, run.waiting_on[0], Decision("approve"), actor="alice")
            looks.append(found)
            return found

        monkeypatch.setattr(store, "claim_run", claim_run)
        SENT.clear()
        started = time.monotonic()
        resumed = work(store, poll=30.0, stop=lambda: bool(looks) and looks[-1] is not None)
        assert resumed == 1 and looks[0] is None and [s["to"] for s in SENT] == ["carol"]
        assert time.monotonic() - started < 15, "the worker slept through the decision"
        assert store.get_run(run.id).status == "finished"
    finally:
        backend.close()
