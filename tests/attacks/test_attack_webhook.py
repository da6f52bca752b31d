"""Attack: forging or replaying a signoff webhook at its receiver (issue 11, item 9).

A receiver trusts a delivery only if `verify()` says so. The attacker replays a captured
delivery later, edits its body or timestamp, signs it the old way (body only), or sends
headers crafted to crash the receiver's check (non-ASCII, surrogates, huge, wrong types).
`verify()` must answer False to each, never raise, and say True to the real delivery.
A real delivery is captured from the real `Notifier` over HTTP first.
"""

from __future__ import annotations

import hashlib
import hmac
import http.server
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest
from hypothesis import given
from hypothesis import strategies as st

from signoff.models import Request, ToolCall, Verdict
from signoff.notify import Notifier, sign, verify
from signoff.settings import Settings
from signoff.store import open_store

SECRET = b"receiver-secret"
NOW = 1_800_000_000


def signed(body: bytes, stamp: int = NOW, secret: bytes = SECRET) -> tuple[str, str]:
    return sign(secret, body, stamp), str(stamp)


BODY = b'{"event":"request.created","seq":7}'
SIG, STAMP = signed(BODY)

# (signature header, timestamp header, body, now, expected)
TABLE: dict[str, tuple[Any, Any, bytes, float, bool]] = {
    "genuine": (SIG, STAMP, BODY, NOW, True),
    "genuine-4m59s-later": (SIG, STAMP, BODY, NOW + 299, True),
    "replay-5m01s-later": (SIG, STAMP, BODY, NOW + 301, False),
    "replay-a-day-later": (SIG, STAMP, BODY, NOW + 86400, False),
    "timestamp-from-the-future": (SIG, STAMP, BODY, NOW - 301, False),
    "restamped-without-resigning": (SIG, str(NOW + 600), BODY, NOW + 600, False),
    "body-edited": (SIG, STAMP, BODY.replace(b"7", b"8"), NOW, False),
    "body-only-signature-old-scheme": (
        "sha256=" + hmac.new(SECRET, BODY, hashlib.sha256).hexdigest(),
        STAMP,
        BODY,
        NOW,
        False,
    ),
    "other-secret": (signed(BODY, secret=b"other")[0], STAMP, BODY, NOW, False),
    "uppercase-hex": (SIG.upper(), STAMP, BODY, NOW, False),
    "no-prefix": (SIG.removeprefix("sha256="), STAMP, BODY, NOW, False),
    "trailing-space": (SIG + " ", STAMP, BODY, NOW, False),
    "truncated": (SIG[:-1], STAMP, BODY, NOW, False),
    "non-ascii-signature": ("sha256=\u00e9", STAMP, BODY, NOW, False),
    "non-ascii-same-length": (SIG[:-1] + "\u00e9", STAMP, BODY, NOW, False),
    "surrogate-signature": ("sha256=\udc80", STAMP, BODY, NOW, False),
    "bytes-non-ascii": (b"sha256=\xff", STAMP, BODY, NOW, False),
    "empty-signature": ("", STAMP, BODY, NOW, False),
    "missing-signature": (None, STAMP, BODY, NOW, False),
    "missing-timestamp": (SIG, None, BODY, NOW, False),
    "empty-timestamp": (SIG, "", BODY, NOW, False),
    "fullwidth-digits": (SIG, "１８００００００００", BODY, NOW, False),
    "arabic-indic-digits": (SIG, "١٨٠٠٠٠٠٠٠٠", BODY, NOW, False),
    "negative-timestamp": (SIG, "-1", BODY, NOW, False),
    "float-timestamp": (SIG, f"{NOW}.0", BODY, NOW, False),
    "exponent-timestamp": (SIG, "1.8e9", BODY, NOW, False),
    "nan-timestamp": (SIG, "nan", BODY, NOW, False),
    "huge-timestamp": (SIG, "9" * 5000, BODY, NOW, False),
    "padded-timestamp": (SIG, f" {STAMP}", BODY, NOW, False),
    "list-header": ([SIG], STAMP, BODY, NOW, False),
    "int-timestamp": (SIG, NOW, BODY, NOW, False),
    "huge-signature": ("sha256=" + "a" * 1_000_000, STAMP, BODY, NOW, False),
    "bytes-headers-genuine": (SIG.encode(), STAMP.encode(), BODY, NOW, True),
}


@pytest.mark.parametrize("case", list(TABLE.values()), ids=list(TABLE))
def test_verify_table(case: tuple[Any, Any, bytes, float, bool]) -> None:
    signature, stamp, body, now, expected = case
    assert verify(SECRET, body, signature, stamp, now=now) is expected


def test_an_empty_secret_verifies_nothing() -> None:
    assert verify(b"", BODY, signed(BODY, secret=b"")[0], STAMP, now=NOW) is False


def test_the_window_is_configurable() -> None:
    assert verify(SECRET, BODY, SIG, STAMP, now=NOW + 30, tolerance=10) is False
    assert verify(SECRET, BODY, SIG, STAMP, now=NOW + 3000, tolerance=3600) is True
    assert verify(SECRET, BODY, SIG, STAMP, now=NOW, tolerance=float("nan")) is False


@given(
    st.one_of(st.text(), st.binary(), st.none(), st.integers()),
    st.one_of(st.text(), st.binary(), st.none(), st.integers()),
)
def test_verify_never_raises(signature: Any, stamp: Any) -> None:
    assert verify(SECRET, BODY, signature, stamp, now=NOW) in (True, False)


class Capture(http.server.BaseHTTPRequestHandler):
    received: ClassVar[list[tuple[dict[str, str], bytes]]] = []

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length", "0"))
        Capture.received.append(
            ({k.lower(): v for k, v in self.headers.items()}, self.rfile.read(length))
        )
        self.send_response(200)
        self.end_headers()

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def receiver() -> Iterator[str]:
    Capture.received = []
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Capture)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/hook"
    server.shutdown()
    server.server_close()


def test_a_real_delivery_verifies_now_and_not_when_replayed(tmp_path: Path, receiver: str) -> None:
    store = open_store(tmp_path / "s.db")
    try:
        store.create_request(
            Request(
                id="req_w",
                call=ToolCall("send_email", {"to": "x"}),
                verdict=Verdict("ask", "high", None, ("external",)),
            )
        )
        settings = Settings(
            extra={
                "notifications": {
                    "ops": {"type": "webhook", "url": receiver, "secret": SECRET.decode()}
                }
            }
        )
        assert Notifier.from_settings(store, settings).run_once() == 1
    finally:
        store.close()
    ((headers, body),) = Capture.received
    signature, stamp = headers["x-signoff-signature"], headers["x-signoff-timestamp"]
    assert abs(int(stamp) - time.time()) < 3600  # a current unix time, in seconds
    assert verify(SECRET, body, signature, stamp)
    assert not verify(SECRET, body, signature, stamp, now=int(stamp) + 301)  # the replay
    assert not verify(SECRET, body + b" ", signature, stamp)
