"""Decision statistics and policy suggestions, computed from the audit log (pure).

    stats = compute_stats(events, since=ts, min_count=5)   # events: the store's log
    stats.to_json()                                        # what `signoff stats --json` prints

What counts (see docs/audit.md):

- a **call** is a `verdict` event (every verdict, allow included; a call judged again after
  a crash counts once, and so does a call made again that found its request, a verdict
  marked `retry`), plus any request whose call had no verdict event (it asked);
- a **question** is a request (`request.created`), or a question asked and answered in an
  in-process session (`session.decided`); it belongs to the window when it was created in
  it, and so do its decision, expiry and doubt;
- **time to decision** is `decided_at - created_at`; the median is the middle value (the
  mean of the two middle ones), p90 the nearest-rank 90th percentile;
- decision kinds: approve (approve and approve_always), edit, reject, skip, answer (respond);
- the reviewer model (`audit.reviewer`): asks it settled, asks it escalated, and how often
  people overruled it (reverted what it allowed, approved what it escalated);
- **outcome unknown (in doubt)**: an allowed call whose outcome was to be written after it
  (`outcome_by`) and never was, its writer being over (`audit.outcomes`), or whose outcome
  is `in_doubt` (the MCP upstream failed under it); a call still running is not counted.

Suggestions never allow what was ever rejected or denied (the whole log is consulted, not
just the window): an asked call whose verdict had no rule and whose narrow rule
(`verdict.suggested_rule`) was approved every time, at least `min_count` times, becomes a
suggested allow rule with its `signoff grant add` command; an explicit ask rule approved
every time is reported, but no grant is offered (an ask rule beats every allow rule, so the
rule itself must go); a call pattern rejected every time, at least `min_count` times,
becomes a suggested deny rule.
"""

from __future__ import annotations

import math
import statistics
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from typing import Any

from ..kinds import SESSION_OUTCOME
from ..models import Request
from ..store import Event
from .history import JudgedCall, Question, gather
from .outcomes import awaiting_outcome, process_gone
from .reviewer import ReviewerFigures, reviewer_figures
from .suggestions import Suggestion, granted_rules, suggest

DEFAULT_MIN_COUNT = 5
DECISION_NAMES = ("approve", "edit", "reject", "skip", "answer")


# ------------------------------------------------------------------ results


@dataclass(frozen=True, slots=True)
class Rates:
    """Questions about one tool or one rule, and how people answered them."""

    key: str
    asked: int
    decided: int
    counts: Mapping[str, int]  # approve, edit, reject, skip, answer
    expired: int = 0
    pending: int = 0  # not decided (yet), not expired

    def rate(self, name: str) -> float | None:
        return _ratio(self.counts.get(name, 0), self.decided)

    def to_json(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "asked": self.asked,
            "decided": self.decided,
            "counts": {n: self.counts.get(n, 0) for n in DECISION_NAMES},
            "rates": {n: self.rate(n) for n in DECISION_NAMES},
            "expired": self.expired,
            "pending": self.pending,
        }


