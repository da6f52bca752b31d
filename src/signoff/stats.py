"""Decision statistics and policy suggestions, computed from the audit log (pure).

    stats = compute_stats(events, since=ts, min_count=5)   # events: the store's log
    stats.to_json()                                        # what `signoff stats --json` prints

What counts (see docs/audit.md):

- a **call** is a `verdict` event (every verdict, allow included; a call judged again after
  a crash counts once), plus any request whose call had no verdict event (it asked);
- a **question** is a request (`request.created`); it belongs to the window when it was
  created in it, and so do its decision, expiry and doubt;
- **time to decision** is `decided_at - created_at`; the median is the middle value (the
  mean of the two middle ones), p90 the nearest-rank 90th percentile;
- decision kinds: approve (approve and approve_always), edit, reject, skip, answer (respond).

Suggestions never allow what was ever rejected or denied (the whole log is consulted, not
just the window): an asked call whose verdict had no rule and whose narrow rule
(`verdict.suggested_rule`) was approved every time, at least `min_count` times, becomes a
suggested allow rule with its `signoff grant add` command; an explicit ask rule approved
every time is reported, but no grant is offered (an ask rule beats every allow rule, so the
rule itself must go); a call pattern rejected every time, at least `min_count` times,
becomes a suggested deny rule.
"""

from __future__ import annotations

import json
import math
import statistics
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from fnmatch import fnmatchcase
from typing import Any, Literal

from .models import Request
from .registry import canonical_tool_name
from .rules import Rule, parse_rule
from .store import Event

DEFAULT_MIN_COUNT = 5
DECISION_NAMES = ("approve", "edit", "reject", "skip", "answer")
_KIND_NAME = {"approve": "approve", "approve_always": "approve", "edit": "edit",
              "reject": "reject", "skip": "skip", "respond": "answer"}
_PSEUDO_RULES = ("boundary", "mode", "policy", "catastrophic")
_PATH_KEYS = ("path", "file_path", "filename")

SuggestionKind = Literal["allow", "deny", "remove_ask_rule"]


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
class Suggestion:
    kind: SuggestionKind
    rule: str
    tool: str
    count: int  # decisions behind it, all the same
    reason: str
    command: str | None = None  # allow: the exact `signoff grant add` command
    toml: str | None = None  # deny: the line to add under [permissions] deny
    examples: tuple[str, ...] = ()  # request ids

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "examples": list(self.examples)}


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
            "pending": self.pending,
            "suggestions": [s.to_json() for s in self.suggestions],
            "by_day": [d.to_json() for d in self.by_day],
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


# ------------------------------------------------------------------ gathering


@dataclass(slots=True)
class _Req:
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
        return self.decision == "reject" or (self.decision == "edit" and
                                             self.state == "rejected")


@dataclass(slots=True)
class _Call:
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
    return str(call.get("name", "?")), str(call.get("id") or ""), \
        args if isinstance(args, Mapping) else {}


def _gather(events: Iterable[Event], requests: Iterable[Request]
            ) -> tuple[dict[str, _Req], list[_Call], set[tuple[str | None, str]]]:
    reqs: dict[str, _Req] = {}
    calls: list[_Call] = []
    seen: dict[tuple[str | None, str], int] = {}  # (run, call id) -> index in calls
    for e in events:
        d = e.data
        if e.kind == "verdict":
            name, cid, args = _call_of(d)
            verdict = d.get("verdict") or {}
            parts = tuple(str(p.get("command")) for p in verdict.get("parts") or ()
                          if isinstance(p, Mapping))
            item = _Call(e.ts, e.run_id, name, args, str(verdict.get("effect", "?")),
                         verdict.get("suggested_rule"), parts)
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
        if e.kind == "request.created":
            name, cid, args = _call_of(d)
            reqs[rid] = _Req(rid, e.ts, e.run_id, name, cid, args, d.get("verdict") or {})
            continue
        r = reqs.get(rid)
        if r is None:
            continue
        if e.kind == "request.decided":
            decision = d.get("decision") or {}
            r.decision = _KIND_NAME.get(str(decision.get("kind")))
            at = decision.get("decided_at")
            r.decided_at = float(at) if isinstance(at, int | float) else e.ts
            r.state = str(d.get("state", r.state))
            if isinstance(d.get("arguments"), Mapping):
                r.edited_to = d["arguments"]
        elif e.kind == "request.expired":
            r.expired, r.state = True, "expired"
        elif e.kind == "request.in_doubt":
            r.in_doubt = r.unresolved = True
        elif e.kind in ("request.resolved", "request.finished"):
            r.unresolved = False
    for q in requests:  # requests the events do not cover (a partial log)
        if q.id not in reqs:
            reqs[q.id] = _from_request(q)
    return reqs, calls, set(seen)


