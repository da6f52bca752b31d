"""Attacks on the web server's bounds (issue 11, item 9), against a real uvicorn server.

- An account removed (or whose role changed) keeps an open `/api/events` stream: the
  stream must end and never send an event written after the removal.
- Any account, or nobody, sends a huge body to make the server buffer it: a body over the
  cap (1 MiB by default) gets 413, declared or streamed in chunks, on the API and on the
  login form; nothing is decided.
- A 10 MB argument must not make a 20 MB page: the page shows the head and the full
  length and links to `/requests/{id}/raw`, which (signed in only) has the whole.
"""

from __future__ import annotations

import json
import re
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the tests' own helpers

from signoff.models import Request, ToolCall, Verdict
from web_helpers import LiveServer, start_run

pytestmark = pytest.mark.slow  # a real uvicorn server and bodies of megabytes

MiB = 1 << 20


@pytest.fixture
def live(tmp_path: Path) -> Iterator[LiveServer]:
    with LiveServer(tmp_path) as server:
        yield server


def tokens(live: LiveServer) -> dict[str, str]:
    return {
        name: live.accounts.add(name, role)
        for name, role in (("alice", "approver"), ("vera", "viewer"), ("ada", "admin"))
    }


def ask(live: LiveServer, rid: str, arguments: dict[str, object] | None = None) -> Request:
    return live.store.create_request(
        Request(
            id=rid,
            call=ToolCall("send_email", arguments or {"to": "team@example.com"}),
            verdict=Verdict("ask", "high", None, ("external",)),
        )
    )


def decided_events(live: LiveServer) -> list[str]:
    return [
        e.request_id or ""
        for e in live.store.events_after(0, 10_000)
        if e.kind == "request.decided"
    ]


# ----------------------------------------------------------------------------- SSE


class Listener:
    """Reads one SSE stream in a thread; `ready` once the stream has begun."""

    def __init__(
        self, live: LiveServer, headers: dict[str, str], cookies: httpx.Cookies | None = None
    ) -> None:
        self.frames: list[str] = []
        self.status = 0
        self.ready = threading.Event()
        self.grew = threading.Condition()
        self.thread = threading.Thread(
            target=self._read, args=(live, headers, cookies), daemon=True
        )
        self.thread.start()

    def _read(
        self, live: LiveServer, headers: dict[str, str], cookies: httpx.Cookies | None
    ) -> None:
        with (
            httpx.Client(base_url=live.url, headers=headers, cookies=cookies, timeout=120) as c,
            c.stream("GET", "/api/events?wait=120") as res,
        ):
            self.status = res.status_code
            for line in res.iter_lines():
                self.ready.set()
                with self.grew:
                    self.frames.append(line)
                    self.grew.notify_all()
        self.ready.set()
        with self.grew:
            self.grew.notify_all()

    def wait_for(self, text: str) -> bool:
        with self.grew:
            return self.grew.wait_for(
                lambda: self.sent(text) or not self.thread.is_alive(), timeout=60
            )

    def ended(self) -> bool:
        self.thread.join(timeout=60)  # a bound, not a measurement: the stream's wait is 120 s
        return not self.thread.is_alive()

    def sent(self, request_id: str) -> bool:
        return any(request_id in line for line in self.frames)


def test_a_removed_accounts_stream_stops(live: LiveServer) -> None:
    t = tokens(live)
    listener = Listener(live, {"Authorization": f"Bearer {t['vera']}"})
    assert listener.ready.wait(30) and listener.status == 200
    ask(live, "req_before")
    live.accounts.remove("vera")
    ask(live, "req_after")
    assert listener.ended()
    assert not listener.sent("req_after")


def test_a_role_change_ends_a_session_stream(live: LiveServer) -> None:
    t = tokens(live)
    browser = httpx.Client(base_url=live.url, timeout=30)
    page = browser.get("/login")
    csrf = re.search(r'name="csrf" value="([^"]+)"', page.text)
    assert csrf is not None
    signed_in = browser.post("/login", data={"token": t["ada"], "csrf": csrf.group(1)})
    assert signed_in.status_code in (200, 303)
    listener = Listener(live, {}, browser.cookies)
    assert listener.ready.wait(30) and listener.status == 200
    live.accounts.remove("ada")
    live.accounts.add("ada", "viewer")  # same name, less power: the session names "ada"
    ask(live, "req_after_downgrade")
    assert listener.ended()
    assert not listener.sent("req_after_downgrade")
    browser.close()