@dataclass(frozen=True, slots=True)
class Day:
    """One UTC day, for a small chart."""

    date: str
    calls: int = 0
    asked: int = 0
    approve: int = 0
    edit: int = 0
    reject: int = 0

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True, slots=True)
class Stats:
    since: float | None
    min_count: int
    calls: int
    effects: Mapping[str, int]  # allow, notify, ask, deny
    asked: int  # calls whose verdict was ask
    questions: int  # requests created
    runs: int
    questions_per_run: Mapping[str, float | int | None]  # mean, median, max
    per_run: tuple[tuple[str, int, int], ...]  # (run id, calls, questions), most asked first
    decided: int
    decisions: Mapping[str, int]
    per_tool: tuple[Rates, ...]
    per_rule: tuple[Rates, ...]
    time_to_decision: Mapping[str, float | int | None]  # count, median, p90 (seconds)
    expired: int
    in_doubt: int
    in_doubt_unresolved: int
    pending: int
    suggestions: tuple[Suggestion, ...] = ()
    by_day: tuple[Day, ...] = ()
    reviewer: ReviewerFigures = field(default_factory=ReviewerFigures)
    outcome_unknown: int = 0  # allowed calls whose outcome never came (in doubt)

    @property
    def ask_share(self) -> float | None:
        return _ratio(self.asked, self.calls)

    def rate(self, name: str) -> float | None:
        return _ratio(self.decisions.get(name, 0), self.decided)

    def to_json(self) -> dict[str, Any]:
        return {
            "since": self.since,
            "min_count": self.min_count,
            "calls": self.calls,
            "effects": {e: self.effects.get(e, 0) for e in ("allow", "notify", "ask", "deny")},
            "asked": self.asked,
            "ask_share": self.ask_share,
            "questions": self.questions,
            "runs": self.runs,
            "questions_per_run": dict(self.questions_per_run),
            "per_run": [{"run_id": r, "calls": c, "questions": q} for r, c, q in self.per_run],
            "decided": self.decided,
            "decisions": {n: self.decisions.get(n, 0) for n in DECISION_NAMES},
            "rates": {n: self.rate(n) for n in DECISION_NAMES},
            "per_tool": [r.to_json() for r in self.per_tool],
            "per_rule": [r.to_json() for r in self.per_rule],
            "time_to_decision": dict(self.time_to_decision),
            "expired": self.expired,
            "in_doubt": self.in_doubt,
            "in_doubt_unresolved": self.in_doubt_unresolved,
            "outcome_unknown": self.outcome_unknown,
            "pending": self.pending,
            "suggestions": [s.to_json() for s in self.suggestions],
            "by_day": [d.to_json() for d in self.by_day],
            "reviewer": self.reviewer.to_json(),
        }


def _ratio(part: int, whole: int) -> float | None:
    return None if whole == 0 else round(part / whole, 4)


def median(values: Sequence[float]) -> float | None:
    return float(statistics.median(values)) if values else None


def p90(values: Sequence[float]) -> float | None:
    """Nearest rank: the smallest value with at least 90% of the values at or below it."""
    if not values:
        return None
    ordered = sorted(values)
    return float(ordered[max(0, math.ceil(0.9 * len(ordered)) - 1)])


# ------------------------------------------------------------------ computing


def compute_stats(
    events: Iterable[Event],
    requests: Iterable[Request] = (),
    *,
    since: float | None = None,
    min_count: int = DEFAULT_MIN_COUNT,
    writer_gone: Callable[[str], bool | None] | None = None,
) -> Stats:
    """Figures for the calls and questions since `since` (epoch seconds; None: all).

    `events` should be the whole log in seq order (`signoff.audit.iter_events(store)`):
    the window is applied here, and suggestions consult every earlier rejection and denial.
    `requests` may add requests the events do not cover; a request in both counts once.
    `writer_gone`: whether a writer of outcomes stopped, as this machine sees it
    (`outcomes.process_gone`; None: only what the log says).
    """
    events = list(events)
    lost = awaiting_outcome(events, gone=writer_gone).in_doubt
    reqs, all_calls, verdict_keys = gather(events, requests)
    granted = granted_rules(events)

    def inside(ts: float) -> bool:
        return since is None or ts >= since

    calls = [c for c in all_calls if inside(c.ts)]
    window = sorted((r for r in reqs.values() if inside(r.created)), key=lambda r: r.created)
    # a question whose call left no verdict event still was a call, and it asked
    extra = [r for r in window if not r.call_id or (r.run_id, r.call_id) not in verdict_keys]
    effects = Counter(c.effect for c in calls)
    effects["ask"] += len(extra)
    n_calls = len(calls) + len(extra)

    run_calls: Counter[str] = Counter(c.run_id for c in calls if c.run_id)
    run_calls.update(r.run_id for r in extra if r.run_id)
    run_questions: Counter[str] = Counter(r.run_id for r in window if r.run_id)
    run_ids = sorted(set(run_calls) | set(run_questions))
    per_run = tuple(
        sorted(
            ((rid, run_calls[rid], run_questions[rid]) for rid in run_ids),
            key=lambda t: (-t[2], t[0]),
        )
    )
    counts = [run_questions[rid] for rid in run_ids]
    qpr = {
        "mean": round(statistics.fmean(counts), 4) if counts else None,
        "median": median(counts),
        "max": max(counts) if counts else None,
    }

    decided = [r for r in window if r.decision is not None]
    waits = [r.decided_at - r.created for r in decided if r.decided_at is not None]
    ttd = {"count": len(waits), "median": median(waits), "p90": p90(waits)}

    return Stats(
        since=since,
        min_count=min_count,
        calls=n_calls,
        effects=dict(effects),
        asked=effects["ask"],
        questions=len(window),
        runs=len(run_ids),
        questions_per_run=qpr,
        per_run=per_run,
        decided=len(decided),
        decisions=dict(Counter(r.decision for r in decided if r.decision)),
        per_tool=_rates(window, lambda r: r.name),
        per_rule=_rates(window, _rule_key),
        time_to_decision=ttd,
        expired=sum(r.expired for r in window),
        in_doubt=sum(r.in_doubt for r in window),
        in_doubt_unresolved=sum(r.unresolved for r in window),
        pending=sum(r.decision is None and not r.expired for r in window),
        suggestions=suggest(window, list(reqs.values()), all_calls, min_count, granted),
        by_day=_days(calls, extra, window),
        reviewer=reviewer_figures(events, inside),
        outcome_unknown=sum(1 for e in events if _outcome_unknown(e, lost) and inside(e.ts)),
    )


