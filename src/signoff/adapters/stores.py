"""One open store per database file and process, shared by the framework adapters.

A framework adapter is often built afresh for each resume (a request handler, a worker, a
script that drops its objects at every pause). Opening the store each time connects,
reads the schema's version, loads the audit keys and, on its first commit, makes SQLite
sync the directory of its WAL (a new connection does that once): work done again for a
file this process has open already. So adapters given a SQLite path (or none: the
workspace's default) share the store the first of them opened, and open another when the
file at that path is not the one they opened (replaced, removed), the store was closed, or
the process forked since. The stores of the last `KEPT` files used stay open for the
adapters to come (one dropped from that list stays open while an adapter holds it). A
`Store` object passed in is used as it is; `memory:` and PostgreSQL URLs are opened anew
(a memory store is private to whoever opens it; a PostgreSQL store pools its own
connections).
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from pathlib import Path

from ..store import Store, default_url, open_store

KEPT = 8  # files whose stores stay open with no adapter holding them (the newest used)
# by real path: (process, a descriptor of the file as it was opened, its store)
_SHARED: OrderedDict[str, tuple[int, int, Store]] = OrderedDict()
_LOCK = threading.Lock()


def sqlite_file(target: str) -> str | None:
    """The file a store URL or path names, if it is a SQLite file (as `open_store` reads it)."""
    if target in ("memory:", "memory://", ":memory:") or target.startswith(
        ("postgresql://", "postgres://")
    ):
        return None
    if target.startswith("sqlite:"):
        path = target[len("sqlite:///") :] if target.startswith("sqlite:///") else ""
        return path or None  # an empty one: `open_store` names the problem
    return None if "://" in target else target


def _still(fd: int, path: str) -> bool:
    """Whether `path` is still the file open as `fd` (held open, its inode cannot be
    reused by a file made at the same path after this one was removed)."""
    try:
        held, now = os.fstat(fd), os.stat(path)
    except OSError:
        return False
    return held.st_nlink > 0 and (held.st_dev, held.st_ino) == (now.st_dev, now.st_ino)


def _usable(store: Store) -> bool:
    try:
        store.last_seq()  # a closed store raises
    except Exception:  # closed (sqlite3.ProgrammingError), or broken: open another
        return False
    return True


def _forget(key: str) -> None:
    """Drop a kept store from the list (not closed: an adapter may still hold it)."""
    _pid, fd, _store = _SHARED.pop(key)
    os.close(fd)


def shared_store(url: str | os.PathLike[str] | None, *, workspace: Path) -> Store:
    """The process's open store for `url` (see the module docstring)."""
    target = default_url(workspace) if url is None else os.fspath(url)
    file = sqlite_file(target)
    if file is None:
        return open_store(target, workspace=workspace)
    key = os.path.realpath(file)
    pid = os.getpid()
    with _LOCK:
        held = _SHARED.get(key)
        if held is not None:
            held_pid, fd, store = held
            if held_pid == pid and _still(fd, key) and _usable(store):
                _SHARED.move_to_end(key)
                return store
            _forget(key)  # (in a forked child, the descriptor is the child's own copy)
        store = open_store(target, workspace=workspace)
        try:
            fd = os.open(key, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
        except OSError:  # not kept: the next adapter opens its own
            return store
        _SHARED[key] = (pid, fd, store)
        while len(_SHARED) > KEPT:
            _forget(next(iter(_SHARED)))
        return store


__all__ = ["shared_store", "sqlite_file"]
