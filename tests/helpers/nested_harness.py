"""A real process driving a three-level nested run, killed with SIGKILL at a chosen point.

    python nested_harness.py DB EFFECTS PHASE BOUNDARY

PHASE: start (starts run_boss: boss -> manager -> clerk) | resume (resumes run_boss).
BOUNDARY: where to die, or "none":
    child_start       the boss's turn is saved, its child run not yet created
    grandchild_waits  the clerk's request is stored; the manager and the boss still running
    after_call        the clerk's approved charge finished; nobody above has its answer
    grandchild_done   the clerk saved its final answer; the manager has not read it
Prints the boss's status on a normal exit. Leases are short (0.5 s) so that a later
process may take the runs over, as it would after a real crash.
"""

from __future__ import annotations

import os
import signal
import sys
from typing import Any

import nested_agents

from signoff.runs.runner import Runner
from signoff.runs.worker import resume_run
from signoff.store import open_store

LEASE = 0.5


def die() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def main(db: str, effects: str, phase: str, boundary: str) -> None:
    store = open_store(db)
    create_run, save_run, finish = store.create_run, store.save_run, store.finish

    def create_then(run: Any, *args: Any, **kwargs: Any) -> Any:
        if boundary == "child_start" and run.parent_id is not None:
            die()  # before the child run exists
        return create_run(run, *args, **kwargs)

    def save_then(run: Any, *args: Any, **kwargs: Any) -> Any:
        saved = save_run(run, *args, **kwargs)
        if boundary == "grandchild_waits" and kwargs.get("requests"):
            die()
        if boundary == "grandchild_done" and saved.status == "finished" and saved.parent_id:
            die()  # the first run to finish is the innermost: the clerk
        return saved

    def finish_then(*args: Any, **kwargs: Any) -> Any:
        done = finish(*args, **kwargs)
        if boundary == "after_call":
            die()
        return done

    store.create_run = create_then  # type: ignore[method-assign]
    store.save_run = save_then  # type: ignore[method-assign]
    store.finish = finish_then  # type: ignore[method-assign]
    worker = f"harness-{os.getpid()}"
    if phase == "start":
        metadata = {"effects": effects}
        runner = Runner(
            store,
            nested_agents.boss(metadata),
            agent_ref="nested_agents:boss",
            worker=worker,
            lease_seconds=LEASE,
        )
        run = runner.start(
            [{"role": "user", "content": "go"}], metadata=metadata, run_id="run_boss"
        )
    else:
        run = resume_run(store, "run_boss", worker=worker, lease_seconds=LEASE)
    print(run.status, run.note or "")
    store.close()


if __name__ == "__main__":
    main(*sys.argv[1:5])