def _outcome_unknown(event: Event, lost: set[int]) -> bool:
    """An allowed call whose outcome never came, or came as in doubt (the upstream
    failed under it); an approved call's doubt is its request's (`in_doubt`)."""
    if event.seq in lost:
        return True
    data = event.data
    return (
        event.kind == SESSION_OUTCOME
        and data.get("outcome") == "in_doubt"
        and not data.get("request")
    )


def _rule_key(r: Question) -> str:
    if r.rule:
        return r.rule
    return f"(default: {r.verdict.get('tier', 'unknown')})"


def _rates(window: Sequence[Question], key: Any) -> tuple[Rates, ...]:
    groups: dict[str, list[Question]] = defaultdict(list)
    for r in window:
        groups[key(r)].append(r)
    out = []
    for name, items in groups.items():
        done = [r.decision for r in items if r.decision]
        out.append(
            Rates(
                name,
                len(items),
                len(done),
                dict(Counter(done)),
                expired=sum(r.expired for r in items),
                pending=sum(r.decision is None and not r.expired for r in items),
            )
        )
    return tuple(sorted(out, key=lambda x: (-x.asked, x.key)))


def _days(
    calls: Sequence[JudgedCall], extra: Sequence[Question], window: Sequence[Question]
) -> tuple[Day, ...]:
    table: dict[str, Counter[str]] = defaultdict(Counter)
    for c in calls:
        table[_date(c.ts)]["calls"] += 1
        if c.effect == "ask":
            table[_date(c.ts)]["asked"] += 1
    for r in extra:
        table[_date(r.created)].update(("calls", "asked"))
    for r in window:
        if r.decision in ("approve", "edit", "reject"):
            table[_date(r.created)][r.decision] += 1
    return tuple(Day(day, **dict(table[day])) for day in sorted(table))


def _date(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%d")


def load_stats(
    store: Any, *, since: float | None = None, min_count: int = DEFAULT_MIN_COUNT
) -> Stats:
    """`compute_stats` over a store's whole log (read through its public API)."""
    from . import iter_events

    return compute_stats(
        iter_events(store), since=since, min_count=min_count, writer_gone=process_gone
    )


__all__ = [
    "DEFAULT_MIN_COUNT",
    "Day",
    "Rates",
    "Stats",
    "Suggestion",
    "compute_stats",
    "load_stats",
    "median",
    "p90",
]