def _from_request(q: Request) -> _Req:
    meta = q.metadata or {}
    first = meta.get("original_call")
    verdict = meta.get("original_verdict")
    r = _Req(q.id, q.created_at, q.run_id, q.call.name, q.call.id,
             first["arguments"] if isinstance(first, Mapping) else q.call.arguments,
             verdict if isinstance(verdict, Mapping) else q.verdict.to_json(), state=q.state)
    if q.decision is not None:
        r.decision = _KIND_NAME.get(q.decision.kind)
        r.decided_at = q.decision.decided_at
        if q.decision.kind == "edit":
            r.edited_to = q.call.arguments
    r.expired = q.state == "expired"
    r.in_doubt = r.unresolved = q.state == "in_doubt"
    return r


# ------------------------------------------------------------------ computing


def compute_stats(events: Iterable[Event], requests: Iterable[Request] = (), *,
                  since: float | None = None,
                  min_count: int = DEFAULT_MIN_COUNT) -> Stats:
    """Figures for the calls and questions since `since` (epoch seconds; None: all).

    `events` should be the whole log in seq order (`signoff.audit.iter_events(store)`):
    the window is applied here, and suggestions consult every earlier rejection and denial.
    `requests` may add requests the events do not cover; a request in both counts once.
    """
    events = list(events)
    reqs, all_calls, verdict_keys = _gather(events, requests)
    granted = _granted(events)

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
    per_run = tuple(sorted(((rid, run_calls[rid], run_questions[rid]) for rid in run_ids),
                           key=lambda t: (-t[2], t[0])))
    counts = [run_questions[rid] for rid in run_ids]
    qpr = {"mean": round(statistics.fmean(counts), 4) if counts else None,
           "median": median(counts), "max": max(counts) if counts else None}

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
        suggestions=_suggest(window, list(reqs.values()), all_calls, min_count, granted),
        by_day=_days(calls, extra, window),
    )


def _rule_key(r: _Req) -> str:
    if r.rule:
        return r.rule
    return f"(default: {r.verdict.get('tier', 'unknown')})"


def _rates(window: Sequence[_Req], key: Any) -> tuple[Rates, ...]:
    groups: dict[str, list[_Req]] = defaultdict(list)
    for r in window:
        groups[key(r)].append(r)
    out = []
    for name, items in groups.items():
        done = [r.decision for r in items if r.decision]
        out.append(Rates(name, len(items), len(done), dict(Counter(done)),
                         expired=sum(r.expired for r in items),
                         pending=sum(r.decision is None and not r.expired for r in items)))
    return tuple(sorted(out, key=lambda x: (-x.asked, x.key)))


