"""Allowed calls whose outcome never came: shown as in doubt, never as fine.

A writer that records an allowed call's outcome after the call (the MCP proxy holds it
and commits it with the next verdict, or within 50 ms) marks the call's verdict with
`outcome_by`: who will write the outcome, as `HOST/BOOT/PID/START` (this machine, its
boot, the process and when it started). Nothing more is written per call. When that
writer stops cleanly it records `writer.ended` once (what it held is written by then).

Reading the log, an allowed verdict with `outcome_by` and no `session.outcome` of the
same call (run and call id) after it is:

- **in doubt** once its writer is over: `writer.ended` is on the record; or a later
  verdict names the same host on another boot (it rebooted), or the same process id on
  the same boot started later (the id was reused: the first process is gone); or, read
  on the writer's machine, its process is gone (`process_gone`);
- **running** otherwise (the call, or the 50 ms before its outcome is written).

    pending = awaiting_outcome(events, gone=process_gone)
    pending.state_of(event)   # "in_doubt", "running" or None
"""

from __future__ import annotations

import os
import socket
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from ..kinds import SESSION_OUTCOME, VERDICT, WRITER_ENDED
from ..store import Event, Store

IN_DOUBT_TEXT = "outcome unknown (in doubt)"
RUNNING_TEXT = "outcome not recorded yet (its writer is still running)"
_BOOT_ID = "/proc/sys/kernel/random/boot_id"


# ------------------------------------------------------------------ who writes


def _boot() -> str:
    try:
        with open(_BOOT_ID, encoding="ascii") as handle:
            return handle.read().strip().replace("-", "")[:12]
    except OSError:  # not Linux: the process id alone says whether it runs
        return ""


