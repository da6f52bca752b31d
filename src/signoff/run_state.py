"""The stored document of a durable run: `Run` (status, the calls of the current turn,
refusal counters, how to rebuild its agent) and `PendingCall` (one call and what became of
it). Plain data with a versioned JSON form, like `Request`: the store depends on this module
and on `models`, never on the gate or the runner (`signoff.runs` drives runs)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from .models import (
    PARENT_RUNS,
    SCHEMA_VERSION,
    ToolCall,
    Verdict,
    check_version,
    parent_runs,
    unicode_problem,
)

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
    # kept until the request is stored; for a call the reviewer model allowed, until it ran
    # (judged again first: the same ask stays covered, see reviewer_settings.still_covered)
    verdict: Verdict | None = None
    intent: str | None = None  # what the model said it was doing, shown to the reviewer
    child_run: str | None = None  # a delegated call: the child run whose answer it awaits

    def to_json(self) -> dict[str, Any]:
        doc: dict[str, Any] = {
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
        if self.child_run is not None:  # only a delegated call has one: older docs unchanged
            doc["child_run"] = self.child_run
        return doc

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
            child_run=doc.get("child_run"),
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
    # a run started by another run's `delegate` call: that run, and the call it answers
    parent_id: str | None = None
    parent_call_id: str | None = None

    @property
    def waiting_on(self) -> list[str]:
        """The requests still to be decided (a delegated call waits on its child instead)."""
        return [
            p.request_id
            for p in self.pending
            if p.request_id and p.content is None and p.child_run is None
        ]

    @property
    def waiting_for(self) -> list[str]:
        """The child runs whose answers the current turn still awaits."""
        return [p.child_run for p in self.pending if p.child_run and p.content is None]

    def to_json(self) -> dict[str, Any]:
        doc: dict[str, Any] = {
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
        if self.parent_id is not None:  # a child run: a run without a parent reads as before
            doc["parent_id"] = self.parent_id
            doc["parent_call_id"] = self.parent_call_id
        return doc

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
            parent_id=doc.get("parent_id"),
            parent_call_id=doc.get("parent_call_id"),
        )


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


__all__ = [
    "PARENT_RUNS",
    "REFUSALS",
    "PendingCall",
    "Run",
    "RunStatus",
    "Settled",
    "parent_runs",
    "storable",
]
