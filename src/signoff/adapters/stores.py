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
_SHARED: OrderedDict[str, tuple[int, tuple[int, int], Store]] = OrderedDict()  # by real path
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


def _file_id(path: str) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino


def _usable(store: Store) -> bool:
    try:
        store.last_seq()  # a closed store raises
    except Exception:  # closed (sqlite3.ProgrammingError), or broken: open another
        return False
    return True


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
            held_pid, held_id, store = held
            if held_pid == pid and held_id == _file_id(key) and _usable(store):
                _SHARED.move_to_end(key)
                return store
            del _SHARED[key]  # not closed: an adapter may still hold it
        store = open_store(target, workspace=workspace)
        opened = _file_id(key)
        if opened is not None:
            _SHARED[key] = (pid, opened, store)
            while len(_SHARED) > KEPT:
                _SHARED.popitem(last=False)
        return store


__all__ = ["shared_store", "sqlite_file"]