def _days(calls: Sequence[_Call], extra: Sequence[_Req], window: Sequence[_Req]
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


# ------------------------------------------------------------------ suggestions


def _granted(events: Sequence[Event]) -> set[str]:
    """Rules of grants added and not revoked: no need to suggest them again."""
    rules: dict[str, str] = {}
    for e in events:
        if e.kind == "grant.added":
            grant = e.data.get("grant") or {}
            rules[str(grant.get("id"))] = str(grant.get("rule"))
        elif e.kind == "grant.revoked":
            rules.pop(str(e.data.get("grant_id")), None)
    return set(rules.values())


def _suggest(window: Sequence[_Req], every: Sequence[_Req], calls: Sequence[_Call],
             min_count: int, granted: set[str]) -> tuple[Suggestion, ...]:
    out: list[Suggestion] = []
    # the whole log: what was ever refused (rejected, edited into a deny, or denied)
    refused: list[tuple[str, Mapping[str, Any], str | None, tuple[str, ...]]] = []
    for r in every:
        if r.refused:
            refused.append((r.name, r.arguments, r.suggested, ()))
            if r.edited_to is not None:
                refused.append((r.name, r.edited_to, None, ()))
    refused += [(c.name, c.arguments, c.suggested, c.parts) for c in calls if c.effect == "deny"]

    allow: dict[tuple[str, str], list[_Req]] = defaultdict(list)
    deny: dict[str, list[_Req]] = defaultdict(list)
    for r in every:
        if r.verdict.get("effect") == "ask" and r.rule and r.rule not in _PSEUDO_RULES:
            allow[("remove_ask_rule", r.rule)].append(r)
        elif r.verdict.get("effect") == "ask" and r.rule is None and r.suggested:
            allow[("allow", r.suggested)].append(r)
        pattern = r.suggested or _exact_rule(r)
        if pattern:
            deny[pattern].append(r)
    in_window = {r.id for r in window}

    for (kind, rule), items in sorted(allow.items()):
        decided = [r for r in items if r.decision]
        recent = [r for r in decided if r.id in in_window]
        if len(recent) < min_count or any(r.decision != "approve" for r in decided):
            continue
        if rule in granted or any(_could_match(rule, *item) for item in refused):
            continue
        tool = items[0].name
        ids = tuple(r.id for r in recent[:3])
        if kind == "allow":
            out.append(Suggestion(
                "allow", rule, tool, len(recent),
                f"approved all {len(recent)} times it was asked; never rejected or denied",
                command=f"signoff grant add {_quote(rule)} --scope project", examples=ids))
        else:
            out.append(Suggestion(
                "remove_ask_rule", rule, tool, len(recent),
                f"the ask rule {rule} was approved all {len(recent)} times; an ask rule beats "
                "every allow rule, so remove it from [permissions] ask to stop these questions",
                examples=ids))
    for rule, items in sorted(deny.items()):
        decided = [r for r in items if r.decision]
        recent = [r for r in decided if r.id in in_window]
        if len(recent) < min_count or any(r.decision != "reject" for r in decided):
            continue
        out.append(Suggestion(
            "deny", rule, items[0].name, len(recent),
            f"rejected all {len(recent)} times it was asked",
            toml=f"{_toml_string(rule)},", examples=tuple(r.id for r in recent[:3])))
    return tuple(sorted(out, key=lambda s: (-s.count, s.kind, s.rule)))


def _exact_rule(r: _Req) -> str | None:
    """`Tool(the exact command)` for a shell call without a suggested rule."""
    command = r.arguments.get("command")
    if not isinstance(command, str) or not r.verdict.get("parts"):
        return None
    text = " ".join(command.split())
    if not text or any(c in text for c in "*?[()\n") or text.endswith(":*"):
        return None
    try:
        return parse_rule(f"{r.name}({text})").text
    except Exception:
        return None


def _could_match(rule_text: str, name: str, arguments: Mapping[str, Any],
                 suggested: str | None, parts: tuple[str, ...]) -> bool:
    """Whether an allow rule could allow this refused call; when unsure, yes."""
    if suggested == rule_text:
        return True
    try:
        rule: Rule = parse_rule(rule_text)
    except Exception:
        return True
    if rule.tool != "*" and canonical_tool_name(rule.tool) != canonical_tool_name(name):
        return False
    if rule.specifier is None:
        return True
    try:
        command = arguments.get("command")
        if isinstance(command, str):
            return any(rule.matches_shell(c) for c in (command, *parts))
        url = arguments.get("url")
        if isinstance(url, str):
            return rule.matches_url(url)
        paths = [arguments[k] for k in _PATH_KEYS if isinstance(arguments.get(k), str)]
        if paths:
            spec = rule.specifier.strip().removeprefix("./")
            return any(fnmatchcase(p.removeprefix("./"), spec) or
                       p.removeprefix("./").startswith(spec.rstrip("*").rstrip("/") + "/")
                       for p in paths)
        return rule.matches_arguments(arguments, every=False)
    except Exception:
        return True


def _quote(rule: str) -> str:
    """Single-quoted for a POSIX shell, exactly."""
    return "'" + rule.replace("'", "'\"'\"'") + "'"


def _toml_string(text: str) -> str:
    """A TOML basic string (JSON's escapes are TOML's; ASCII-only keeps DEL escaped too)."""
    return json.dumps(text)


def load_stats(store: Any, *, since: float | None = None,
               min_count: int = DEFAULT_MIN_COUNT) -> Stats:
    """`compute_stats` over a store's whole log (read through its public API)."""
    from .audit import iter_events

    return compute_stats(iter_events(store), since=since, min_count=min_count)


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
