"""The thread that writes the finishes of approved calls off the path to the model's
next turn (see `Guard.arun_once`): one per process, kept for its life.

The event loop's default executor would do, but `asyncio.run` makes a loop per run and
joins that executor's threads as it closes it: a framework run that ran an approved
call would start a thread, and wait for it to end before returning, every time (the
pause/resume cycle: one each). One thread, started once, does the same work without
either. A forked child starts its own (the parent's thread does not exist there).
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor

_POOL: tuple[int, ThreadPoolExecutor] | None = None
_LOCK = threading.Lock()


def finisher() -> ThreadPoolExecutor:
    """This process's finishing thread (started on first use)."""
    global _POOL
    pid = os.getpid()
    with _LOCK:
        if _POOL is None or _POOL[0] != pid:
            _POOL = (pid, ThreadPoolExecutor(max_workers=1, thread_name_prefix="signoff-finish"))
        return _POOL[1]


__all__ = ["finisher"]
