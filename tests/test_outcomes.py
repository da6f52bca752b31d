"""Allowed calls whose outcome never came (`signoff.audit.outcomes`): in doubt once their
writer is over, running while it may still write it; read from the log alone, or with
this machine's look at the writer's process."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Mapping
from typing import Any

import pytest

from signoff.audit.outcomes import Writer, awaiting_outcome, process_gone
from signoff.audit.stats import compute_stats
from signoff.kinds import SESSION_OUTCOME, VERDICT, WRITER_ENDED
from signoff.store import Event

HERE = Writer.this_process()
ELSEWHERE = Writer("other-host", "b1", 100, "500")


def verdict(seq: int, cid: str, writer: Writer | None, effect: str = "allow") -> Event:
    data: dict[str, Any] = {
        "call": {"name": "up__t", "arguments": {"id": "c9", "outcome_by": "x"}, "id": cid},
        "verdict": {"effect": effect},
    }
    if writer is not None:
        data["outcome_by"] = writer.token
    return Event(seq, 1000.0 + seq, VERDICT, None, "mcp-alice", None, data)


def outcome(seq: int, cid: str, run: str = "mcp-alice", what: str = "ran") -> Event:
    data = {"call": {"name": "up__t", "arguments": {}, "id": cid}, "outcome": what}
    return Event(seq, 1000.0 + seq, SESSION_OUTCOME, None, run, None, data)


def ended(seq: int, writer: Writer) -> Event:
    return Event(seq, 1000.0 + seq, WRITER_ENDED, None, None, None, {"writer": writer.token})


def never(token: str) -> bool | None:
    return None


def states(
    events: list[Event], gone: Callable[[str], bool | None] | None = never
) -> Mapping[int, str]:
    found = awaiting_outcome(events, gone=gone)
    return {e.seq: s for e in events if (s := found.state_of(e)) is not None}


CASES: list[tuple[str, list[Event], dict[int, str]]] = [
    ("its outcome came", [verdict(1, "a", ELSEWHERE), outcome(2, "a")], {}),
    (
        "a failed or in-doubt outcome settles it too",
        [verdict(1, "a", ELSEWHERE), outcome(2, "a", what="in_doubt")],
        {},
    ),
    ("no outcome, writer may run", [verdict(1, "a", ELSEWHERE)], {1: "running"}),
    (
        "no outcome, writer ended",
        [verdict(1, "a", ELSEWHERE), ended(2, ELSEWHERE)],
        {1: "in_doubt"},
    ),
    (
        "another writer's end says nothing",
        [verdict(1, "a", ELSEWHERE), ended(2, Writer("other-host", "b1", 101, "600"))],
        {1: "running"},
    ),
    (
        "an outcome of another run with the same call id does not settle it",
        [verdict(1, "a", ELSEWHERE), outcome(2, "a", run="mcp-mallory"), ended(3, ELSEWHERE)],
        {1: "in_doubt"},
    ),
    (
        "the host rebooted since (a later verdict names another boot)",
        [verdict(1, "a", ELSEWHERE), verdict(2, "b", Writer("other-host", "b2", 7, "9"))],
        {1: "in_doubt", 2: "running"},
    ),
    (
        "the same process id on the same boot started later: the first is gone",
        [verdict(1, "a", ELSEWHERE), verdict(2, "b", Writer("other-host", "b1", 100, "900"))],
        {1: "in_doubt", 2: "running"},
    ),
    (
        "a newer proxy of another process beside it: both may run",
        [verdict(1, "a", ELSEWHERE), verdict(2, "b", Writer("other-host", "b1", 101, "900"))],
        {1: "running", 2: "running"},
    ),
    ("no writer named: written before the call, nothing awaited", [verdict(1, "a", None)], {}),
    ("a denied call never ran", [verdict(1, "a", ELSEWHERE, "deny"), ended(2, ELSEWHERE)], {}),
    ("an asked call has its request", [verdict(1, "a", ELSEWHERE, "ask"), ended(2, ELSEWHERE)], {}),
]


@pytest.mark.parametrize(("events", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_what_the_log_says(events: list[Event], expected: dict[int, str]) -> None:
    assert states(events) == expected


def test_an_unreadable_writer_is_over() -> None:
    event = verdict(1, "a", None)
    event = Event(1, 1.0, VERDICT, None, "r", None, {**event.data, "outcome_by": "nonsense"})
    assert states([event]) == {1: "in_doubt"}
    assert process_gone("nonsense") is True


def test_this_machine_tells_whether_the_process_runs() -> None:
    assert process_gone(HERE.token) is False  # this very process
    assert process_gone(ELSEWHERE.token) is None  # another machine: it cannot tell
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    dead = Writer(HERE.host, HERE.boot, child.pid, HERE.start)
    assert process_gone(dead.token) is True
    assert states([verdict(1, "a", dead)], gone=process_gone) == {1: "in_doubt"}
    assert states([verdict(1, "a", HERE)], gone=process_gone) == {1: "running"}


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="process start times: Linux")
def test_a_reused_process_id_is_not_the_writer() -> None:
    """The writer was killed and its id went to another process: still gone."""
    reused = Writer(HERE.host, HERE.boot, os.getpid(), str(int(HERE.start or "0") + 1))
    assert process_gone(reused.token) is True
    rebooted = Writer(HERE.host, "someotherboot", os.getpid(), HERE.start)
    assert process_gone(rebooted.token) is True


def test_stats_count_the_lost_outcomes_in_their_window() -> None:
    events = [
        verdict(1, "a", ELSEWHERE),
        verdict(2, "b", ELSEWHERE),
        outcome(3, "b"),
        verdict(4, "c", ELSEWHERE),
        ended(5, ELSEWHERE),
        verdict(6, "d", HERE),
    ]
    stats = compute_stats(events)
    assert stats.outcome_unknown == 2  # a and c; d's writer runs (this process)
    assert stats.to_json()["outcome_unknown"] == 2
    assert compute_stats(events, since=1003.5).outcome_unknown == 1
    assert compute_stats(events[:3]).outcome_unknown == 0  # not over: running
    failed_under_it = [verdict(1, "a", ELSEWHERE), outcome(2, "a", what="in_doubt")]
    assert compute_stats(failed_under_it).outcome_unknown == 1
