"""The proxy's writer of the record, beside the calls.

By default an allowed call's verdict is committed before the call goes upstream, like
every other record; only its outcome is written after the answer is on its way to the
client: held here (`later`) and committed together with the next call's verdict, in one
transaction, or by this writer when no call came within `LINGER` seconds. A crash in
that moment leaves a verdict without its outcome (the call ran or not: nobody knows),
never an outcome without its verdict.

With `[record] allowed = "beside"`, an allowed call's verdict and outcome both go to this
one writer thread, in order, while the call runs (`submit`); what a crash can lose is the
record of the allowed calls in flight at that moment.

Asks and denies are always written first: a person's decision and a refusal never
depend on a write that may not happen. If a write of held outcomes fails (a full disk, a
locked store), they stay held, in order, and the proxy refuses every call until a write
of them succeeds (`check` tries again at each call: it heals once the store takes writes
again). Any other failed write here (a record written beside its call, an outcome that
could not even be held) leaves a hole, and the proxy refuses every call from then on.
"""

from __future__ import annotations

import contextlib
import queue
import threading
from collections.abc import Callable, Sequence

from ..store import Draft

BACKLOG = 1000  # writes waiting at most: beyond, a call waits for the writer
LINGER = 0.05  # seconds an outcome waits to share the next verdict's commit


class RecordBroken(Exception):
    """A write of the record failed: no call may run unrecorded."""


class Recorder:
    def __init__(self, write_many: Callable[[Sequence[Draft]], object] | None = None) -> None:
        self._queue: queue.Queue[Callable[[], None] | None] = queue.Queue(maxsize=BACKLOG)
        self.broken: BaseException | None = None  # a hole in the record: no call runs
        self.unwritten: BaseException | None = None  # why held outcomes are not written yet
        self._writing = threading.Lock()  # one writer of held outcomes at a time, in order
        self._write_many = write_many
        self._held: list[Draft] = []  # outcomes not yet written, oldest first
        self._held_lock = threading.Lock()
        self._woken = False  # a write of what is held is waiting in the queue
        self._thread = threading.Thread(target=self._run, name="signoff-mcp-record", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while True:
            work = self._queue.get()
            if work is None:  # the proxy stops: what is held goes out now
                with contextlib.suppress(BaseException):  # `broken` says so; see Proxy
                    self._write_held()
                return
            if self.broken is not None:
                continue  # nothing more is written after a failed write: see check()
            try:
                work()
            except BaseException as exc:  # any failure: the proxy stops allowing calls
                self.broken = exc

    def check(self) -> None:
        if self.broken is not None:
            raise RecordBroken(
                f"signoff cannot write its record ({type(self.broken).__name__}: "
                f"{self.broken}); no call runs until the proxy is restarted"
            )
        if self.unwritten is not None:
            try:
                self._write_held()
            except BaseException as exc:
                raise RecordBroken(
                    f"signoff cannot write its record ({type(exc).__name__}: {exc}); no call "
                    "runs until it can (what the calls before did is held until then)"
                ) from None

    def submit(self, work: Callable[[], None]) -> None:
        self.check()
        self._queue.put(work)

    # ------------------------------------------------------------------ held outcomes

    def later(self, draft: Draft) -> bool:
        """Hold an event to be written with the next verdict; True when nothing else was
        held, so the caller makes sure it is written within `LINGER` if no verdict comes
        (`write_held_soon` then, from a timer of its event loop)."""
        self.check()
        with self._held_lock:
            self._held.append(draft)
            return len(self._held) == 1

    def write_held_soon(self) -> None:
        """The writer writes what is still held (one such write waiting at a time)."""
        with self._held_lock:
            if self._woken or not self._held:
                return
            self._woken = True
        self._queue.put(self._write_held_now)

    def take(self) -> list[Draft]:
        """What is held, for the caller to write in its own transaction (`give_back` if
        that write fails)."""
        with self._held_lock:
            held, self._held = self._held, []
        return held

    def give_back(self, drafts: Sequence[Draft]) -> None:
        """Events taken but not written: held again, ahead of newer ones."""
        if not drafts:
            return
        with self._held_lock:
            self._held[:0] = drafts
        self.write_held_soon()

    def _write_held_now(self) -> None:
        with self._held_lock:
            self._woken = False
        with contextlib.suppress(BaseException):  # kept in `unwritten`: see check()
            self._write_held()

    def _write_held(self) -> None:
        with self._writing:
            held = self.take()
            if held and self._write_many is None:
                raise RuntimeError("this recorder holds events but has no store to write them to")
            try:
                if held:
                    assert self._write_many is not None
                    self._write_many(held)
            except BaseException as exc:
                with self._held_lock:
                    self._held[:0] = held  # still held, ahead of newer ones
                self.unwritten = exc
                raise
            self.unwritten = None

    @property
    def problem(self) -> BaseException | None:
        """Why the record is incomplete, if it is (a hole, or outcomes never written)."""
        return self.broken or (self.unwritten if self._held else None)

    def close(self) -> None:
        """Write what is waiting, then stop."""
        self._queue.put(None)
        self._thread.join()


__all__ = ["LINGER", "RecordBroken", "Recorder"]
