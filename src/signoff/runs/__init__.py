"""Durable runs: start, pause, resume in any process, and the worker that resumes them.

    Agent          everything needed to drive a run, rebuilt by the run's factory
    Runner         drives one run: start, resume, settle decided calls exactly once
    resume_run     resume one run from its stored state (any process)
    work           the worker loop: resume every run whose requests were decided
    Delegate       the tool that starts a child run of another agent (see `nested`)

`Run` and `PendingCall`, the stored documents, live in `signoff.run_state` (the store
depends on them, not on this package); they are re-exported here. Names load on first
use, so that importing one submodule does not import the runner and the store.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..run_state import PendingCall, Run, RunStatus
    from .agent import Agent, load_agent
    from .nested import Delegate
    from .runner import Runner
    from .worker import resume_run, work

_WHERE = {
    "PendingCall": "..run_state",
    "Run": "..run_state",
    "RunStatus": "..run_state",
    "Agent": ".agent",
    "Delegate": ".nested",
    "load_agent": ".agent",
    "Runner": ".runner",
    "resume_run": ".worker",
    "work": ".worker",
}


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(_WHERE[name], __name__), name)


__all__ = [
    "Agent",
    "Delegate",
    "PendingCall",
    "Run",
    "RunStatus",
    "Runner",
    "load_agent",
    "resume_run",
    "work",
]
