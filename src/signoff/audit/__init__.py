"""The audit log: read, filter, export and verify the store's hash-chained events.

Every state change appends one event to a single append-only table in the same
transaction as the change (see `signoff.store.base`). Each event's
``hash = sha256(prev_hash + entry)``, where ``entry`` is the canonical JSON of
``{v, ts, kind, request_id, run_id, actor, data}``; the chain head (last seq and hash) is
kept in its own row. This module only reads that log, through the public store API:

    for event in read_log(store, AuditFilter(run_id="run-1", since=parse_since("7d"))):
        ...
    export_jsonl(store, file)          # one JSON object per line, with seq/prev_hash/hash
    verify_store(store)                # VerifyReport: ok, first bad entry, what is wrong
    verify_file("audit.jsonl")         # the same check, offline, on an exported file
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

from ..exceptions import IntegrityError, InvalidInput
from ..i18n import plural
from ..kinds import (
    GRANT_ADDED,
    GRANT_REVOKED,
    REQUEST_CLAIMED,
    REQUEST_CREATED,
    REQUEST_DECIDED,
    REQUEST_EXPIRED,
    REQUEST_FINISHED,
    REQUEST_IN_DOUBT,
    REQUEST_RESOLVED,
    REVIEW,
    REVIEWER_VERDICT,
    RUN_CLAIMED,
    RUN_CREATED,
    SESSION_DECIDED,
    SESSION_GRANT,
    SESSION_OUTCOME,
    SESSION_UNMATCHED,
    VERDICT,
    WRITER_ENDED,
)
from ..models import Grant
from ..store import Event, Store
from ..store.base import dumps
from ..store.chain import GENESIS_HASH, verify_chain
from ..times import when

PAGE = 1000
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhdw])\s*$")
_UNIT = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
_ENTRY_KEYS = ("v", "ts", "kind", "request_id", "run_id", "actor", "data")


# ------------------------------------------------------------------ reading and filtering


def parse_since(text: str, *, now: float | None = None) -> float:
    """`7d`, `12h`, `30m`, `90s`, `2w` ago; an ISO date or time (UTC unless it says
    otherwise); or epoch seconds. Returns epoch seconds."""
    now = time.time() if now is None else now
    match = _DURATION.match(text)
    if match:
        return now - float(match.group(1)) * _UNIT[match.group(2)]
    try:
        return float(text)
    except ValueError:
        pass
    try:
        moment = datetime.fromisoformat(text.strip())
    except ValueError:
        raise InvalidInput(
            f"--since {text!r}: use a duration (7d, 12h, 30m, 90s, 2w), an ISO date "
            "(2025-01-31 or 2025-01-31T09:00) or epoch seconds"
        ) from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp()


@dataclass(frozen=True, slots=True)
class AuditFilter:
    """Which events to show: all of them by default."""

    run_id: str | None = None
    since: float | None = None
    kinds: tuple[str, ...] = ()  # exact kinds, or a prefix ending in "." or "*" ("run.")
    request_id: str | None = None
    also_runs: tuple[str, ...] = ()  # with run_id: the runs it started, too (delegate)

    def matches(self, event: Event) -> bool:
        if self.since is not None and event.ts < self.since:
            return False
        if (
            self.run_id is not None
            and event.run_id != self.run_id
            and event.run_id not in self.also_runs
        ):
            return False
        if self.request_id is not None and event.request_id != self.request_id:
            return False
        return not self.kinds or any(_kind_matches(event.kind, k) for k in self.kinds)


def _kind_matches(kind: str, pattern: str) -> bool:
    if pattern.endswith("*"):
        return kind.startswith(pattern[:-1])
    if pattern.endswith("."):
        return kind.startswith(pattern)
    return kind == pattern or kind.startswith(pattern + ".")


def iter_events(store: Store, *, after: int = 0, page: int = PAGE) -> Iterator[Event]:
    """Every event after seq `after`, in order, a page at a time."""
    seq = after
    while True:
        try:
            batch = store.events_after(seq, page)
        except (ValueError, KeyError, TypeError) as exc:  # an entry edited into garbage
            raise IntegrityError(
                f"an audit entry after entry {seq} cannot be read ({exc}); "
                "run `signoff audit verify` to find it"
            ) from exc
        yield from batch
        if len(batch) < page:
            return
        seq = batch[-1].seq


def read_log(
    store: Store, where: AuditFilter | None = None, limit: int | None = None
) -> list[Event]:
    """The entries that match, oldest first; with `limit`, only the newest that many (an
    unfiltered read then reads just the log's tail)."""
    where = where or AuditFilter()
    if limit is not None and where == AuditFilter():
        return list(iter_events(store, after=max(0, store.last_seq() - limit)))
    found = [e for e in iter_events(store) if where.matches(e)]
    return found[-limit:] if limit is not None else found


def describe(event: Event, fate: str | None = None) -> str:
    """One line a person reads: what happened, to what, by whom. `fate`: what became
    of an allowed call whose outcome is not on the record (`outcomes.Awaiting.text_of`)."""
    data = event.data
    kind = event.kind
    if kind in (VERDICT, REQUEST_CREATED):
        verdict = data.get("verdict") or {}
        text = _call_text(data)
        effect = verdict.get("effect", "?")
        rule = verdict.get("rule")
        line = f"{effect}: {text}" + (f" (rule {rule})" if rule else "")
        return f"{line}; {fate}" if fate else line
    if kind == REQUEST_DECIDED:
        decision = data.get("decision") or {}
        out = f"{decision.get('kind', '?')} -> {data.get('state', '?')}"
        if decision.get("reason"):
            out += f": {decision['reason']}"
        if "arguments" in data:
            out += f" (edited to {_short(data['arguments'])})"
        return out
    if kind == REQUEST_CLAIMED:
        return f"claimed by {data.get('worker')}" + (" (again)" if data.get("reclaim") else "")
    if kind == REQUEST_FINISHED:
        digest = data.get("result_digest")
        return f"{data.get('state', '?')}" + (f", result {digest[:12]}…" if digest else "")
    if kind == WRITER_ENDED:
        return f"{data.get('client', '?')} writer {data.get('writer')} stopped"
    if kind == REQUEST_IN_DOUBT:
        return f"in doubt: {data.get('worker')} did not report before its lease lapsed"
    if kind == REQUEST_RESOLVED:
        return f"resolved as {data.get('outcome')}"
    if kind == REQUEST_EXPIRED:
        return f"expired (was {data.get('from')})"
    if kind == SESSION_DECIDED:
        decision = data.get("decision") or {}
        out = f"{decision.get('kind', '?')}: {_call_text(data)}"
        if decision.get("reason"):
            out += f": {decision['reason']}"
        if decision.get("arguments") is not None:
            out += f" (edited to {_short(decision['arguments'])})"
        return out
    if kind == SESSION_OUTCOME:
        doubt = "outcome unknown (in doubt)" if data.get("outcome") == "in_doubt" else None
        return f"{doubt or data.get('outcome', '?')}: {_call_text(data)}"
    if kind == SESSION_UNMATCHED:
        return (
            f"UNMATCHED outcome from {data.get('sender', '?')}, not recorded as one "
            f"({data.get('why', '?')}): {data.get('outcome', '?')}: {_call_text(data)}"
        )
    if kind == REVIEW:
        return f"ran without asking, to review: {_call_text(data)}"
    if kind == REVIEWER_VERDICT:
        said = data.get("reviewer") or {}
        return (
            f"reviewer model {'allowed' if said.get('decision') == 'allow' else 'escalated'} "
            f"({said.get('stage', '?')}): {_call_text(data)}: {said.get('reasoning', '')}"
        )
    if kind == RUN_CREATED:
        return (
            f"run started ({data.get('message_count')} messages"
            + (f", agent {data['agent']}" if data.get("agent") else "")
            + ")"
        )
    if kind == RUN_CLAIMED:
        taken = f"taken by {data.get('worker')} (was {data.get('status')})"
        return taken + (f", after {data['lapsed']}'s lease lapsed" if data.get("lapsed") else "")
    if kind.startswith("run.") and "to" in data:
        out = f"{data.get('from')} -> {data.get('to')}"
        if data.get("waiting_on"):
            out += f", waiting on {', '.join(map(str, data['waiting_on']))}"
        return out + (f": {data['note']}" if data.get("note") else "")
    if kind in (GRANT_ADDED, SESSION_GRANT):
        grant = data.get("grant") or {}
        return f"grant {grant.get('rule')} ({grant.get('scope')})"
    if kind == GRANT_REVOKED:
        return f"revoked {data.get('rule')}"
    return _short(dict(data), 100)


def _call_text(data: Mapping[str, Any]) -> str:
    call = data.get("call") or {}
    return f"{call.get('name', '?')} {_short(call.get('arguments'))}"


def _short(value: Any, width: int = 70) -> str:
    text = (
        value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True)
    )
    return text if len(text) <= width else text[: width - 1] + "…"


