"""Writing the record of allowed calls beside the call instead of before it.

A durable write costs an fsync (about 2 ms on a busy disk), which alone is more than the
proxy may add to a call. Asks and denies are written first, as everywhere in signoff: a
person's decision and a refusal never depend on a write that may not happen. An allowed
call's verdict and outcome go to this one writer thread, in order, while the call runs.
If a write fails, the proxy refuses every call from then on (it cannot keep its record);
what a crash can lose is the record of the allowed calls in flight at that moment.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable

BACKLOG = 1000  # writes waiting at most: beyond, a call waits for the writer


class RecordBroken(Exception):
    """A write of the record failed: no call may run unrecorded."""


class Recorder:
    def __init__(self) -> None:
        self._queue: queue.Queue[Callable[[], None] | None] = queue.Queue(maxsize=BACKLOG)
        self.broken: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="signoff-mcp-record", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while True:
            work = self._queue.get()
            if work is None:
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

    def submit(self, work: Callable[[], None]) -> None:
        self.check()
        self._queue.put(work)

    def close(self) -> None:
        """Write what is waiting, then stop."""
        self._queue.put(None)
        self._thread.join()


__all__ = ["RecordBroken", "Recorder"]
