"""Fixtures and raw-database helpers for the store tests (imported, not a conftest).

`backend` is parametrised over memory, sqlite (a real file in tmp_path) and postgres (the
real server, one fresh schema per test, dropped afterwards). PostgreSQL tests skip with a
reason only when the server is unreachable and SIGNOFF_REQUIRE_POSTGRES is unset.
"""

from __future__ import annotations

import json
import os
import sqlite3
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from signoff.models import Request, ToolCall, Verdict
from signoff.store import Store, open_store
from signoff.store.memory import MemoryDB, MemoryStore

PG_BASE = os.environ.get("SIGNOFF_TEST_PG", "postgresql://postgres@127.0.0.1:5432/test")


def postgres_or_skip() -> None:
    try:
        import psycopg

        psycopg.connect(PG_BASE, connect_timeout=3).close()
    except Exception as exc:
        if os.environ.get("SIGNOFF_REQUIRE_POSTGRES"):
            pytest.fail(f"PostgreSQL required (SIGNOFF_REQUIRE_POSTGRES) but unreachable: {exc}")
        pytest.skip(f"PostgreSQL unreachable at {PG_BASE}: {exc}")


def pg_url(schema: str) -> str:
    return f"{PG_BASE}?options=-csearch_path%3D{schema}"


class Backend:
    """One test database; `open()` gives a new Store object over the same data."""

    def __init__(self, kind: str, tmp_path: Path) -> None:
        self.kind = kind
        self.stores: list[Store] = []
        self.memory = MemoryDB()
        self.path = tmp_path / "signoff.db"
        self.schema = f"signoff_test_{uuid.uuid4().hex[:12]}"
        if kind == "postgres":
            postgres_or_skip()
            self.sql(f"CREATE SCHEMA {self.schema}")

    @property
    def url(self) -> str:
        return {"memory": "memory:", "sqlite": str(self.path), "postgres": pg_url(self.schema)}[
            self.kind
        ]

    def open(self) -> Store:
        store: Store = MemoryStore(self.memory) if self.kind == "memory" else open_store(self.url)
        self.stores.append(store)
        return store

    def close(self) -> None:
        for store in self.stores:
            store.close()
        if self.kind == "postgres":
            self.sql(f"DROP SCHEMA IF EXISTS {self.schema} CASCADE")

    def sql(self, statement: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        """Raw SQL behind the store's back (tampering); `?` placeholders."""
        if self.kind == "sqlite":
            conn = sqlite3.connect(self.path, isolation_level=None)
            try:
                return list(conn.execute(statement, params).fetchall())
            finally:
                conn.close()
        import psycopg

        url = PG_BASE if statement.startswith(("CREATE SCHEMA", "DROP SCHEMA")) else self.url
        with psycopg.connect(url, autocommit=True) as conn:
            cur = conn.execute(statement.replace("?", "%s"), params)  # type: ignore[arg-type]
            return list(cur.fetchall()) if cur.description else []

    # -- tampering, the same on every backend

    def edit_doc(self, request_id: str, fn: Callable[[dict[str, Any]], None]) -> None:
        if self.kind == "memory":
            row = self.memory.requests[request_id]
            doc = json.loads(row[8])
            fn(doc)
            row[8] = json.dumps(doc)
            return
        (text,) = self.sql("SELECT doc FROM signoff_requests WHERE id = ?", (request_id,))[0]
        doc = json.loads(text)
        fn(doc)
        self.sql("UPDATE signoff_requests SET doc = ? WHERE id = ?", (json.dumps(doc), request_id))

    def edit_run_doc(self, run_id: str, fn: Callable[[dict[str, Any]], None]) -> None:
        if self.kind == "memory":
            row = self.memory.runs[run_id]
            doc = json.loads(row[-1])
            fn(doc)
            row[-1] = json.dumps(doc)
            return
        (text,) = self.sql("SELECT doc FROM signoff_runs WHERE id = ?", (run_id,))[0]
        doc = json.loads(text)
        fn(doc)
        self.sql("UPDATE signoff_runs SET doc = ? WHERE id = ?", (json.dumps(doc), run_id))

    def message_rows(self, run_id: str) -> list[tuple[int, str]]:
        """(seq, stored text) of a run's messages, in order."""
        if self.kind == "memory":
            return list(enumerate(self.memory.messages.get(run_id, [])))
        return [
            (int(r[0]), str(r[1]))
            for r in self.sql(
                "SELECT seq, msg FROM signoff_messages WHERE run_id = ? ORDER BY seq", (run_id,)
            )
        ]

    def lease(self, run_id: str) -> tuple[str | None, float | None]:
        if self.kind == "memory":
            row = self.memory.runs[run_id]
            return row[9], row[10]
        owner, expires = self.sql(
            "SELECT lease_owner, lease_expires_at FROM signoff_runs WHERE id = ?", (run_id,)
        )[0]
        return owner, expires

    def events(self) -> list[list[Any]]:
        """[seq, ts, kind, request_id, run_id, entry, prev_hash, hash] in seq order (SQLite
        adds a ninth column: the chain's end mark)."""
        if self.kind == "memory":
            return [list(self.memory.events[s]) for s in sorted(self.memory.events)]
        head = ", head" if self.kind == "sqlite" else ""
        return [
            list(r)
            for r in self.sql(
                f"SELECT seq, ts, kind, request_id, run_id, entry, prev_hash, hash{head} "
                "FROM signoff_events ORDER BY seq"
            )
        ]

    def replace_events(self, rows: list[list[Any]]) -> None:
        if self.kind == "memory":
            self.memory.events = {r[0]: list(r) for r in rows}
            return
        self.sql("DELETE FROM signoff_events")
        for r in rows:
            if self.kind == "sqlite":  # a row written by a test has no end mark
                self.sql(
                    "INSERT INTO signoff_events (seq, ts, kind, request_id, run_id, "
                    "entry, prev_hash, hash, head) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (*r[:8], r[8] if len(r) > 8 else None),
                )
                continue
            self.sql(
                "INSERT INTO signoff_events (seq, ts, kind, request_id, run_id, entry, "
                "prev_hash, hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                tuple(r),
            )


@pytest.fixture(name="backend", params=["memory", "sqlite", "postgres"])
def backend_fixture(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backend]:
    b = Backend(request.param, tmp_path)
    try:
        yield b
    finally:
        b.close()


@pytest.fixture(name="store")
def store_fixture(backend: Backend) -> Store:
    return backend.open()


def make_request(**kw: Any) -> Request:
    fields: dict[str, Any] = {
        "id": "",
        "call": ToolCall("bash", {"command": "rm -rf build"}, "call_1"),
        "verdict": Verdict("ask", "high", "ask:Bash(rm *)", ("deletes files",), "destructive"),
        "preview": "rm -rf build",
        "run_id": "run-1",
    }
    fields.update(kw)
    return Request(**fields)