def test_a_kept_account_still_streams(live: LiveServer) -> None:
    """The control: nothing changes for vera; her stream delivers the new request."""
    t = tokens(live)
    listener = Listener(live, {"Authorization": f"Bearer {t['vera']}"})
    assert listener.ready.wait(30)
    ask(live, "req_seen")
    listener.wait_for("req_seen")
    live.accounts.remove("vera")  # ends the stream so the test does not wait 120 s
    assert listener.ended()
    assert listener.sent("req_seen")


# ----------------------------------------------------------------------------- bodies


def _chunks(size: int, chunk: int = 64 * 1024) -> Iterator[bytes]:
    sent = 0
    yield b'{"kind": "reject", "reason": "'
    while sent < size:
        yield b"x" * chunk
        sent += chunk
    yield b'"}'


@pytest.mark.parametrize("how", ["declared", "chunked"])
def test_a_2_mib_decision_body_is_refused(live: LiveServer, how: str) -> None:
    t = tokens(live)
    ask(live, "req_big")
    with live.client(t["alice"]) as alice:
        if how == "declared":
            body = json.dumps({"kind": "reject", "reason": "x" * (2 * MiB)})
            res = alice.post(
                "/api/requests/req_big/decide",
                content=body,
                headers={"Content-Type": "application/json"},
            )
        else:
            res = alice.post(
                "/api/requests/req_big/decide",
                content=_chunks(2 * MiB),
                headers={"Content-Type": "application/json"},
            )
        assert res.status_code == 413, res.text
        assert res.json()["error"] == "too_large" and "1 MiB" in res.json()["message"]
    assert live.store.get_request("req_big").state == "pending"
    assert decided_events(live) == []
    with live.client(t["alice"]) as alice:  # the control: a normal body still decides
        ok = alice.post(
            "/api/requests/req_big/decide", json={"kind": "reject", "reason": "too big"}
        )
        assert ok.status_code == 200 and ok.json()["state"] == "rejected"


BIG_FORMS = {
    "login-urlencoded": (
        "/login",
        {"Content-Type": "application/x-www-form-urlencoded"},
        b"token=" + b"a" * (2 * MiB),
    ),
    "login-multipart": (
        "/login",
        {"Content-Type": "multipart/form-data; boundary=xx"},
        b'--xx\r\nContent-Disposition: form-data; name="token"\r\n\r\n'
        + b"a" * (2 * MiB)
        + b"\r\n--xx--\r\n",
    ),
    "decide-form": (
        "/requests/req_big/decide",
        {"Content-Type": "application/x-www-form-urlencoded"},
        b"kind=reject&reason=" + b"a" * (2 * MiB),
    ),
    "api-anonymous": (
        "/api/requests/req_big/decide",
        {"Content-Type": "application/json"},
        b'{"kind":"approve","pad":"' + b"a" * (2 * MiB) + b'"}',
    ),
}


@pytest.mark.parametrize("case", list(BIG_FORMS.values()), ids=list(BIG_FORMS))
def test_big_form_bodies_are_refused(
    live: LiveServer, case: tuple[str, dict[str, str], bytes]
) -> None:
    tokens(live)
    ask(live, "req_big")
    path, headers, body = case
    with live.client() as anon:
        res = anon.post(path, content=body, headers=headers)
        assert res.status_code == 413, res.text[:200]
        assert "too large" in res.text
    assert live.store.get_request("req_big").state == "pending"
    assert decided_events(live) == []


def test_the_cap_is_configurable(tmp_path: Path) -> None:
    with LiveServer(tmp_path, max_body=4096) as live:
        t = tokens(live)
        ask(live, "req_small")
        with live.client(t["alice"]) as alice:
            res = alice.post(
                "/api/requests/req_small/decide", json={"kind": "reject", "reason": "x" * 5000}
            )
            assert res.status_code == 413 and "4 KiB" in res.json()["message"]
            assert live.store.get_request("req_small").state == "pending"
            ok = alice.post(
                "/api/requests/req_small/decide", json={"kind": "reject", "reason": "short"}
            )
            assert ok.status_code == 200


