"""Resuming runs in any process: rebuild a run's agent from its import string, resume one
run (`signoff resume`), or every run that becomes ready (`signoff worker`)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from ..exceptions import ConflictError
from ..run_state import Run
from ..store import Store
from .agent import load_agent, worker_name
from .runner import Runner

log = logging.getLogger(__name__)


def runner_for(store: Store, run: Run, **options: Any) -> Runner:
    """A runner rebuilt from the run's own agent reference (any process)."""
    if not run.agent:
        raise ConflictError(f"run {run.id} records no agent to rebuild (start it with agent_ref)")
    return Runner(store, load_agent(run.agent, run), agent_ref=run.agent, **options)


def resume_run(store: Store, run_id: str, **options: Any) -> Run:
    """Rebuild the run's agent from its import string and resume it."""
    return runner_for(store, store.get_run(run_id), **options).resume(run_id)


def work(
    store: Store,
    *,
    worker: str | None = None,
    once: bool = False,
    poll: float = 1.0,
    stop: Any = None,
    on_error: Callable[[Run, Exception], None] | None = None,
    also: Callable[[Store], int] | None = None,
    on_run: Callable[[Run, Run, int], None] | None = None,
    **options: Any,
) -> int:
    """Resume every run that is ready, until stopped (or, with `once`, until none is).
    With `on_error`, an error resuming one run is handed to it and the loop goes on
    (a run whose agent cannot be rebuilt keeps its lease, so it is tried again only when
    the lease lapses); without it, the error is raised. `also` is more work of the same
    kind, done when no run is ready (the coding-agent sessions deferred until a decision:
    `signoff.adapters.defer`); it returns how many it resumed. `on_run(claimed, result,
    seq)` is told of each run it drove (`seq`: the audit log's position before it
    started), to report what happened."""
    name = worker or worker_name()
    resumed = 0
    while stop is None or not stop():
        # Read the feed's position BEFORE looking for work: a decision that lands between
        # the look and the wait is then an event after it and ends the wait at once
        # (waiting from "now" lost it until the next event or the poll timeout).
        seen = store.last_seq()
        store.expire_stale()
        store.sweep_leases()
        run = store.claim_run(name, lease_seconds=options.get("lease_seconds", 300.0))
        if run is None:
            more = also(store) if also is not None else 0
            if more:
                resumed += more
                continue
            if once:
                return resumed
            store.wait_for_event(poll, after_seq=seen)
            continue
        log.info("worker %s claimed run %s (status %s)", name, run.id, run.status)
        try:
            result = runner_for(store, run, worker=name, **options).continue_claimed(run)
        except Exception as exc:
            if on_error is None:
                raise
            on_error(run, exc)
            continue
        resumed += 1
        if on_run is not None:
            on_run(run, result, seen)
    return resumed


__all__ = ["resume_run", "runner_for", "work"]
