"""Whether a store URL names a store that already exists, found without creating anything.

Opening a store creates it (the SQLite file and its directory, the PostgreSQL tables): right
for the commands that record, wrong for the ones that only read. A read of a mistyped
`--workspace` must say so, not quietly create an empty store and report "Inbox empty".
"""

from __future__ import annotations

import re
from pathlib import Path

from ..exceptions import ConfigurationError

MEMORY_URLS = ("memory:", "memory://", ":memory:")
POSTGRES_PREFIXES = ("postgresql://", "postgres://")


def sqlite_path(target: str) -> Path | None:
    """The file a SQLite store URL or plain path names (None: not a SQLite URL)."""
    if target in MEMORY_URLS or target.startswith(POSTGRES_PREFIXES):
        return None
    if target.startswith("sqlite:"):
        # SQLAlchemy's convention: sqlite:///relative.db, sqlite:////absolute/path.db
        path = target[len("sqlite:///") :] if target.startswith("sqlite:///") else ""
        return Path(path) if path else None
    if "://" in target:
        return None
    return Path(target)


def _hide_password(url: str) -> str:
    return re.sub(r"^([a-z]+://[^:/@]*):[^@/]*@", r"\1@", url)


def _postgres_has_store(url: str) -> bool:
    try:
        import psycopg
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise ConfigurationError(
            "PostgreSQL support needs psycopg 3: pip install 'signoff[postgres]'"
        ) from exc
    try:
        with psycopg.connect(url, connect_timeout=5, autocommit=True) as conn:
            row = conn.execute("SELECT to_regclass('schema_migrations')").fetchone()
    except psycopg.Error as exc:
        raise ConfigurationError(
            f"cannot reach the PostgreSQL store {_hide_password(url)}: {' '.join(str(exc).split())}"
        ) from None
    return row is not None and row[0] is not None


def store_exists(target: str) -> bool:
    """Whether `target` (a store URL or path) names a store that exists; nothing is created.
    Memory stores always exist; an unknown URL is left for `open_store` to refuse."""
    if target in MEMORY_URLS:
        return True
    if target.startswith(POSTGRES_PREFIXES):
        return _postgres_has_store(target)
    path = sqlite_path(target)
    return path is None or path.is_file()


def describe(target: str) -> str:
    """Where the store is, for a message (a PostgreSQL URL without its password)."""
    path = sqlite_path(target)
    if path is not None:
        return str(path.absolute())
    return _hide_password(target)


__all__ = ["describe", "sqlite_path", "store_exists"]
