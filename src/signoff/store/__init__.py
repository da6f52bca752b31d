"""Durable approvals: one `Store` protocol, three backends, chosen by a URL.

    open_store("memory:")                        # tests and docs
    open_store("sqlite:///rel/signoff.db")       # sqlite:////abs/path; or a plain path
    open_store("postgresql://user@host/db")      # many processes, many machines
    open_store()                                 # $SIGNOFF_DB, else .signoff/signoff.db

Opening a store applies its pending schema migrations; a database written by a newer
signoff is refused. The lifecycle and its guarantees are described in `store.base`; durable
runs (a versioned document plus an append-only transcript, leased to one worker at a time)
in `store.runstore`.
"""

from __future__ import annotations

import os

from ..exceptions import ConfigurationError
from ..plainpath import joined
from .base import Claim, Draft, Event

TYPE_CHECKING = False  # not typing's: see signoff/__init__.py

if TYPE_CHECKING:
    from pathlib import Path

    from .base import InDoubtOutcome
    from .protocol import Store
else:

    def __getattr__(name):
        """`Store` and `InDoubtOutcome`, which import typing, made when first asked for."""
        if name == "Store":
            from .protocol import Store

            return Store
        if name == "InDoubtOutcome":
            from . import base

            return base.InDoubtOutcome
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["Claim", "Draft", "Event", "InDoubtOutcome", "Store", "default_url", "open_store"]

DEFAULT_PATH = ".signoff/signoff.db"  # under the workspace (`root / DEFAULT_PATH` reads the same)


def default_url(workspace: str | Path | None = None) -> str:
    """$SIGNOFF_DB, else `.signoff/signoff.db` under the workspace (default: cwd)."""
    env = os.environ.get("SIGNOFF_DB")
    if env:
        return env
    return joined(workspace or os.getcwd(), DEFAULT_PATH)


def open_store(url: str | Path | None = None, *, workspace: str | Path | None = None) -> Store:
    """Open (and migrate) the store named by `url`; see the module docstring."""
    target = str(url) if url is not None else default_url(workspace)
    if target in ("memory:", "memory://", ":memory:"):
        from .memory import MemoryStore

        return MemoryStore()
    if target.startswith(("postgresql://", "postgres://")):
        from .postgres import PostgresStore

        return PostgresStore(target)
    if target.startswith("sqlite:"):
        # SQLAlchemy's convention: sqlite:///relative.db, sqlite:////absolute/path.db
        path = target[len("sqlite:///") :] if target.startswith("sqlite:///") else ""
        if not path:
            raise ConfigurationError(
                f"store URL {target!r} names no file (sqlite:///relative.db or "
                "sqlite:////absolute/path.db)"
            )
        from .sqlite import SQLiteStore

        return SQLiteStore(path)
    if "://" in target:
        raise ConfigurationError(
            f"unknown store URL {target!r}: use memory:, sqlite:///PATH, a file path, "
            "or postgresql://…"
        )
    from .sqlite import SQLiteStore

    return SQLiteStore(target)
