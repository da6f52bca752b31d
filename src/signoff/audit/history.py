"""The decision history read back from the audit log: one record per question (request)
and per judged call, for `stats` and `suggestions` (pure)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ..kinds import (
    REQUEST_CREATED,
    REQUEST_DECIDED,
    REQUEST_EXPIRED,
    REQUEST_FINISHED,
    REQUEST_IN_DOUBT,
    REQUEST_RESOLVED,
    SESSION_DECIDED,
    VERDICT,
)
from ..models import Request
from ..store import Event

_KIND_NAME = {
    "approve": "approve",
    "approve_always": "approve",
    "edit": "edit",
    "reject": "reject",
    "skip": "skip",
    "respond": "answer",
}


@dataclass(slots=True)
class Question:
    id: str
    created: float
    run_id: str | None
    name: str
    call_id: str
    arguments: Mapping[str, Any]
    verdict: Mapping[str, Any]  # the original verdict (before any edit)
    decision: str | None = None  # approve, edit, reject, skip, answer
    decided_at: float | None = None
    state: str = "pending"
    edited_to: Mapping[str, Any] | None = None
    expired: bool = False
    in_doubt: bool = False
    unresolved: bool = False

    @property
    def rule(self) -> str | None:
        rule = self.verdict.get("rule")
        return rule if isinstance(rule, str) else None

    @property
    def suggested(self) -> str | None:
        rule = self.verdict.get("suggested_rule")
        return rule if isinstance(rule, str) else None

    @property
    def refused(self) -> bool:
        """Rejected by a person, or edited into a call the policy denied."""
        return self.decision == "reject" or (self.decision == "edit" and self.state == "rejected")


@dataclass(slots=True)
class JudgedCall:
    ts: float
    run_id: str | None
    name: str
    arguments: Mapping[str, Any]
    effect: str
    suggested: str | None
    parts: tuple[str, ...] = ()


def _call_of(data: Mapping[str, Any]) -> tuple[str, str, Mapping[str, Any]]:
    call = data.get("call") or {}
    args = call.get("arguments")
    return (
        str(call.get("name", "?")),
        str(call.get("id") or ""),
        args if isinstance(args, Mapping) else {},
    )


def gather(
    events: Iterable[Event], requests: Iterable[Request]
) -> tuple[dict[str, Question], list[JudgedCall], set[tuple[str | None, str]]]:
    reqs: dict[str, Question] = {}
    calls: list[JudgedCall] = []
    seen: dict[tuple[str | None, str], int] = {}  # (run, call id) -> index in calls
    for e in events:
        d = e.data
        if e.kind == VERDICT:
            if d.get("retry") is True:  # the same request's call made again: counted once
                continue
            name, cid, args = _call_of(d)
            verdict = d.get("verdict") or {}
            parts = tuple(
                str(p.get("command")) for p in verdict.get("parts") or () if isinstance(p, Mapping)
            )
            item = JudgedCall(
                e.ts,
                e.run_id,
                name,
                args,
                str(verdict.get("effect", "?")),
                verdict.get("suggested_rule"),
                parts,
            )
            key = (e.run_id, cid)
            if cid and e.run_id and key in seen:  # judged again after a crash: once
                calls[seen[key]] = item
                continue
            if cid:
                seen.setdefault(key, len(calls))
            calls.append(item)
            continue
        rid = e.request_id
        if rid is None:
            continue
        if e.kind in (REQUEST_CREATED, SESSION_DECIDED):
            name, cid, args = _call_of(d)
            asked = d.get("asked_at")  # a session's question: asked and answered in process
            created = float(asked) if isinstance(asked, int | float) else e.ts
            reqs[rid] = Question(rid, created, e.run_id, name, cid, args, d.get("verdict") or {})
            if e.kind == REQUEST_CREATED:
                continue
        r = reqs.get(rid)
        if r is None:
            continue
        if e.kind in (REQUEST_DECIDED, SESSION_DECIDED):
            decision = d.get("decision") or {}
            r.decision = _KIND_NAME.get(str(decision.get("kind")))
            at = decision.get("decided_at")
            r.decided_at = float(at) if isinstance(at, int | float) else e.ts
            r.state = str(d.get("state", r.state))
            edited = d.get("arguments", decision.get("arguments"))
            if r.decision == "edit" and isinstance(edited, Mapping):
                r.edited_to = edited
        elif e.kind == REQUEST_EXPIRED:
            r.expired, r.state = True, "expired"
        elif e.kind == REQUEST_IN_DOUBT:
            r.in_doubt = r.unresolved = True
        elif e.kind in (REQUEST_RESOLVED, REQUEST_FINISHED):
            r.unresolved = False
    for q in requests:  # requests the events do not cover (a partial log)
        if q.id not in reqs:
            reqs[q.id] = from_request(q)
    # A hook's request belongs to no run (the verdict to its session): it is matched by
    # the call id alone, so an asked call is not counted twice.
    keys = set(seen) | {(None, cid) for _, cid in seen}
    return reqs, calls, keys


def from_request(q: Request) -> Question:
    meta = q.metadata or {}
    first = meta.get("original_call")
    verdict = meta.get("original_verdict")
    r = Question(
        q.id,
        q.created_at,
        q.run_id,
        q.call.name,
        q.call.id,
        first["arguments"] if isinstance(first, Mapping) else q.call.arguments,
        verdict if isinstance(verdict, Mapping) else q.verdict.to_json(),
        state=q.state,
    )
    if q.decision is not None:
        r.decision = _KIND_NAME.get(q.decision.kind)
        r.decided_at = q.decision.decided_at
        if q.decision.kind == "edit":
            r.edited_to = q.call.arguments
    r.expired = q.state == "expired"
    r.in_doubt = r.unresolved = q.state == "in_doubt"
    return r


__all__ = ["JudgedCall", "Question", "from_request", "gather"]
