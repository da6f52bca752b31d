"""Numbered schema migrations, one directory per backend: ``NNNN_name.sql``.

A migration is applied once, in a transaction, and recorded in ``schema_migrations``. A
database that records a version this code does not know was written by a newer signoff
and is refused.
"""

from __future__ import annotations

import functools
from pathlib import Path

from ...exceptions import SchemaVersionError

HERE = Path(__file__).parent


@functools.cache
def _load(dialect: str) -> tuple[tuple[int, str], ...]:
    return tuple(
        (int(path.name[:4]), path.read_text(encoding="utf-8"))
        for path in sorted((HERE / dialect).glob("[0-9][0-9][0-9][0-9]_*.sql"))
    )


def load(dialect: str) -> list[tuple[int, str]]:
    return list(_load(dialect))


def up_to_date(applied: list[int], dialect: str) -> bool:
    """Every known migration is applied (and none newer: that one is refused)."""
    return set(applied) == {version for version, _ in _load(dialect)}


def latest(dialect: str) -> int:
    found = load(dialect)
    return found[-1][0] if found else 0


def check_not_newer(applied: list[int], dialect: str, where: str) -> None:
    known = latest(dialect)
    if applied and max(applied) > known:
        raise SchemaVersionError(
            f"{where}: the database schema is at version {max(applied)}, newer than this "
            f"signoff knows ({known}). Upgrade signoff; the database was left untouched."
        )


def sqlite_statements(script: str) -> list[str]:
    """Split a SQLite script into statements (a trigger's body keeps its own ';')."""
    import sqlite3

    out: list[str] = []
    pending = ""
    for piece in script.split(";"):
        pending += piece + ";"
        if sqlite3.complete_statement(pending):
            if pending.strip(" \n\t;"):
                out.append(pending.strip())
            pending = ""
    if pending.strip(" \n\t;"):
        out.append(pending.strip().rstrip(";"))
    return out
