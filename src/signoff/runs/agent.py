"""Durable runs: pause means "do not execute"; resume means "settle the calls, go on".

A run is a chat-completions transcript stored one row per message (append-only: a pause
writes only the new messages) plus a small document: status, the calls of the current turn
and what became of each, refusal counters, and how to rebuild its agent in any process
(`package.module:factory`, as uvicorn and celery name their apps).

    start/resume --> model reply with tool calls --> judge every call
        allow/notify: run now, keep the result        deny: a refusal is the result
        ask: store a request; the run is paused until every request is decided
    settle (any process): approved -> claim -> run (idempotency key = request id) -> finish
        rejected/skipped/answered/expired -> a synthesized result with the reason or answer
    all settled -> tool results appended in call order -> the model is called again

The model never re-decides an approved call: it is executed from the stored payload, and
a call that finished before a crash is never run again (its stored result is reused).
"""

from __future__ import annotations

import importlib
import os
import re
import socket
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from ..exceptions import ConfigurationError, InvalidInput
from ..gate import Previewer, default_preview
from ..models import ToolCall, unicode_problem
from ..policy import Policy
from ..run_state import PendingCall, Run, RunStatus, storable

if TYPE_CHECKING:
    from ..llm.base import Model
    from ..reviewer import Reviewer


@dataclass
class Agent:
    """Everything needed to drive a run; rebuilt in any process by the run's factory."""

    model: Model
    tools: Mapping[str, Callable[..., Any]]
    policy: Policy
    tool_specs: list[dict[str, Any]] = field(default_factory=list)
    previewer: Previewer = default_preview
    approvers: tuple[str, ...] = ()
    on_text: Callable[[str], None] | None = None
    # Runs a notify-tier call and returns (result, snapshot) where the snapshot, if any,
    # has `to_json()` and is kept for review after, and for `signoff revert`.
    run_recorded: Callable[[ToolCall, str | None], tuple[Any, Any]] | None = None
    # The reviewer model of auto mode; None: built from the policy's `[reviewer]` settings.
    reviewer: Reviewer | None = None


def guarding_store(agent: Agent, store: object) -> Agent:
    """The agent with its store's files among the state its policy protects: the store
    holds every run's transcript and decisions (a parent's, a sibling's), and wherever it
    lives (`open_store("signoff.db")`, a child's workspace elsewhere) no agent reads or
    changes it. A copy when something is added; the agent given is left as it was."""
    policy = agent.policy.protecting_store(store)
    return agent if policy is agent.policy else replace(agent, policy=policy)


# An importable name, `package.module:attr`: what a run stores to rebuild its agent (never code)
REF = re.compile(r"[A-Za-z_][\w.]*:[A-Za-z_]\w*")


def import_ref(ref: object, what: str) -> Any:
    """The object named by `package.module:attr` (ConfigurationError, naming `what`, for
    anything else, or when it does not import)."""
    if not isinstance(ref, str) or not REF.fullmatch(ref):
        raise ConfigurationError(f"{what}: {ref!r} is not of the form package.module:attr")
    module_name, _, attr = ref.partition(":")
    try:
        module = importlib.import_module(module_name)
        return getattr(module, attr)
    except Exception as exc:  # ImportError, AttributeError, or the module's own failure
        raise ConfigurationError(
            f"{what}: cannot import {ref!r}: {type(exc).__name__}: {exc}"
        ) from exc


def load_agent(ref: str, run: Run) -> Agent:
    """Import `package.module:factory` and call it with the run's metadata."""
    module_name, _, attr = ref.partition(":")
    if not module_name or not attr:
        raise ConfigurationError(f"agent reference {ref!r} is not of the form package.module:attr")
    try:
        module = importlib.import_module(module_name)
        factory = getattr(module, attr)
    except (ImportError, AttributeError) as exc:
        raise ConfigurationError(f"cannot import the agent {ref!r} of run {run.id}: {exc}") from exc
    agent = factory(dict(run.metadata))
    if not isinstance(agent, Agent):
        raise ConfigurationError(f"{ref} returned {type(agent).__name__}, not a signoff Agent")
    return agent


def worker_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def tool_message(call_id: str, content: str) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": content}


def parse_tool_calls(message: Mapping[str, Any]) -> list[PendingCall]:
    """The calls of an assistant message; malformed arguments are kept, never run. Read
    the model's own message, not its `storable` copy: a call with invalid Unicode is
    refused, not run with U+FFFD in its place."""
    text = message.get("content")
    intent = text.strip()[:2000] if isinstance(text, str) and text.strip() else None
    intent = storable(intent)
    pending = []
    for index, raw in enumerate(message.get("tool_calls") or ()):
        call_id = storable(str(raw.get("id") or f"call_{index}"))
        name = storable(str((raw.get("function") or {}).get("name") or ""))
        try:
            call = ToolCall.from_openai(raw)
            if unicode_problem(call.id):
                raise InvalidInput(f"tool call {name!a}: id: {unicode_problem(call.id)}")
        except InvalidInput as exc:
            pending.append(
                PendingCall(
                    call_id,
                    name,
                    None,
                    "deny",
                    outcome="invalid",
                    content=f"Tool call {name or '?'} was not run: {exc}",
                )
            )
            continue
        pending.append(PendingCall(call_id, name, call, intent=intent))
    return pending


__all__ = [
    "REF",
    "Agent",
    "PendingCall",
    "Run",
    "RunStatus",
    "import_ref",
    "load_agent",
    "parse_tool_calls",
    "storable",
    "tool_message",
    "worker_name",
]
