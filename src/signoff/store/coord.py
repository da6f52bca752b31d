"""What the task board and the mailboxes share: the store they live in, its transactions,
the audit entries they append, and the checks on names (see `store.board`).

They ride on a SQL store's own transactions (`Engine._write`: BEGIN IMMEDIATE on SQLite,
a transaction on PostgreSQL) and append their audit entries in the same transaction as
the change they record, exactly as request transitions do.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from ..exceptions import ConfigurationError, InvalidInput
from .base import Draft, clock
from .postgres import PostgresStore
from .sql import SQLTx
from .sqlite import SQLiteStore

NAME_MAX = 200
# letters and digits (any script) and . _ @ : -, starting with a letter or digit: no blank,
# quote or bracket, so no name can pass for words around it ("to everyone (all)")
AGENT_NAME = re.compile(r"[^\W_][\w.@:-]*")
# what a message to every agent is called (`mail read` prints "to everyone"; `--all`):
# an agent named so would make a message to it look like one to all
RESERVED_NAMES = frozenset({"everyone", "all"})
TASK_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,127}")


class BoardTx:
    """One transaction on the board's tables; `?` placeholders on both databases."""

    def __init__(self, tx: SQLTx) -> None:
        self.tx = tx
        self.postgres = tx.dialect == "postgres"

    def q(self, sql: str, params: Sequence[Any] = ()) -> Any:
        if self.postgres:
            sql = sql.replace("?", "%s")
        return self.tx.conn.execute(sql, tuple(params))

    def lock(self, sql: str) -> str:
        """A SELECT that locks its rows on PostgreSQL (SQLite's writer holds the file)."""
        return sql + " FOR UPDATE" if self.postgres else sql


class Coordination:
    """A SQL store seen as a place for tasks and mail (not the memory store: a team of
    agents is several processes, which it cannot serve)."""

    def __init__(self, store: object) -> None:
        if not isinstance(store, SQLiteStore | PostgresStore):
            raise ConfigurationError(
                f"the task board needs a SQLite or PostgreSQL store, not {type(store).__name__} "
                "(agents in several processes share it)"
            )
        self.store: SQLiteStore | PostgresStore = store

    @contextmanager
    def write(self) -> Iterator[BoardTx]:
        with self.store._write() as tx:
            yield BoardTx(tx)

    @contextmanager
    def read(self) -> Iterator[BoardTx]:
        with self.store._read() as tx:
            yield BoardTx(tx)

    def entries(self, drafts: list[Draft], now: float) -> list[tuple[Draft, str]]:
        """The audit entries, encoded (and MAC'd) before the transaction begins."""
        return self.store._entries(drafts, now)

    def append(self, btx: BoardTx, entries: list[tuple[Draft, str]], now: float) -> None:
        if entries:
            btx.tx.append(entries, now)

    def anchored(self) -> None:
        self.store._maybe_anchor()


def now_or(now: float | None) -> float:
    return clock(now)


def name(value: object, what: str) -> str:
    """An agent's name: letters, digits and . _ @ : -, at most 200 characters, not a name
    reserved for every agent (`everyone`, `all`)."""
    if not isinstance(value, str) or not value:
        raise InvalidInput(f"{what} must be a non-empty string, not {value!r}")
    if len(value) > NAME_MAX:
        raise InvalidInput(f"{what} is {len(value)} characters long (at most {NAME_MAX})")
    if not value.isprintable() or value != value.strip():
        raise InvalidInput(
            f"{what} {value!r} holds a control character or surrounding blanks; "
            "use a plain name such as 'writer-1'"
        )
    if AGENT_NAME.fullmatch(value) is None:
        raise InvalidInput(
            f"{what} {value!r} is not a name: letters, digits and . _ @ : - (starting with a "
            "letter or digit), e.g. 'writer-1'"
        )
    if unicodedata.normalize("NFKC", value).casefold() in RESERVED_NAMES:
        raise InvalidInput(
            f"{what} {value!r} is reserved: it is what a message to every agent is called "
            "(sent with to=None, or --all); name the agent otherwise, e.g. 'writer-1'"
        )
    return value


def task_id(value: object, what: str = "task id") -> str:
    if not isinstance(value, str) or TASK_ID.fullmatch(value) is None:
        raise InvalidInput(
            f"{what} {value!r} is not a task id: letters, digits and . _ : - (starting with "
            "a letter or digit), at most 128 characters, e.g. 'write-tests'"
        )
    return value


def count(value: object, what: str, *, least: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        raise InvalidInput(f"{what} must be a whole number of at least {least}, not {value!r}")
    return value


def seconds(value: object, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value < 1e9:
        raise InvalidInput(f"{what} must be a positive number of seconds, not {value!r}")
    return float(value)