def event_json(event: Event) -> dict[str, Any]:
    """The exported form of an event: its content plus seq, prev_hash and hash."""
    return event.to_json()


# ------------------------------------------------------------------ export


def export_jsonl(store: Store, out: IO[str]) -> tuple[int, str]:
    """Write the whole log as JSON Lines; returns (entries, head hash of what was written).

    The whole log, never a filtered part: a filtered file could not be verified."""
    count, head = 0, GENESIS_HASH
    for event in iter_events(store):
        out.write(json.dumps(event_json(event), ensure_ascii=False, sort_keys=True) + "\n")
        count, head = count + 1, event.hash
    return count, head


# ------------------------------------------------------------------ verify


@dataclass(frozen=True, slots=True)
class VerifyReport:
    """The result of checking a chain: ok, or the first bad entry and what is wrong."""

    ok: bool
    source: str  # "store" or the file's path
    entries: int  # entries checked (the chain head's seq for a store)
    head_seq: int
    head_hash: str
    message: str
    first_bad_seq: int | None = None
    bad_entry: Mapping[str, Any] | None = None  # the stored entry at that place, if readable
    last_good: Mapping[str, Any] | None = None  # the last entry before it
    # (request id, what is wrong): requests whose binding or decision record fails
    bad_requests: tuple[tuple[str, str], ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "source": self.source,
            "entries": self.entries,
            "head_seq": self.head_seq,
            "head_hash": self.head_hash,
            "first_bad_seq": self.first_bad_seq,
            "message": self.message,
            "bad_entry": dict(self.bad_entry) if self.bad_entry is not None else None,
            "last_good": dict(self.last_good) if self.last_good is not None else None,
            "bad_requests": [
                {"request_id": rid, "problem": problem} for rid, problem in self.bad_requests
            ],
        }

    def lines(self) -> list[str]:
        """The readable report."""
        if self.ok:
            return [
                f"OK: {self.message} ({self.source}).",
                f"Chain head: entry {self.head_seq}, hash {self.head_hash}",
                "Keep this hash somewhere else: a later verify (or `signoff audit verify "
                "--file F --head HASH`) proves nothing before it was changed.",
            ]
        if self.bad_requests and self.first_bad_seq is None:
            return [
                f"TAMPERED: {self.message} ({self.source}).",
                *(f"  {rid}: {problem}" for rid, problem in self.bad_requests),
                "These requests will not be decided or run; the log itself verifies.",
            ]
        out = [
            f"TAMPERED: {self.message} ({self.source}).",
            f"First bad entry: {self.first_bad_seq}",
        ]
        if self.bad_entry is not None:
            out.append(f"  what is stored there: {_summary(self.bad_entry)}")
        if self.last_good is not None:
            out.append(f"Last good entry: {_summary(self.last_good)}")
        elif self.first_bad_seq == 1:
            out.append("No entry before it can be trusted.")
        out.append("Entries from the first bad one on cannot be trusted; earlier ones can.")
        return out


