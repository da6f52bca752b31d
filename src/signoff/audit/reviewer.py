"""How the reviewer model did, from the audit log (pure): asks it settled, asks it handed
to a person, and how often people overruled it.

An overrule is a person undoing what it allowed (the change it let run was reverted) or
approving what it escalated (the request it handed over was approved, or approved with an
edit). Its verdicts are matched to the rest of the record by run and tool-call id.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..kinds import (
    REQUEST_CREATED,
    REQUEST_DECIDED,
    REVIEW,
    REVIEW_REVERTED,
    REVIEWER_VERDICT,
    SESSION_DECIDED,
)
from ..store import Event

_APPROVALS = ("approve", "approve_always", "edit")


@dataclass(frozen=True, slots=True)
class ReviewerFigures:
    reviewed: int = 0
    settled: int = 0  # allowed: ran without a person
    escalated: int = 0  # handed to a person
    overruled_allowed: int = 0  # a person reverted what it allowed
    overruled_escalated: int = 0  # a person approved what it escalated
    stages: Mapping[str, int] = field(default_factory=dict)  # where each was settled

    @property
    def overruled(self) -> int:
        return self.overruled_allowed + self.overruled_escalated

    def to_json(self) -> dict[str, Any]:
        return {
            "reviewed": self.reviewed,
            "settled": self.settled,
            "escalated": self.escalated,
            "overruled": self.overruled,
            "overruled_allowed": self.overruled_allowed,
            "overruled_escalated": self.overruled_escalated,
            "stages": dict(self.stages),
        }


def _key(event: Event) -> tuple[str | None, str]:
    call = event.data.get("call") or {}
    return event.run_id, str(call.get("id") or "") if isinstance(call, Mapping) else ""


def reviewer_figures(
    events: Iterable[Event], inside: Callable[[float], bool] = lambda ts: True
) -> ReviewerFigures:
    """Figures for the reviewer's verdicts given inside the window (`inside(ts)`); what
    people did about them later counts whenever it happened."""
    allowed: set[tuple[str | None, str]] = set()
    escalated: set[tuple[str | None, str]] = set()
    stages: Counter[str] = Counter()
    review_seq: dict[int, tuple[str | None, str]] = {}  # review item -> its call
    request_call: dict[str, tuple[str | None, str]] = {}
    reverted: set[tuple[str | None, str]] = set()
    approved: set[tuple[str | None, str]] = set()
    for event in events:
        kind = event.kind
        if kind == REVIEWER_VERDICT and inside(event.ts):
            said = event.data.get("reviewer") or {}
            key = _key(event)
            (allowed if said.get("decision") == "allow" else escalated).add(key)
            stages[str(said.get("stage", "?"))] += 1
        elif kind == REVIEW:
            review_seq[event.seq] = _key(event)
        elif kind == REVIEW_REVERTED and isinstance(event.data.get("seq"), int):
            item = review_seq.get(int(event.data["seq"]))
            if item is not None:
                reverted.add(item)
        elif kind in (REQUEST_CREATED, SESSION_DECIDED) and event.request_id:
            request_call[event.request_id] = _key(event)
        if kind in (REQUEST_DECIDED, SESSION_DECIDED) and event.request_id:
            decision = event.data.get("decision") or {}
            call = request_call.get(event.request_id)
            if call is not None and decision.get("kind") in _APPROVALS:
                approved.add(call)
    return ReviewerFigures(
        reviewed=len(allowed) + len(escalated),
        settled=len(allowed),
        escalated=len(escalated),
        overruled_allowed=len(allowed & reverted),
        overruled_escalated=len(escalated & approved),
        stages=dict(stages),
    )


__all__ = ["ReviewerFigures", "reviewer_figures"]
