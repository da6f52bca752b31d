"""A deadline for every wait on something another process holds.

A process that holds a lock and stops (SIGSTOP, a debugger, a machine swapping hard)
holds it for as long as it is stopped. Every place the store waits on one (the SQLite
writers' file lock and SQLite's own, a PostgreSQL row or advisory lock, the key file's
and the anchor's locks) waits at most `lock_wait()` seconds: `$SIGNOFF_LOCK_TIMEOUT`,
else `DEFAULT_LOCK_WAIT_S`, well under the shortest time a coding agent's client gives a
hook (60 s). Then it gives up with one line (`LockTimeout`) naming the lock and, when the
system says, the process holding it: nothing was written, and a hook blocks the call.

`FileLock` is an exclusive `flock` with that deadline. `flock` itself waits forever, so
a contended lock is waited for on a helper thread (`_thread`: a hook does not import
`threading`), which the caller stops waiting for at the deadline; a waiter given up on
lets the lock go the moment it gets it, on a descriptor of its own, so the lock's owner
is never in doubt. An uncontended lock costs one non-blocking `flock`, as before.
"""

from __future__ import annotations

import _thread
import os

from .exceptions import ConfigurationError

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

LOCK_WAIT_ENV = "SIGNOFF_LOCK_TIMEOUT"
DEFAULT_LOCK_WAIT_S = 10.0
_MAX_LOCK_WAIT_S = 3600.0


class LockTimeout(ConfigurationError):
    """A lock held by another process for longer than the deadline: nothing was done."""


def lock_wait() -> float:
    """The longest any wait on a lock lasts, in seconds ($SIGNOFF_LOCK_TIMEOUT)."""
    text = os.environ.get(LOCK_WAIT_ENV)
    if not text:
        return DEFAULT_LOCK_WAIT_S
    try:
        seconds = float(text)
    except ValueError:
        seconds = -1.0
    if not 0 < seconds <= _MAX_LOCK_WAIT_S:
        raise ConfigurationError(
            f"${LOCK_WAIT_ENV} must be a number of seconds above 0 and at most "
            f"{_MAX_LOCK_WAIT_S:g}, not {text!r}"
        )
    return seconds


def holders(path: str, start: int | None = None) -> str:
    """Who holds a lock on `path` (on its byte `start`, for a POSIX range lock), from
    /proc/locks: 'process 123 (python -m signoff worker, stopped)'; '' when unknown."""
    try:
        info = os.stat(path)
        with open("/proc/locks", encoding="ascii", errors="replace") as handle:
            table = handle.read().splitlines()
    except OSError:
        return ""
    where = f"{os.major(info.st_dev):02x}:{os.minor(info.st_dev):02x}:{info.st_ino}"
    found: list[str] = []
    for line in table:
        parts = line.split()
        if len(parts) < 8 or parts[1] == "->" or parts[5] != where:
            continue  # "->": a process waiting for the lock, not holding it
        if start is not None and not _covers(parts[6], parts[7], start):
            continue
        pid = parts[4]
        if pid.isdigit() and int(pid) != os.getpid() and pid not in found:
            found.append(pid)
    return ", ".join(_process(pid) for pid in found)


def _covers(first: str, last: str, byte: int) -> bool:
    try:
        return int(first) <= byte and (last == "EOF" or byte <= int(last))
    except ValueError:
        return False


_STATES = {"T": "stopped", "t": "stopped by a debugger", "D": "waiting for the disk", "Z": "dead"}


def _process(pid: str) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            words = handle.read().rstrip(b"\0").split(b"\0")
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as handle:
            state = handle.read().rpartition(")")[2].split()[0]
    except (OSError, IndexError):
        return f"process {pid}"
    text = " ".join(w.decode("utf-8", "replace") for w in words)
    command = " ".join("".join(c if c.isprintable() else " " for c in text).split())
    if len(command) > 80:
        command = command[:79] + "…"
    more = f", {_STATES[state]}" if state in _STATES else ""
    return f"process {pid} ({command}{more})"


def held_too_long(what: str, path: str, seconds: float, holder: str) -> LockTimeout:
    by = f" by {holder}" if holder else " by another process"
    return LockTimeout(
        f"{what} {path} was held{by} for more than {seconds:g} s, so nothing was written "
        f"(${LOCK_WAIT_ENV} sets how long to wait)"
    )


class FileLock:
    """An exclusive `flock` on `path`, taken within a deadline (see the module)."""

    def __init__(self, path: str, what: str, mode: int = 0o644) -> None:
        self.path = path
        self.what = what  # how a message names it: "the store's write lock"
        self._mode = mode
        self.fd = self._open()

    def _open(self) -> int:
        return os.open(self.path, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), self._mode)

    def acquire(self, seconds: float | None = None) -> None:
        try:
            fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            pass
        seconds = lock_wait() if seconds is None else seconds
        fd = self.fd
        told = _thread.allocate_lock()
        told.acquire()
        guard = _thread.allocate_lock()
        state: list[object] = [False, False, None]  # taken, given up on, error

        def wait() -> None:
            error: OSError | None = None
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
            except OSError as exc:
                error = exc
            with guard:
                if state[1]:  # the caller went on: the descriptor is ours to close
                    os.close(fd)  # which lets the lock go
                    return
                state[0], state[2] = error is None, error
            told.release()

        _thread.start_new_thread(wait, ())
        told.acquire(timeout=seconds)
        with guard:
            taken, error = state[0], state[2]
            if not taken and error is None:
                state[1] = True
        if isinstance(error, OSError):
            raise error
        if taken:
            return
        self.fd = self._open()  # the old descriptor went to the waiter given up on
        raise held_too_long(self.what, self.path, seconds, holders(self.path))

    def release(self) -> None:
        fcntl.flock(self.fd, fcntl.LOCK_UN)

    def close(self) -> None:
        os.close(self.fd)

    def __enter__(self) -> FileLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


__all__ = ["DEFAULT_LOCK_WAIT_S", "LOCK_WAIT_ENV", "FileLock", "LockTimeout", "lock_wait"]
