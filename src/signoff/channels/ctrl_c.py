"""Ctrl-C at a prompt, taken as a key the prompt reads rather than as an exception raised
wherever the main thread happens to be.

Python turns SIGINT into `KeyboardInterrupt` lazily: its C handler only sets a flag, and
the interpreter raises at its next check. A blocking `read()` entered after the signal
landed but before that check (a loaded machine deschedules the process right there), or
during which the C handler ran on another thread, is not interrupted: the prompt ignores
the Ctrl-C until another key is typed. And a `KeyboardInterrupt` raised while the box is
being printed escapes the dialog, which never gets to reject the call.

While a dialog reads a terminal, `catch_ctrl_c` replaces Python's default SIGINT handler
with one that counts presses, and points `signal.set_wakeup_fd` at a pipe: CPython's C
handler writes to it the moment the signal lands, on whichever thread. `CtrlC.wait_for`
waits for the terminal and that pipe together, so a press before the wait began or during
it ends the wait, and `KeyboardInterrupt` is raised there, where the dialog expects it. A
press no prompt read is raised when the dialog closes, as Python would have raised it.

Python's signal handlers run in the main thread only, and an application's own SIGINT
handler (or SIGINT ignored, or an event loop's wakeup fd) is left alone: there, and on
Windows, the prompt reads as before.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import threading
from collections.abc import Iterator
from types import FrameType


class CtrlC:
    """The Ctrl-C presses of one dialog that no prompt has answered yet."""

    def __init__(self, wakeup: int) -> None:
        self.presses = 0
        self.wakeup = wakeup  # the read end of the pipe CPython writes to at each signal

    def note(self, signum: int, frame: FrameType | None) -> None:
        """The SIGINT handler while a dialog is open: count, never raise mid-statement."""
        self.presses += 1

    def raise_pending(self) -> None:
        """Raise `KeyboardInterrupt` for one press not answered yet, if there is one."""
        if self.presses:
            self.presses -= 1
            raise KeyboardInterrupt

    def wait_for(self, fd: int) -> None:
        """Return once `fd` has input; raise `KeyboardInterrupt` at a Ctrl-C pressed before
        this call or during it. A press wins over input waiting beside it."""
        while True:  # each turn round runs the handlers of the signals that have landed
            self.raise_pending()
            readable, _, _ = select.select([fd, self.wakeup], [], [])
            if self.wakeup not in readable:
                return
            with contextlib.suppress(BlockingIOError):
                while os.read(self.wakeup, 512):
                    pass


def _default_sigint_in_main_thread() -> bool:
    return (
        os.name == "posix"
        and threading.current_thread() is threading.main_thread()
        and signal.getsignal(signal.SIGINT) is signal.default_int_handler
    )


@contextlib.contextmanager
def _wakeup_pipe() -> Iterator[int | None]:
    """Point CPython's signal wakeup fd at a new pipe and yield its read end; None, and
    nothing changed, when the fd is taken already (an event loop listens to signals)."""
    read_end, write_end = os.pipe()
    try:
        os.set_blocking(read_end, False)
        os.set_blocking(write_end, False)
        previous = signal.set_wakeup_fd(write_end, warn_on_full_buffer=False)
        if previous != -1:
            signal.set_wakeup_fd(previous)
            yield None
            return
        try:
            yield read_end
        finally:
            signal.set_wakeup_fd(-1)
    finally:
        os.close(read_end)
        os.close(write_end)


@contextlib.contextmanager
def catch_ctrl_c() -> Iterator[CtrlC | None]:
    """Ctrl-C as a counted key for the time of a dialog; None where it cannot be (see the
    module's docstring), and Python's `KeyboardInterrupt` applies as usual."""
    if not _default_sigint_in_main_thread():
        yield None
        return
    with _wakeup_pipe() as wakeup:
        if wakeup is None:
            yield None
            return
        ctrl_c = CtrlC(wakeup)
        previous = signal.signal(signal.SIGINT, ctrl_c.note)
        try:
            yield ctrl_c
        finally:
            signal.signal(signal.SIGINT, previous)
    ctrl_c.raise_pending()  # pressed after the last prompt: the caller's Ctrl-C, not lost


__all__ = ["CtrlC", "catch_ctrl_c"]