# ----------------------------------------------------------------------------- pages

HUGE = 10_000_000


def test_a_10_mb_argument_makes_a_small_page_with_a_way_to_the_whole(live: LiveServer) -> None:
    t = tokens(live)
    body = "B" * HUGE
    run = start_run(live.store, live.workspace, {"to": "carol", "body": body})
    rid = run.waiting_on[0]
    with live.client(t["vera"]) as vera:
        page = vera.get(f"/requests/{rid}")
        assert page.status_code == 200
        assert len(page.content) < 400_000  # the call, the preview and the transcript, cut
        assert (
            f"{HUGE + len(json.dumps({'to': 'carol'})) + 5:,}" in page.text
            or "characters in all" in page.text
        )
        assert f'href="/requests/{rid}/raw"' in page.text
        inbox = vera.get("/")
        assert inbox.status_code == 200 and len(inbox.content) < 200_000
        raw = vera.get(f"/requests/{rid}/raw")
        assert raw.status_code == 200
        assert json.loads(raw.content)["call"]["arguments"]["body"] == body
        download = vera.get(f"/requests/{rid}/raw?download=1")
        assert download.headers["content-disposition"].startswith("attachment;")
    with live.client() as anon:
        assert anon.get(f"/requests/{rid}/raw").status_code == 401


def test_an_approver_sees_no_truncated_json_to_submit(live: LiveServer) -> None:
    """A cut argument must not be offered as the edit form's value (submitting it would
    change the call); the form is empty and says why."""
    t = tokens(live)
    ask(live, "req_huge", {"to": "carol", "body": "C" * 100_000})
    with live.client(t["alice"]) as alice:
        page = alice.get("/requests/req_huge")
        assert page.status_code == 200 and "edit-too-large" in page.text
        textarea = re.search(r'<textarea name="arguments"[^>]*>([^<]*)</textarea>', page.text)
        assert textarea is not None and textarea.group(1) == ""


def test_event_frames_carry_no_raw_controls(live: LiveServer) -> None:
    t = tokens(live)
    hidden = "\u009b2K\u202egnp.exe\u2066\u200b\u0085"
    ask(live, "req_ctl", {"to": "team@example.com" + hidden})
    with live.client(t["vera"]) as vera, vera.stream("GET", "/api/events?after=0&wait=0.2") as res:
        text = "".join(res.iter_text())
    assert "req_ctl" in text
    assert not any(c in text for c in "\u009b\u202e\u2066\u200b\u0085")
    assert "\\u202e" in text  # escaped, so the JSON still carries it


def test_a_local_mode_stream_ends_when_the_first_account_is_made(live: LiveServer) -> None:
    """Local mode (no accounts) lets loopback read as `local`; once an account exists that
    mode is over, and an open stream must not keep reading as `local`."""
    listener = Listener(live, {})
    assert listener.ready.wait(30) and listener.status == 200
    live.accounts.add("ada", "admin")
    ask(live, "req_after_local")
    assert listener.ended()
    assert not listener.sent("req_after_local")


@pytest.mark.parametrize(
    "path",
    ["/api/requests/req_ctl", "/api/requests", "/api/audit", "/api/requests/req_ctl%E2%80%AE"],
)
def test_api_json_carries_no_raw_controls(live: LiveServer, path: str) -> None:
    t = tokens(live)
    hidden = "\u009b2K\u202egnp.exe\u2066\u200b\u0085"
    ask(live, "req_ctl", {"to": "team@example.com" + hidden})
    with live.client(t["vera"]) as vera:
        res = vera.get(path)
    assert res.status_code in (200, 404)
    assert not any(c in res.text for c in "\u009b\u202e\u2066\u200b\u0085")
    if res.status_code == 200 and path == "/api/requests/req_ctl":
        assert res.json()["call"]["arguments"]["to"] == "team@example.com" + hidden
