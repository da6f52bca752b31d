"""Reading a person's answers so that only keys typed after a box count.

A key pressed while the agent was busy (an Enter, a `y`) waits in the terminal's input
queue; read later, it would decide a box the person never saw. `LineSource.discard_typed_ahead`
throws that queue away (`termios.tcflush(fd, TCIFLUSH)`) right after a box is drawn. On a
terminal the lines are read from the file descriptor with `os.read`, so no line can hide in
Python's own `sys.stdin` buffer and survive the flush. Other streams (tests, an injected
`StringIO`) are read as given; there is nothing typed ahead to drop.

A Ctrl-C reaches a terminal read as a key (see `ctrl_c`): `catching_ctrl_c` opens the time
during which `readline` raises `KeyboardInterrupt` for a press, whenever it came.
"""

from __future__ import annotations

import codecs
import contextlib
import os
from collections.abc import Iterator
from typing import Any, TextIO

from .ctrl_c import CtrlC, catch_ctrl_c

try:  # termios exists on POSIX only; elsewhere there is no input queue we can drop
    import termios
except ImportError:  # pragma: no cover - Windows
    termios = None  # type: ignore[assignment]

_CHUNK = 4096


def _terminal_fd(stream: Any) -> int | None:
    """The descriptor of `stream` if it is a terminal, else None."""
    try:
        fd = int(stream.fileno())
        return fd if os.isatty(fd) else None
    except (AttributeError, ValueError, OSError, TypeError):
        return None


class LineSource:
    """Lines from `stream`; on a terminal, straight from its descriptor."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.fd = _terminal_fd(stream)
        self._pending = b""  # bytes after the last newline of one read (non-canonical mode)
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self._ctrl_c: CtrlC | None = None

    @contextlib.contextmanager
    def catching_ctrl_c(self) -> Iterator[None]:
        """While open, a Ctrl-C pressed at any moment is raised by the next `readline` (a
        stream that is no terminal cannot be waited on beside the signal: left as is)."""
        if self.fd is None:
            yield
            return
        with catch_ctrl_c() as self._ctrl_c:
            try:
                yield
            finally:
                self._ctrl_c = None

    @property
    def is_terminal(self) -> bool:
        return self.fd is not None

    def discard_typed_ahead(self) -> None:
        """Drop every key typed so far that no prompt has read yet."""
        if self.fd is None:
            return
        self._pending = b""
        self._decoder.reset()
        if termios is not None:
            with contextlib.suppress(termios.error, OSError):
                termios.tcflush(self.fd, termios.TCIFLUSH)

    def readline(self) -> str:
        """One line with its newline; "" at end of input (Ctrl-D, a closed terminal)."""
        if self.fd is None:
            return self.stream.readline()
        ctrl_c = self._ctrl_c
        if ctrl_c is not None:
            ctrl_c.raise_pending()
        data = self._pending
        while b"\n" not in data:
            if ctrl_c is not None:
                ctrl_c.wait_for(self.fd)
            chunk = os.read(self.fd, _CHUNK)
            if not chunk:
                break
            data += chunk
        line, newline, self._pending = data.partition(b"\n")
        return self._decoder.decode(line + newline, final=True)


__all__ = ["LineSource"]