def _started(pid: int) -> str | None:
    """When process `pid` started (clock ticks since boot, Linux), "" if unknown; None
    if there is no such process."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as handle:
            stat = handle.read()
    except FileNotFoundError:
        return None if os.path.isdir("/proc/self") else ""
    except OSError:
        return ""
    fields = stat.rpartition(")")[2].split()  # after the command name, which may hold spaces
    return fields[19] if len(fields) > 19 else ""


@dataclass(frozen=True, slots=True)
class Writer:
    """A process that writes outcomes after the calls: where and since when it runs."""

    host: str
    boot: str
    pid: int
    start: str

    @classmethod
    def this_process(cls) -> Writer:
        pid = os.getpid()
        return cls(socket.gethostname().replace("/", "_"), _boot(), pid, _started(pid) or "")

    @property
    def token(self) -> str:
        return f"{self.host}/{self.boot}/{self.pid}/{self.start}"

    @classmethod
    def parse(cls, token: str) -> Writer | None:
        host, boot, pid, start = ([""] * 4 + token.split("/"))[-4:]
        if not host or not pid.isdigit():
            return None
        return cls(host, boot, int(pid), start)


def process_gone(token: str) -> bool | None:
    """Whether the writer `token` names has stopped: True or False when this machine can
    tell (it is the writer's machine), None when it cannot."""
    writer = Writer.parse(token)
    if writer is None:
        return True  # no process could write this call's outcome
    here = Writer.this_process()
    if writer.host != here.host:
        return None
    if writer.boot and here.boot and writer.boot != here.boot:
        return True  # the machine rebooted since
    started = _started(writer.pid)
    if started is None:
        return True
    if started and writer.start:
        return started != writer.start  # another process has the id now
    try:
        os.kill(writer.pid, 0)
    except ProcessLookupError:
        return True
    except OSError:  # it exists, as someone else's
        return False
    return False


# ------------------------------------------------------------------ reading the log


@dataclass(slots=True)
class Awaiting:
    """Allowed verdicts (by seq) whose outcome is not on the record, and their state."""

    in_doubt: set[int] = field(default_factory=set)
    running: set[int] = field(default_factory=set)

    def state_of(self, event: Event) -> str | None:
        if event.seq in self.in_doubt:
            return "in_doubt"
        if event.seq in self.running:
            return "running"
        return None

    def text_of(self, event: Event) -> str | None:
        state = self.state_of(event)
        return IN_DOUBT_TEXT if state == "in_doubt" else RUNNING_TEXT if state else None


def _call_key(event: Event) -> tuple[str | None, str] | None:
    call = event.data.get("call")
    cid = call.get("id") if isinstance(call, Mapping) else None
    return (event.run_id, cid) if isinstance(cid, str) and cid else None


def awaiting_outcome(
    events: Iterable[Event], *, gone: Callable[[str], bool | None] | None = None
) -> Awaiting:
    """Which allowed verdicts among `events` (the log in order, or its tail from the first
    verdict of interest: everything that settles a verdict comes after it) have no outcome,
    in doubt or running; `gone` tells from this machine whether a writer stopped."""
    waiting: dict[tuple[str | None, str], tuple[int, str]] = {}
    ended: set[str] = set()
    boots: dict[str, str] = {}  # host -> the boot seen last
    pids: dict[tuple[str, str, int], str] = {}  # (host, boot, pid) -> the latest start
    over: set[str] = set()
    for e in events:
        if e.kind == VERDICT:
            token = e.data.get("outcome_by")
            verdict = e.data.get("verdict")
            effect = verdict.get("effect") if isinstance(verdict, Mapping) else None
            key = _call_key(e)
            if not isinstance(token, str) or effect not in ("allow", "notify") or key is None:
                continue
            waiting[key] = (e.seq, token)
            _note(token, boots, pids, over)
        elif e.kind == SESSION_OUTCOME:
            key = _call_key(e)
            if key is not None:
                waiting.pop(key, None)
        elif e.kind == WRITER_ENDED:
            token = e.data.get("writer")
            if isinstance(token, str):
                ended.add(token)
    out = Awaiting()
    verdicts: dict[str, bool] = {}
    for seq, token in waiting.values():
        if token not in verdicts:
            verdicts[token] = (
                token in ended
                or token in over
                or _rebooted(token, boots)
                or (gone is not None and gone(token) is True)
            )
        (out.in_doubt if verdicts[token] else out.running).add(seq)
    return out


def _note(
    token: str, boots: dict[str, str], pids: dict[tuple[str, str, int], str], over: set[str]
) -> None:
    """What a writer's verdict says about the others: the same process id on the same
    boot with another start time means the earlier process is gone."""
    writer = Writer.parse(token)
    if writer is None:
        return
    boots[writer.host] = writer.boot
    key = (writer.host, writer.boot, writer.pid)
    before = pids.get(key)
    if before is not None and before != writer.start and writer.start:
        older, newer = sorted((before, writer.start), key=_tick)
        over.add(Writer(writer.host, writer.boot, writer.pid, older).token)
        pids[key] = newer
    elif before is None:
        pids[key] = writer.start


def _tick(start: str) -> int:
    return int(start) if start.isdigit() else -1


def _rebooted(token: str, boots: Mapping[str, str]) -> bool:
    writer = Writer.parse(token)
    if writer is None:
        return True
    last = boots.get(writer.host)
    return bool(writer.boot and last and last != writer.boot)


def awaiting_in(store: Store, shown: Iterable[Event]) -> Awaiting:
    """`awaiting_outcome` for entries shown from `store` (a filtered or cut list): the log
    is read from the first allowed verdict among them that names a writer, and only if
    one does."""
    first = min(
        (e.seq for e in shown if e.kind == VERDICT and "outcome_by" in e.data),
        default=None,
    )
    if first is None:
        return Awaiting()
    from . import iter_events

    return awaiting_outcome(iter_events(store, after=first - 1), gone=process_gone)


def listed_json(events: Iterable[Event], awaiting: Awaiting) -> list[dict[str, object]]:
    """Entries as `signoff audit --json` lists them: each as exported, and an allowed
    verdict whose outcome is not on the record with `outcome` (in_doubt or running)."""
    out: list[dict[str, object]] = []
    for e in events:
        doc: dict[str, object] = e.to_json()
        state = awaiting.state_of(e)
        if state is not None:
            doc["outcome"] = state
        out.append(doc)
    return out


__all__ = [
    "IN_DOUBT_TEXT",
    "RUNNING_TEXT",
    "Awaiting",
    "Writer",
    "awaiting_in",
    "awaiting_outcome",
    "listed_json",
    "process_gone",
]
