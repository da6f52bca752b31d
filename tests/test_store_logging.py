"""The store logs under `signoff.store.*`: claims and sweeps (info), retries and waits for a
pooled connection (debug), migrations (info); ids and workers, never a token or a key."""

from __future__ import annotations

import logging
import threading
from pathlib import Path

import pytest

from signoff.exceptions import AlreadyDecided
from signoff.models import Decision
from signoff.store import open_store
from signoff.store.postgres import POOL_WAIT_LOG_S, PostgresStore
from store_helpers import Backend, make_request, pg_url


def _logged(caplog: pytest.LogCaptureFixture, level: int) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name.startswith("signoff.store") and r.levelno == level]


def test_a_claim_says_who_claimed_what_and_never_the_token(
    db: Backend, caplog: pytest.LogCaptureFixture
) -> None:
    store = db.open()
    request = store.create_request(make_request())
    store.decide(request.id, Decision("approve"), actor="ann")
    with caplog.at_level(logging.DEBUG, logger="signoff.store"):
        claim = store.claim(request.id, worker="worker-7", lease_seconds=60)
        store.finish(request.id, claim.token, ok=True)
    claims = [r.getMessage() for r in _logged(caplog, logging.INFO) if "claimed" in r.getMessage()]
    assert len(claims) == 1, caplog.text
    assert request.id in claims[0] and "worker-7" in claims[0] and "lease until" in claims[0]
    assert claim.token not in caplog.text
    keys = store._keys  # type: ignore[attr-defined]
    for secret in [*keys.masters.values(), *(keys.key(p) for p in ("binding", "audit"))]:
        assert secret.hex() not in caplog.text


def test_a_wait_for_a_pooled_connection_is_logged(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    backend = Backend("postgres", tmp_path)  # the schema (or a skip without a server)
    store = PostgresStore(pg_url(backend.schema), max_size=1)
    try:
        request = store.create_request(make_request())
        held, done = threading.Event(), threading.Event()

        def hold_the_only_connection() -> None:
            with store._connection():
                held.set()
                # let go only once the other call queues for it, and after the log threshold
                while store._pool.get_stats().get("requests_waiting", 0) < 1:
                    done.wait(0.001)
                done.wait(2 * POOL_WAIT_LOG_S)

        holder = threading.Thread(target=hold_the_only_connection)
        holder.start()
        held.wait()
        with caplog.at_level(logging.DEBUG, logger="signoff.store"):
            assert store.get_request(request.id).id == request.id
        holder.join()
        waits = [
            r.getMessage() for r in _logged(caplog, logging.DEBUG) if "waited" in r.getMessage()
        ]
        assert len(waits) == 1, caplog.text
        assert "pooled connection" in waits[0] and "at most 1" in waits[0]
        assert "password" not in caplog.text
    finally:
        store.close()
        backend.close()


def test_a_compare_and_set_lost_to_another_writer_is_logged_and_retried(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = str(tmp_path / "s.db")
    mine, theirs = open_store(path), open_store(path)
    try:
        request = mine.create_request(make_request())  # mine keeps a copy
        theirs.decide(request.id, Decision("reject", reason="no"), actor="bob")
        # judged again on the row as it is now
        with caplog.at_level(logging.DEBUG, logger="signoff.store"), pytest.raises(AlreadyDecided):
            mine.decide(request.id, Decision("approve"), actor="ann")
        retries = [r.getMessage() for r in _logged(caplog, logging.DEBUG)]
        assert any(request.id in m and "reading it again" in m for m in retries), caplog.text
    finally:
        mine.close()
        theirs.close()


def test_migrations_are_logged_once(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = str(tmp_path / "s.db")
    with caplog.at_level(logging.INFO, logger="signoff.store"):
        open_store(path).close()
    applied = [r.getMessage() for r in _logged(caplog, logging.INFO)]
    assert applied and all("applied migration" in m for m in applied), applied
    assert any("0011" in m for m in applied), applied
    caplog.clear()
    with caplog.at_level(logging.DEBUG, logger="signoff.store"):
        open_store(path).close()  # up to date: nothing applied, nothing said
    assert not [r for r in caplog.records if "migration" in r.getMessage()]


def test_expired_requests_are_logged_by_the_sweep(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    store = open_store(str(tmp_path / "s.db"))
    try:
        request = store.create_request(make_request(), ttl_seconds=10, now=1_000.0)
        with caplog.at_level(logging.INFO, logger="signoff.store"):
            assert store.expire_stale(now=2_000.0) == [request.id]
        (message,) = [r.getMessage() for r in _logged(caplog, logging.INFO)]
        assert message.startswith("expired") and request.id in message
    finally:
        store.close()
