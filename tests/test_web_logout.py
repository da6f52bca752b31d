"""Signing out of the web inbox ends the session on the server (issue 26, item 9): the
old cookie and the CSRF token made from it approve nothing afterwards, read no page, and
an event stream opened with it stops."""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from signoff.accounts import Accounts
from store_helpers import Backend, make_request
from web_helpers import LiveServer


@pytest.fixture
def live(tmp_path: Path) -> Iterator[LiveServer]:
    with LiveServer(tmp_path) as server:
        yield server


def csrf_of(html: str) -> str:
    found = re.search(r'name="csrf" value="([0-9a-f]+)"', html)
    assert found is not None
    return found.group(1)


@contextmanager
def signed_in(live: LiveServer, token: str) -> Iterator[httpx.Client]:
    with live.client() as browser:
        page = browser.get("/login")
        done = browser.post("/login", data={"token": token, "csrf": csrf_of(page.text)})
        assert done.status_code == 303
        yield browser


def test_the_old_cookie_and_its_csrf_token_approve_nothing_after_sign_out(
    live: LiveServer,
) -> None:
    token = live.accounts.add("alice", "approver")
    req = live.store.create_request(make_request())
    with signed_in(live, token) as browser:
        page = browser.get(f"/requests/{req.id}")
        assert page.status_code == 200
        csrf = csrf_of(page.text)
        cookie = browser.cookies["signoff_session"]
        out = browser.post("/logout", data={"csrf": csrf})
        assert out.status_code == 303
    with live.client() as thief:  # the cookie kept from before, as a thief would
        thief.cookies.set("signoff_session", cookie)
        form = thief.post(f"/requests/{req.id}/decide", data={"kind": "approve", "csrf": csrf})
        api = thief.post(
            f"/api/requests/{req.id}/decide",
            json={"kind": "approve"},
            headers={"X-CSRF-Token": csrf},
        )
        page = thief.get(f"/requests/{req.id}")
        me = thief.get("/api/me")
    assert form.status_code in (303, 403) and api.status_code == 401, (form.text, api.text)
    assert page.status_code == 303 and page.headers["location"].startswith("/login")
    assert me.status_code == 401
    assert live.store.get_request(req.id).state == "pending"


def test_signing_out_ends_that_session_only(live: LiveServer) -> None:
    token = live.accounts.add("alice", "approver")
    with signed_in(live, token) as laptop, signed_in(live, token) as phone:
        csrf = csrf_of(laptop.get("/").text)
        assert laptop.post("/logout", data={"csrf": csrf}).status_code == 303
        assert laptop.get("/").status_code == 303
        assert phone.get("/").status_code == 200  # her other session goes on


def test_removing_an_account_ends_its_sessions(live: LiveServer) -> None:
    token = live.accounts.add("alice", "approver")
    live.accounts.add("ada", "admin")
    with signed_in(live, token) as browser:
        assert browser.get("/").status_code == 200
        live.accounts.remove("alice")
        assert browser.get("/").status_code == 303
        live.accounts.add("alice", "approver")  # a new account of the same name
        assert browser.get("/").status_code == 303  # is not signed in by the old cookie


def test_an_open_event_stream_stops_at_sign_out(live: LiveServer) -> None:
    token = live.accounts.add("alice", "approver")
    with signed_in(live, token) as browser:
        csrf = csrf_of(browser.get("/").text)
        ended = threading.Event()

        def listen() -> None:
            with httpx.Client(base_url=live.url, timeout=30) as stream_client:
                stream_client.cookies.set("signoff_session", browser.cookies["signoff_session"])
                with stream_client.stream("GET", "/api/events", params={"wait": "60"}) as res:
                    assert res.status_code == 200
                    for _ in res.iter_lines():
                        pass
            ended.set()

        thread = threading.Thread(target=listen, daemon=True)
        thread.start()
        time.sleep(1.0)  # the stream is open
        assert not ended.is_set()
        started = time.monotonic()
        assert browser.post("/logout", data={"csrf": csrf}).status_code == 303
        assert ended.wait(timeout=10), "the stream outlived the session"
        assert time.monotonic() - started < 5


def test_sessions_on_each_database(db: Backend) -> None:
    """The server's side of sessions, on SQLite and PostgreSQL: open until signed out, run
    out or the account removed; a name made again is not signed in by an old session."""
    accounts = Accounts(db.url)
    try:
        accounts.add("alice", "approver")
        now = time.time()
        accounts.open_session("alice", "n1", now + 60)
        accounts.open_session("alice", "n2", now - 1)  # ran out
        assert accounts.session_open("alice", "n1")
        assert not accounts.session_open("alice", "n2")
        assert not accounts.session_open("bob", "n1")  # a session is its account's only
        accounts.end_session("n1")
        assert not accounts.session_open("alice", "n1")
        accounts.open_session("alice", "n3", now + 60)
        accounts.remove("alice")
        accounts.add("alice", "approver")
        assert not accounts.session_open("alice", "n3")
        accounts.open_session("alice", "nonce-4", now + 60)
        (stored,) = db.sql("SELECT id, name FROM signoff_web_sessions")
        assert stored[1] == "alice" and re.fullmatch(r"[0-9a-f]{64}", stored[0])  # a hash
    finally:
        accounts.close()