def _summary(doc: Mapping[str, Any]) -> str:
    parts = [f"#{doc.get('seq')}", str(doc.get("kind"))]
    ts = doc.get("ts")
    if isinstance(ts, int | float):
        parts.append(when(float(ts)))
    for key in ("request_id", "run_id", "actor"):
        if doc.get(key):
            parts.append(f"{key.split('_')[0]} {doc[key]}")
    return ", ".join(parts)


def _brief(event: Event) -> dict[str, Any]:
    return {
        "seq": event.seq,
        "kind": event.kind,
        "ts": event.ts,
        "request_id": event.request_id,
        "run_id": event.run_id,
        "actor": event.actor,
    }


def verify_store(store: Store) -> VerifyReport:
    """Walk the store's chain; on a break, also show what is stored at that place."""
    ok, bad, message = store.verify_chain()
    head_seq = store.last_seq()
    head_hash = GENESIS_HASH
    last_good = bad_entry = None
    if head_seq:
        last = _event_at(store, head_seq)
        head_hash = last.hash if last is not None else "?"
    if not ok and bad is not None:
        found = _event_at(store, bad)
        bad_entry = _brief(found) if found is not None else None
        before = _event_at(store, bad - 1) if bad > 1 else None
        last_good = _brief(before) if before is not None else None
    bad_requests: tuple[tuple[str, str], ...] = ()
    check = getattr(store, "verify_requests", None)  # the engine's stores have it
    if ok and check is not None:
        bad_requests = tuple(check())
        if bad_requests:
            ok = False
            message = (
                f"{plural(len(bad_requests), 'request or grant', 'requests or grants')} "
                f"{'was' if len(bad_requests) == 1 else 'were'} changed in the database: "
                "a binding, decision record or grant MAC does not verify"
            )
    return VerifyReport(
        ok, "store", head_seq, head_seq, head_hash, message, bad, bad_entry, last_good, bad_requests
    )


