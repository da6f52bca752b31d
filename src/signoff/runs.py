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
import socket
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from .exceptions import ConfigurationError, InvalidInput
from .gate import Previewer, default_preview
from .models import SCHEMA_VERSION, ToolCall, Verdict, check_version, unicode_problem
from .policy import Policy

if TYPE_CHECKING:
    from .agent import Model

RunStatus = Literal["running", "paused", "finished", "failed", "needs_attention"]
Settled = Literal[
    "ran", "denied", "rejected", "skipped", "answered", "expired", "failed", "invalid"
]

REFUSALS: frozenset[str] = frozenset({"denied", "rejected", "invalid", "expired"})


@dataclass(frozen=True, slots=True)
class PendingCall:
    """One tool call of the current turn and what became of it (content = tool result)."""

    call_id: str
    name: str
    call: ToolCall | None  # None when the model's arguments were not valid JSON
    effect: str = ""
    request_id: str | None = None
    outcome: Settled | None = None
    content: str | None = None
    verdict: Verdict | None = None  # kept only until the request is stored
    intent: str | None = None  # what the model said it was doing, shown to the reviewer

    def to_json(self) -> dict[str, Any]:
        return {
            "call_id": self.call_id,
            "name": self.name,
            "call": self.call.to_json() if self.call else None,
            "effect": self.effect,
            "request_id": self.request_id,
            "outcome": self.outcome,
            "content": self.content,
            "verdict": self.verdict.to_json() if self.verdict else None,
            "intent": self.intent,
        }

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> PendingCall:
        return cls(
            call_id=doc["call_id"],
            name=doc["name"],
            call=ToolCall.from_json(doc["call"]) if doc.get("call") else None,
            effect=doc.get("effect", ""),
            request_id=doc.get("request_id"),
            outcome=doc.get("outcome"),
            content=doc.get("content"),
            verdict=Verdict.from_json(doc["verdict"]) if doc.get("verdict") else None,
            intent=doc.get("intent"),
        )


@dataclass(frozen=True, slots=True)
class Run:
    id: str
    status: RunStatus = "running"
    tenant: str = "default"
    thread: str | None = None
    agent: str | None = None  # import string of the factory that rebuilds the agent
    created_at: float = 0.0
    updated_at: float = 0.0
    message_count: int = 0
    version: int = 0  # compare-and-set guard: every save bumps it
    pending: tuple[PendingCall, ...] = ()
    consecutive_refusals: int = 0
    total_refusals: int = 0
    note: str | None = None  # why it stopped or needs attention; the final answer
    metadata: Mapping[str, Any] = field(default_factory=dict)

    @property
    def waiting_on(self) -> list[str]:
        return [p.request_id for p in self.pending if p.request_id and p.content is None]

    def to_json(self) -> dict[str, Any]:
        return {
            "v": SCHEMA_VERSION,
            "id": self.id,
            "status": self.status,
            "tenant": self.tenant,
            "thread": self.thread,
            "agent": self.agent,
            "created_at": self.created_at,
            "updated_at": self.updated_at,
            "message_count": self.message_count,
            "version": self.version,
            "pending": [p.to_json() for p in self.pending],
            "consecutive_refusals": self.consecutive_refusals,
            "total_refusals": self.total_refusals,
            "note": self.note,
            "metadata": dict(self.metadata),
        }

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> Run:
        check_version(doc, "run")
        return cls(
            id=doc["id"],
            status=doc.get("status", "running"),
            tenant=doc.get("tenant", "default"),
            thread=doc.get("thread"),
            agent=doc.get("agent"),
            created_at=doc.get("created_at", 0.0),
            updated_at=doc.get("updated_at", 0.0),
            message_count=doc.get("message_count", 0),
            version=doc.get("version", 0),
            pending=tuple(PendingCall.from_json(p) for p in doc.get("pending", ())),
            consecutive_refusals=doc.get("consecutive_refusals", 0),
            total_refusals=doc.get("total_refusals", 0),
            note=doc.get("note"),
            metadata=doc.get("metadata", {}),
        )


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


def storable(value: Any) -> Any:
    """`value` (a message, a name) with every lone surrogate replaced by U+FFFD, so that it
    can be stored and shown; what it said is refused separately, never run as cleaned."""
    if isinstance(value, str):
        if unicode_problem(value) is None:
            return value
        return "".join("\ufffd" if "\ud800" <= c <= "\udfff" else c for c in value)
    if isinstance(value, Mapping):
        return {storable(k): storable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [storable(v) for v in value]
    return value


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
    "Agent",
    "PendingCall",
    "Run",
    "RunStatus",
    "load_agent",
    "parse_tool_calls",
    "storable",
    "tool_message",
    "worker_name",
]
