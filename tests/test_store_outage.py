"""PostgreSQL connections that the server drops (`pg_terminate_backend`, what a restart does
to every connection at once, here to this test's own connections only: the shared server
and everyone else's connections stay up): the LISTEN connection is made and LISTENs again,
the pool's broken connections are replaced after one StoreUnavailable, the accounts'
connection is made again without failing a read, the API answers 503 (not a 500 with a
traceback) and then works, and `signoff.runs.worker.work` rides it out, said once.
`test_postgres_restart` restarts a whole (private) server under load."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from signoff.accounts import Accounts
from signoff.approvals import decide
from signoff.exceptions import StoreUnavailable
from signoff.models import Decision
from signoff.runs.worker import work
from signoff.store import open_store
from store_helpers import PG_BASE, Backend

DEADLINE = 30.0


@pytest.fixture
def pg(tmp_path: Path) -> Iterator[tuple[Backend, str, str]]:
    """The test's schema, and a URL whose connections carry a name of their own."""
    backend = Backend("postgres", tmp_path)
    name = f"signoff_outage_{uuid.uuid4().hex[:10]}"
    try:
        yield backend, f"{backend.url}&application_name={name}", name
    finally:
        backend.close()


def drop_connections(name: str) -> int:
    """The server ends every connection of that name, as a restart ends them all."""
    import psycopg

    with psycopg.connect(PG_BASE, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = %s",
            (name,),
        ).fetchall()
    return len(rows)


def test_the_listener_listens_again(pg: tuple[Backend, str, str]) -> None:
    backend, url, name = pg
    store, other = open_store(url), backend.open()
    try:
        assert store.wait_for_event(0.1) is False  # the LISTEN connection is made
        assert drop_connections(name) >= 2  # it and the pool's
        with pytest.raises(StoreUnavailable, match="PostgreSQL store"):
            store.wait_for_event(1.0)
        before = other.last_seq()
        threading.Timer(0.5, lambda: other.record("test.outage", {"n": 1})).start()
        started = time.monotonic()
        assert store.wait_for_event(DEADLINE, after_seq=before) is True
        assert time.monotonic() - started < DEADLINE / 2, "woken by the poll, not a NOTIFY"
    finally:
        store.close()


def test_the_pool_replaces_its_broken_connections(pg: tuple[Backend, str, str]) -> None:
    _, url, name = pg
    store = open_store(url)
    try:
        for _ in range(3):  # several pooled connections, all idle when the server drops them
            threading.Thread(target=store.last_seq).start()
        store.last_seq()
        assert drop_connections(name) >= 1
        failed = 0
        for _ in range(6):
            try:
                store.last_seq()
            except StoreUnavailable:
                failed += 1
        assert failed <= 1  # not one failure per broken connection
    finally:
        store.close()


def test_accounts_reconnect_without_failing_a_read(pg: tuple[Backend, str, str]) -> None:
    _, url, name = pg
    accounts = Accounts(url)
    try:
        token = accounts.add("alice", "approver")
        assert drop_connections(name) == 1
        found = accounts.authenticate(token)
        assert found is not None and found.name == "alice"
    finally:
        accounts.close()


def test_the_api_answers_503_then_works(pg: tuple[Backend, str, str], tmp_path: Path) -> None:
    from starlette.testclient import TestClient

    from signoff.settings import Settings
    from signoff.web.app import create_app

    _, url, name = pg
    app = create_app(url, workspace=tmp_path, settings=Settings())
    with TestClient(app) as client:
        assert client.get("/api/health").status_code == 200
        assert drop_connections(name) >= 1
        codes = [client.get("/api/health").status_code for _ in range(3)]
    assert set(codes) <= {200, 503} and codes[-1] == 200, codes
    if 503 in codes:
        assert codes.index(503) == 0


def test_the_worker_rides_it_out(pg: tuple[Backend, str, str], tmp_path: Path) -> None:
    from web_helpers import SENT, start_run

    backend, url, name = pg
    store, other = open_store(url), backend.open()
    said: list[str] = []
    stop = threading.Event()
    errors: list[BaseException] = []

    def loop() -> None:
        try:
            work(store, poll=0.2, stop=stop.is_set, report=said.append)
        except BaseException as exc:  # the test says which
            errors.append(exc)

    run = start_run(other, tmp_path, {"to": "carol", "body": "hi"})
    SENT.clear()
    thread = threading.Thread(target=loop)
    thread.start()
    try:
        time.sleep(0.5)  # waiting for a decision, LISTENing
        assert drop_connections(name) >= 2
        decide(other, run.waiting_on[0], Decision("approve"), actor="alice")
        deadline = time.monotonic() + DEADLINE
        while other.get_run(run.id).status != "finished":
            assert not errors, errors
            assert time.monotonic() < deadline, (other.get_run(run.id), said)
            time.sleep(0.05)
    finally:
        stop.set()
        thread.join(timeout=DEADLINE)
        store.close()
    assert not errors, errors
    assert [s["to"] for s in SENT] == ["carol"]
    assert len([line for line in said if "the store is unreachable" in line]) == 1, said
    assert len([line for line in said if "the store is back" in line]) == 1, said