def _event_at(store: Store, seq: int) -> Event | None:
    try:
        found = store.events_after(seq - 1, 1)
    except Exception:  # an entry edited into something unreadable
        return None
    return found[0] if found and found[0].seq == seq else None


def verify_file(path: str | Path, *, head: str | None = None) -> VerifyReport:
    """Verify an exported JSON Lines file offline; `head` is a chain-head hash recorded
    earlier (by `signoff audit verify`), which also catches entries cut from the end."""
    with open(path, encoding="utf-8") as handle:
        return verify_lines(handle, source=str(path), head=head)


def verify_lines(
    lines: Iterable[str], *, source: str = "file", head: str | None = None
) -> VerifyReport:
    docs: list[Mapping[str, Any]] = []
    rows: list[tuple[int, str, str, str, str, str | None]] = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        seq = len(rows) + 1
        try:
            doc = json.loads(line)
            rows.append(_row(doc))
        except (ValueError, TypeError, KeyError, InvalidInput) as exc:
            return _file_report(
                False, source, rows, docs, seq, f"line {number} (entry {seq}) does not parse: {exc}"
            )
        docs.append(doc)
    last_seq, last_hash = (rows[-1][0], rows[-1][3]) if rows else (0, GENESIS_HASH)
    seqs = [row[0] for row in rows]
    first = next((i for i, seq in enumerate(seqs) if seq != i + 1), None)
    if first is not None and first + 1 in set(seqs[first + 1 :]):  # moved, not missing
        return _file_report(
            False,
            source,
            rows,
            docs,
            first + 1,
            f"entry {first + 1} is out of order: entry {seqs[first]} comes before it (reordered)",
        )
    ok, bad, message = verify_chain(iter(rows), (last_seq, last_hash))
    if not ok:
        return _file_report(False, source, rows, docs, bad, message)
    if head is not None and head != last_hash:
        return _file_report(
            False,
            source,
            rows,
            docs,
            last_seq + 1,
            f"the file ends at entry {last_seq} with hash {last_hash[:16]}…, "
            f"not at the expected head {head[:16]}…: entries were cut from "
            "the end, or the last one was changed",
        )
    return _file_report(True, source, rows, docs, None, message)


