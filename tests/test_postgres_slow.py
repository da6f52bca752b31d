"""A PostgreSQL that is reachable but slow to accept connections: every command used to
fail with "the pool 'signoff' is already closed" once opening took more than a second
(psycopg_pool's wait() closes the pool on timeout). A real proxy delays each connection."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
import uuid
from collections.abc import Iterator
from urllib.parse import urlsplit

import pytest

from signoff.store import open_store
from store_helpers import PG_BASE, make_request, postgres_or_skip

DELAY_S = 1.5


class SlowProxy:
    """Accepts on a local port and, after DELAY_S, pipes bytes to the real server."""

    def __init__(self, host: str, port: int) -> None:
        self.target = (host, port)
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while not self.closed:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _serve(self, client: socket.socket) -> None:
        time.sleep(DELAY_S)
        try:
            server = socket.create_connection(self.target)
        except OSError:
            client.close()
            return
        for a, b in ((client, server), (server, client)):
            threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    @staticmethod
    def _pipe(src: socket.socket, dst: socket.socket) -> None:
        try:
            while data := src.recv(65536):
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for s in (src, dst):
                with contextlib.suppress(OSError):
                    s.shutdown(socket.SHUT_RDWR)

    def close(self) -> None:
        self.closed = True
        self.listener.close()


@pytest.fixture
def slow_url() -> Iterator[str]:
    postgres_or_skip()
    parts = urlsplit(PG_BASE)
    proxy = SlowProxy(parts.hostname or "127.0.0.1", parts.port or 5432)
    schema = f"signoff_slow_{uuid.uuid4().hex[:10]}"
    import psycopg

    with psycopg.connect(PG_BASE, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    netloc = (
        parts.netloc.replace(f":{parts.port}", f":{proxy.port}")
        if parts.port
        else (f"{parts.netloc}:{proxy.port}")
    )
    yield f"{parts.scheme}://{netloc}{parts.path}?options=-csearch_path%3D{schema}"
    proxy.close()
    with psycopg.connect(PG_BASE, autocommit=True) as conn:
        conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")


def test_a_slow_server_is_waited_for_and_the_store_works(slow_url: str) -> None:
    store = open_store(slow_url)
    try:
        created = store.create_request(make_request())
        assert store.get_request(created.id).state == "pending"
        assert [r.id for r in store.list_requests(state="pending")] == [created.id]
    finally:
        store.close()
