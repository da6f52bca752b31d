"""Resuming runs in any process: rebuild a run's agent from its import string, resume one
run (`signoff resume`), or every run that becomes ready (`signoff worker`). A framework's
run (Pydantic AI, LangGraph, OpenAI Agents SDK) is rebuilt from its adapter's factory and
resumed through the adapter (`signoff.runs.framework_runs`, imported only for such a run)."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from ..exceptions import (
    AlreadyClaimed,
    ConflictError,
    LeaseLost,
    NotFound,
    StoreUnavailable,
)
from ..outage import Outage
from ..run_state import Run
from ..store import Store
from .agent import load_agent, worker_name
from .runner import Runner

log = logging.getLogger(__name__)


def _framework(run: Run) -> bool:
    return isinstance(run.metadata.get("framework"), str)


def _resume_framework(store: Store, run: Run, worker: str, lease_seconds: float) -> Run:
    from .framework_runs import resume_framework_run

    return resume_framework_run(store, run, worker=worker, lease_seconds=lease_seconds)


def runner_for(store: Store, run: Run, **options: Any) -> Runner:
    """A runner rebuilt from the run's own agent reference (any process)."""
    if not run.agent:
        raise ConflictError(f"run {run.id} records no agent to rebuild (start it with agent_ref)")
    return Runner(store, load_agent(run.agent, run), agent_ref=run.agent, **options)


def resume_run(store: Store, run_id: str, **options: Any) -> Run:
    """Rebuild the run's agent from its import string and resume it (its unfinished child
    runs first). A child run that ends hands its answer up: its parent is resumed next,
    and so on up; the run returned is the named one."""
    found = store.get_run(run_id)
    if _framework(found):  # its adapter resumes it, under this process's lease
        name = options.get("worker") or worker_name()
        seconds = float(options.get("lease_seconds", 300.0))
        claimed = store.claim_run(name, run_id=run_id, lease_seconds=seconds)
        assert claimed is not None
        return _resume_framework(store, claimed, name, seconds)
    run = runner_for(store, found, **options).resume(run_id)
    current = run
    while current.status in ("finished", "failed") and current.parent_id is not None:
        parent = store.get_run(current.parent_id)
        if parent.status in ("finished", "failed"):
            break
        try:
            current = runner_for(store, parent, **options).resume(parent.id)
        except AlreadyClaimed:
            break  # another worker drives the parent now: it reads the answer itself
    return run


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
    report: Callable[[str], None] | None = None,
    sleep: Callable[[float], Any] = time.sleep,
    **options: Any,
) -> int:
    """Resume every run that is ready, until stopped (or, with `once`, until none is).
    With `on_error`, an error resuming one run is handed to it and the loop goes on
    (a run whose agent cannot be rebuilt keeps its lease, so it is tried again only when
    the lease lapses); without it, the error is raised. `also` is more work of the same
    kind, done when no run is ready (the coding-agent sessions deferred until a decision:
    `signoff.adapters.defer`); it returns how many it resumed. `on_run(claimed, result,
    seq)` is told of each run it drove (`seq`: the audit log's position before it
    started), to report what happened.

    Two things never end the loop: a run that is no longer this worker's (its lease was
    taken after it lapsed, a person settled its call: `LeaseLost`), said in one line to
    `report` (default: the log); and a store outage (`StoreUnavailable`): the loop waits
    with backoff (`signoff.outage`, waiting with `sleep`), says once that the store went
    away and once that it is back, then takes the run the outage cut off again first (if
    nobody took it meanwhile). With `once`, an outage is raised instead."""
    name = worker or worker_name()
    say = report or log.warning
    seconds = float(options.get("lease_seconds", 300.0))
    outage = Outage(f"worker {name}", say)
    cut_off: str | None = None  # the run an outage interrupted: taken again first
    resumed = 0
    while stop is None or not stop():
        try:
            # Read the feed's position BEFORE looking for work: a decision that lands
            # between the look and the wait is then an event after it and ends the wait
            # at once (waiting from "now" lost it until the next event or the poll timeout).
            seen = store.last_seq()
            outage.recovered()
            run, cut_off = _next_run(store, name, cut_off, seconds), None
            if run is None:
                more = also(store) if also is not None else 0
                if more:
                    resumed += more
                    continue
                if once:
                    return resumed
                store.wait_for_event(poll, after_seq=seen)
                continue
        except StoreUnavailable as exc:
            if once:
                raise
            sleep(outage.failed(exc))
            continue
        log.info("worker %s claimed run %s (status %s)", name, run.id, run.status)
        try:
            if _framework(run):
                result = _resume_framework(store, run, name, seconds)
            else:
                result = runner_for(store, run, worker=name, **options).continue_claimed(run)
        except StoreUnavailable as exc:
            if once:
                raise
            cut_off = run.id
            sleep(outage.failed(exc))
            continue
        except LeaseLost as exc:
            say(f"worker {name}: stopped driving {run.id}: {exc}; going on with other runs")
            continue
        except Exception as exc:
            if on_error is None:
                if _refused(exc):  # on the record; the lease keeps it until it lapses
                    log.warning("worker %s: %s", name, exc)
                    continue
                raise
            on_error(run, exc)
            continue
        resumed += 1
        if on_run is not None:
            on_run(run, result, seen)
    return resumed


def _next_run(store: Store, name: str, cut_off: str | None, seconds: float) -> Run | None:
    """The next run to drive, leased to this worker: the one an outage cut off if it is
    still to be had, else the oldest ready one (None: none is). Stale requests expire and
    lapsed claims go in doubt first."""
    store.expire_stale()
    store.sweep_leases()
    run = _take_again(store, name, cut_off, seconds) if cut_off else None
    return run or store.claim_run(name, lease_seconds=seconds)


def _take_again(store: Store, name: str, run_id: str, seconds: float) -> Run | None:
    """The run an outage cut off, leased to this worker again; None if it is another's
    now (its lease lapsed during the outage and someone took it) or it has ended."""
    try:
        return store.claim_run(name, run_id=run_id, lease_seconds=seconds)
    except (ConflictError, NotFound) as exc:
        log.info("worker %s: not taking %s again: %s", name, run_id, exc)
        return None


def _refused(exc: Exception) -> bool:
    from .framework_runs import NotResumed

    return isinstance(exc, NotResumed)


__all__ = ["resume_run", "runner_for", "work"]