def _row(doc: Any) -> tuple[int, str, str, str, str, str | None]:
    if not isinstance(doc, dict):
        raise InvalidInput("not a JSON object")
    missing = [k for k in (*_ENTRY_KEYS, "seq", "prev_hash", "hash") if k not in doc]
    if missing:
        raise InvalidInput(f"missing {', '.join(missing)}")
    fields = _ENTRY_KEYS + (("n", "mac") if "mac" in doc else ())  # keyed entries
    entry = dumps({k: doc[k] for k in fields}, "event")
    return (
        int(doc["seq"]),
        entry,
        str(doc["prev_hash"]),
        str(doc["hash"]),
        doc["kind"],
        doc["request_id"],
    )


def _file_report(
    ok: bool,
    source: str,
    rows: Sequence[tuple[Any, ...]],
    docs: Sequence[Mapping[str, Any]],
    bad: int | None,
    message: str,
) -> VerifyReport:
    last_seq, last_hash = (int(rows[-1][0]), str(rows[-1][3])) if rows else (0, GENESIS_HASH)
    by_seq = {d.get("seq"): d for d in docs}
    bad_doc = by_seq.get(bad) if bad is not None else None
    good_doc = by_seq.get(bad - 1) if bad is not None and bad > 1 else None
    return VerifyReport(
        ok, source, len(rows), last_seq, last_hash, message, bad, _pick(bad_doc), _pick(good_doc)
    )


def _pick(doc: Mapping[str, Any] | None) -> dict[str, Any] | None:
    if doc is None:
        return None
    return {k: doc.get(k) for k in ("seq", "kind", "ts", "request_id", "run_id", "actor")}


def session_recorder(store: Store, session_id: str) -> Callable[[str, Mapping[str, Any]], None]:
    """A `Gate` listener that puts an in-process session on the record, as events of run
    `session_id`: every verdict (`verdict`, as a durable run writes it), every question with
    its decision (`session.decided`: call, verdict, asked_at, decision), every outcome
    (`session.outcome`) and grant (`session.grant`; a project grant becomes a store grant,
    listed and revocable). It writes before the gate goes on, so a store that cannot write
    stops the call instead of letting it run unrecorded."""

    def listen(kind: str, payload: Mapping[str, Any]) -> None:
        data = dict(payload)
        if kind == VERDICT:
            store.record(VERDICT, data, run_id=session_id)
        elif kind == "decision":
            decision = data.get("decision") or {}
            store.record(
                SESSION_DECIDED,
                data,
                run_id=session_id,
                request_id=str(data.get("request")),
                actor=decision.get("actor"),
            )
        elif kind == "outcome":
            store.record(SESSION_OUTCOME, data, run_id=session_id)
        elif kind == "reviewer":
            store.record(REVIEWER_VERDICT, data, run_id=session_id)
        elif kind == "grant" and data.get("scope") == "project":
            # kept for the project (settings.local.toml): a store grant too, so that it is
            # listed and revocable like one made from the inbox (`grant.added`)
            store.add_grant(Grant.from_json(data))
        elif kind == "grant":
            store.record(
                SESSION_GRANT, {"grant": data}, run_id=session_id, actor=data.get("created_by")
            )

    return listen


__all__ = [
    "AuditFilter",
    "VerifyReport",
    "describe",
    "event_json",
    "export_jsonl",
    "iter_events",
    "parse_since",
    "read_log",
    "session_recorder",
    "verify_file",
    "verify_lines",
    "verify_store",
]
