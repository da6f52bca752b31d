"""SQLite uses its partial index of open requests for the queries that run all the time
(the inbox, the expiry and lease sweeps), and a finished request leaves that index."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from signoff.models import Decision
from signoff.store import open_store
from signoff.store.sql import OPEN_TERM, SQLTx
from store_helpers import make_request


class PlanTx(SQLTx):
    """Records the query plan of every statement it runs."""

    plans: list[str]

    def _raw(self, sql: str, params: tuple[object, ...] = ()) -> object:  # type: ignore[override]
        detail = " | ".join(r[3] for r in self.conn.execute(f"EXPLAIN QUERY PLAN {sql}", params))
        self.plans.append(detail)
        return super()._raw(sql, params)


def test_open_request_queries_use_the_partial_index(tmp_path: Path) -> None:
    store = open_store(str(tmp_path / "s.db"))
    try:
        for n in range(30):
            r = store.create_request(make_request())
            if n % 3 == 0:
                store.decide(r.id, Decision("reject", reason="no"), actor="ann")
        tx = store._tx  # type: ignore[attr-defined]
        tx.__class__ = PlanTx
        tx.plans = []
        assert len(store.list_requests(state="pending")) == 20
        store.expire_stale()
        store.sweep_leases()
        assert len(tx.plans) == 3, tx.plans
        assert all("signoff_requests_open" in plan for plan in tx.plans), tx.plans
        assert len(store.list_requests(state="rejected")) == 10  # not indexed: still found
    finally:
        store.close()


def test_only_open_requests_are_in_the_index(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    store = open_store(str(path))
    try:
        kept = store.create_request(make_request())
        done = store.create_request(make_request())
        store.decide(done.id, Decision("reject", reason="no"), actor="ann")
        conn = sqlite3.connect(path)
        indexed = conn.execute(
            f"SELECT id FROM signoff_requests INDEXED BY signoff_requests_open WHERE {OPEN_TERM}"
        ).fetchall()
        conn.close()
        assert indexed == [(kept.id,)]
    finally:
        store.close()


def test_deliveries_are_found_through_their_index(tmp_path: Path) -> None:
    from signoff.store.sql import _SQL

    path = tmp_path / "s.db"
    open_store(str(path)).close()
    conn = sqlite3.connect(path)
    plan = " | ".join(
        r[3] for r in conn.execute(f"EXPLAIN QUERY PLAN {_SQL['deliveries']}", ("req",))
    )
    conn.close()
    assert "signoff_events_deliveries" in plan, plan


def test_the_open_index_condition_is_the_queries_term_without_an_in_list(tmp_path: Path) -> None:
    # SQLite evaluates a partial index's condition on every insert and update of the row;
    # an IN list of more than two values builds a temporary table each time (migration 0011)
    path = tmp_path / "s.db"
    open_store(str(path)).close()
    conn = sqlite3.connect(path)
    (sql,) = conn.execute(
        "SELECT sql FROM sqlite_master WHERE name = 'signoff_requests_open'"
    ).fetchone()
    conn.close()
    assert OPEN_TERM in sql and " IN " not in sql.upper(), sql
