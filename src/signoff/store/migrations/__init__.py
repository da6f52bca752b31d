"""Numbered schema migrations, one directory per backend: ``NNNN_name.sql``.

A migration is applied once, in a transaction, and recorded in ``schema_migrations``. A
database that records a version this code does not know was written by a newer signoff
and is refused.
"""

from __future__ import annotations

import functools
import os

from ...exceptions import SchemaVersionError

HERE = os.path.dirname(os.path.abspath(__file__))


@functools.cache
def _names(dialect: str) -> tuple[str, ...]:
    """The migrations' file names, in order: `NNNN_name.sql`."""
    return tuple(
        sorted(
            name
            for name in os.listdir(os.path.join(HERE, dialect))
            if name.endswith(".sql")
            and name[:4].isascii()
            and name[:4].isdigit()
            and name[4:5] == "_"
        )
    )


def _versions(dialect: str) -> set[int]:
    # from the names alone: opening an up-to-date store reads no script
    return {int(name[:4]) for name in _names(dialect)}


@functools.cache
def _load(dialect: str) -> tuple[tuple[int, str], ...]:
    return tuple(
        (int(name[:4]), _read(os.path.join(HERE, dialect, name))) for name in _names(dialect)
    )


def _read(path: str) -> str:
    with open(path, encoding="utf-8") as handle:
        return handle.read()


def load(dialect: str) -> list[tuple[int, str]]:
    return list(_load(dialect))


def up_to_date(applied: list[int], dialect: str) -> bool:
    """Every known migration is applied (and none newer: that one is refused)."""
    return set(applied) == _versions(dialect)


def latest(dialect: str) -> int:
    return max(_versions(dialect), default=0)


def check_not_newer(applied: list[int], dialect: str, where: str) -> None:
    known = latest(dialect)
    if applied and max(applied) > known:
        raise SchemaVersionError(
            f"{where}: the database schema is at version {max(applied)}, newer than this "
            f"signoff knows ({known}). Upgrade signoff; the database was left untouched."
        )


def sqlite_statements(script: str) -> list[str]:
    """Split a SQLite script into statements (a trigger's body keeps its own ';')."""
    try:  # the sqlite3 package's own, without its date adapters (see store.sqlite)
        from _sqlite3 import complete_statement
    except ImportError:  # pragma: no cover - an interpreter without it
        from sqlite3 import complete_statement

    out: list[str] = []
    pending = ""
    for piece in script.split(";"):
        pending += piece + ";"
        if complete_statement(pending):
            if pending.strip(" \n\t;"):
                out.append(pending.strip())
            pending = ""
    if pending.strip(" \n\t;"):
        out.append(pending.strip().rstrip(";"))
    return out
