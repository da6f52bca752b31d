"""`signoff worker` resumes a framework's run (Pydantic AI, LangGraph, OpenAI Agents SDK)
once every request it waits on is decided.

The adapter names a factory when it is made (`factory="app.agents:build"`): an importable
name, never code, kept in the run's metadata. The worker that takes the run's lease
imports it, calls it with no arguments, and gets back `(agent, adapter)`: the compiled
graph and its `SignoffMiddleware`, or the agent and its `Signoff`. Then it resumes the run
through the adapter's own resume path, on the worker's store (decisions are read from
there, never from a framework's resume value) and under the worker's lease (two workers
never resume one run: the store leases it to one).

A factory that is not `package.module:attr`, does not import, fails or returns something
else is refused: the worker says why, the refusal goes on the record
(`run.not_resumed`), and the run stays paused, leased to that worker until the lease
lapses (then it is tried again: a fixed deployment picks it up).
"""

from __future__ import annotations

import asyncio
import importlib
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from ..exceptions import ConfigurationError
from ..kinds import RUN_NOT_RESUMED
from ..run_state import Run
from ..store import Store
from .agent import import_ref
from .lease import LeaseKeeper

# framework -> (its adapter's module, the adapter's class, what the agent is)
ADAPTERS: dict[str, tuple[str, str, str]] = {
    "langgraph": ("signoff.adapters.langgraph", "SignoffMiddleware", "a compiled graph"),
    "pydantic_ai": ("signoff.adapters.pydantic_ai", "Signoff", "a pydantic_ai Agent"),
    "openai_agents": ("signoff.adapters.openai_agents", "Signoff", "an agents Agent"),
}


class NotResumed(ConfigurationError):
    """A framework's run the worker cannot resume (on the record; the run stays paused)."""


def is_framework_run(run: Run) -> bool:
    return isinstance(run.metadata.get("framework"), str)


def left_alone(store: Store, *, limit: int = 1000) -> list[Run]:
    """The paused framework runs that name no factory: only their own code resumes them."""
    return [
        r
        for r in store.list_runs(status="paused", limit=limit)
        if is_framework_run(r) and not r.metadata.get("factory")
    ]


def _agent_ok(framework: str, agent: Any) -> bool:
    if framework == "langgraph":
        return callable(getattr(agent, "invoke", None)) and callable(
            getattr(agent, "get_state", None)
        )
    if framework == "pydantic_ai":
        from pydantic_ai import Agent as PydanticAgent

        return isinstance(agent, PydanticAgent)
    from agents import Agent as SdkAgent

    return isinstance(agent, SdkAgent)


def rebuild(run: Run) -> tuple[Any, Any]:
    """(agent, adapter) from the run's factory; NotResumed, saying why, otherwise."""
    framework = run.metadata.get("framework")
    factory = run.metadata.get("factory")
    where = f"run {run.id} ({framework})"
    if framework not in ADAPTERS:
        known = ", ".join(sorted(ADAPTERS))
        raise NotResumed(f"{where}: not a framework signoff resumes (one of {known})")
    module_name, class_name, agent_kind = ADAPTERS[framework]
    try:
        build = import_ref(factory, f"{where}: factory")
    except ConfigurationError as exc:
        raise NotResumed(str(exc)) from exc
    if not callable(build):
        raise NotResumed(f"{where}: factory {factory} is {type(build).__name__}, not a function")
    adapter_type = getattr(importlib.import_module(module_name), class_name)
    try:
        built = build()
    except Exception as exc:
        raise NotResumed(f"{where}: factory {factory} failed: {type(exc).__name__}: {exc}") from exc
    wanted = f"(agent, {module_name}.{class_name})"
    if not (isinstance(built, tuple) and len(built) == 2):
        raise NotResumed(
            f"{where}: factory {factory} returned {type(built).__name__}, not {wanted}"
        )
    agent, adapter = built
    if not isinstance(adapter, adapter_type):
        raise NotResumed(
            f"{where}: factory {factory} returned {type(adapter).__name__} as its adapter, "
            f"not {module_name}.{class_name}"
        )
    if not _agent_ok(framework, agent):
        raise NotResumed(
            f"{where}: factory {factory} returned {type(agent).__name__} as its agent, "
            f"not {agent_kind}"
        )
    return agent, adapter


def _drive(framework: str, agent: Any, adapter: Any, thread: str) -> bool:
    """Resume the thread through the adapter's own path; False if nothing was resumed."""
    if framework == "langgraph":  # the middleware's resume is synchronous
        return adapter.resume(agent, thread=thread) is not None
    outcome = asyncio.run(adapter.resume(agent, thread=thread))
    return outcome is not None


def resume_framework_run(
    store: Store,
    run: Run,
    *,
    worker: str,
    lease_seconds: float,
    rebuilt: Callable[[Run], tuple[Any, Any]] = rebuild,
) -> Run:
    """Resume a framework's run leased to `worker` (by `claim_run`); the run as it is
    after. NotResumed (recorded) when its factory does not give an agent and adapter."""
    framework = str(run.metadata.get("framework"))
    if run.status != "paused":  # running, and its driver's lease lapsed: it died mid-run
        note = (
            f"the process driving this {framework} run stopped without a report (its lease "
            "lapsed); resume it with its adapter once a person has looked"
        )
        return store.save_run(
            replace(run, status="needs_attention", note=note),
            [],
            expected_version=run.version,
            worker=worker,
        )
    try:
        if not isinstance(run.thread, str) or not run.thread:
            raise NotResumed(f"run {run.id} ({framework}): it records no thread to resume")
        agent, adapter = rebuilt(run)
    except NotResumed as exc:
        refuse(store, run, worker, str(exc))
        raise
    guard = adapter.guard
    if guard.store is not store:  # the worker's store: where the run and its decisions are
        guard.use_store(store)
    guard.worker = worker
    guard.lease_seconds = lease_seconds
    guard.holding = run.id  # leased by `claim_run` already: not claimed a second time
    with LeaseKeeper(store, run.id, worker, lease_seconds):  # renewed while it runs
        drove = _drive(framework, agent, adapter, run.thread)
    if not drove:
        why = f"run {run.id} ({framework}): its framework has no pause to resume"
        refuse(store, run, worker, why)
        raise NotResumed(why)
    store.release_run(run.id, worker)  # usually let go by the save that stopped it
    return store.get_run(run.id)


def refuse(store: Store, run: Run, worker: str, why: str) -> None:
    store.record(
        RUN_NOT_RESUMED,
        {
            "framework": run.metadata.get("framework"),
            "factory": run.metadata.get("factory"),
            "worker": worker,
            "why": why,
        },
        run_id=run.id,
        actor=worker,
    )


__all__ = [
    "ADAPTERS",
    "NotResumed",
    "is_framework_run",
    "left_alone",
    "rebuild",
    "refuse",
    "resume_framework_run",
]
