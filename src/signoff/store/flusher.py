"""The background flush behind a commit written with `flush="soon"`.

A SQLite commit at ``synchronous=NORMAL`` is in the WAL file when it returns: it survives
the process being killed (the operating system holds the page), not the machine losing
power. This thread makes it survive that too, moments later: it `fdatasync`s the WAL as
soon as it is told a commit is waiting, while the caller goes on (the call an allowed
verdict lets run does not wait for the disk). It starts its flush at most `FLUSH_WITHIN_S`
after the first commit it was told of (the flush itself then takes what the disk takes:
`bench/flush_window.py` measures the whole moment): the commits made in that window, and
while it flushes, share one flush (as PostgreSQL's WAL writer gathers asynchronous
commits, there every 200 ms by default), so an agent making a call every few milliseconds
wakes it once for several of them. Any durable commit (`flush="now"`) flushes the same WAL
first, the WAL being one file written in order: nothing soon is ever behind
something durable.

After each flush it runs the store's `upkeep` (the WAL checkpoint and the audit anchor,
which would otherwise cost the caller a few fsyncs every few dozen commits).

A flush that fails leaves the store refusing writes (`failure`): what was written since
the last flush may be lost, and a store that cannot say what is on disk lets nothing run.
"""

from __future__ import annotations

import atexit
import os
import threading
import weakref
from collections.abc import Callable

from ..lazylog import get_logger

log = get_logger(__name__)
_LIVE: weakref.WeakSet[Flusher] = weakref.WeakSet()
# The longest a commit told to the flush thread waits before its fdatasync starts.
FLUSH_WITHIN_S = 0.02


def _flush_all_at_exit() -> None:
    for flusher in list(_LIVE):
        flusher.close()


atexit.register(_flush_all_at_exit)


class Flusher:
    """fdatasync of one file (a store's WAL) off the caller's thread, on demand."""

    def __init__(self, path: str, upkeep: Callable[[], None] | None = None) -> None:
        self.path = path
        self._upkeep = upkeep
        self.within = FLUSH_WITHIN_S  # read when made: a test may set the module's
        self._fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
        self._due = threading.Event()
        self._hurry = threading.Event()  # someone waits for the flush (or it closes)
        self._idle = threading.Condition()
        self._waiting = 0  # commits told and not yet covered by a finished flush
        self._closed = False
        self.failure: OSError | None = None
        self.flushes = 0  # fdatasync calls made (tests, figures)
        self._thread = threading.Thread(target=self._run, name=f"signoff flush {path}", daemon=True)
        self._thread.start()
        _LIVE.add(self)

    def due(self) -> None:
        """A commit is in the file and not yet on disk: flush it soon."""
        with self._idle:
            self._waiting += 1
        self._due.set()

    def _run(self) -> None:
        while True:
            self._due.wait()
            if self.within > 0 and not self._closed:
                self._hurry.wait(self.within)  # the commits of the next moments join in
            if self._closed:
                return
            self._hurry.clear()
            self._due.clear()  # a commit told after this is flushed by the next turn
            with self._idle:
                covered = self._waiting
            self._flush(covered)
            if self._upkeep is not None:
                try:
                    self._upkeep()
                except Exception as exc:  # upkeep is best effort: the next turn tries again
                    log.debug("store upkeep after a flush of %s failed: %s", self.path, exc)

    def _flush(self, covered: int) -> None:
        try:
            os.fdatasync(self._fd)
        except OSError as exc:
            self.failure = exc
        with self._idle:
            self.flushes += 1
            self._waiting -= covered
            self._idle.notify_all()

    def wait(self, timeout: float | None = None) -> bool:
        """Until every commit told so far is on disk (True), or `timeout` seconds."""
        self._hurry.set()
        with self._idle:
            return self._idle.wait_for(lambda: self._waiting <= 0, timeout)

    def close(self) -> None:
        """Flush what is waiting, here and now, and stop the thread."""
        if self._closed:
            return
        self._closed = True
        self._hurry.set()
        self._due.set()
        self._thread.join()
        with self._idle:
            waiting = self._waiting
        if waiting:
            self._flush(waiting)
        os.close(self._fd)
        _LIVE.discard(self)
