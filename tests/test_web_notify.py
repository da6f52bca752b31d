"""Notifications (webhook, Slack), review-after with revert, and the web CLI commands."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from signoff.cli.app import build_parser
from signoff.models import ToolCall
from signoff.notify import Notifier, verify
from signoff.settings import Settings
from signoff.store import open_store
from signoff.workspace import Workspace
from signoff.workspace.snapshots import Snapshot
from store_helpers import make_request
from web_helpers import LiveServer

SECRET = "s3cret-for-tests"


class Receiver:
    """A local webhook endpoint; answers `fail_first` requests with 503 first."""

    def __init__(self, fail_first: int = 0) -> None:
        self.received: list[tuple[dict[str, str], bytes]] = []
        self.fail_first = fail_first
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                outer.received.append(({k.lower(): v for k, v in self.headers.items()}, body))
                code = 503 if len(outer.received) <= outer.fail_first else 200
                self.send_response(code)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    r = Receiver(fail_first=2)
    yield r
    r.close()


def settings_for(url: str, **extra: Any) -> Settings:
    return Settings(
        extra={
            "notifications": {
                "base_url": "https://inbox.example",
                "ops": {
                    "type": "webhook",
                    "url": url,
                    "secret": SECRET,
                    "retries": 3,
                    "backoff": 0.01,
                },
                "chat": {"type": "slack", "url": url, **extra},
            }
        }
    )


def test_a_slack_message_keeps_model_text_on_its_line_and_links_none(
    tmp_path: Path, receiver: Receiver
) -> None:
    """A tool name or a preview with newlines cannot add a line that reads as signoff's
    own ("Approved by alice"); `<!channel>` or `<https://x|y>` is no mention or link."""
    store = open_store(str(tmp_path / "s.db"))
    spoof = "x\n:white_check_mark: *Approved by alice*\u2028<!channel> <https://evil.example|ok>"
    store.create_request(make_request(call=ToolCall(spoof, {"a": spoof}, "c1"), preview=spoof))
    Notifier.from_settings(store, settings_for(receiver.url)).run_once()
    (slack,) = [json.loads(b) for h, b in receiver.received if "x-signoff-signature" not in h]
    lines = slack["text"].split("\n")
    assert len(lines) == 2 and lines[1].startswith("<https://inbox.example/requests/")
    assert "<!channel>" not in slack["text"] and "<https://evil" not in slack["text"]
    assert "x\\n:white_check_mark:" in lines[0] and "&lt;!channel&gt;" in lines[0]
    store.close()


def test_webhook_is_signed_retried_recorded_and_never_repeated(
    tmp_path: Path, receiver: Receiver
) -> None:
    db = str(tmp_path / "s.db")
    store = open_store(db)
    req = store.create_request(make_request(preview="<b>x</b>"))
    notifier = Notifier.from_settings(store, settings_for(receiver.url))
    assert notifier.run_once() == 2  # one event, two channels
    webhooks = [(h, b) for h, b in receiver.received if "x-signoff-signature" in h]
    assert len(webhooks) == 3  # 503, 503, 200
    headers, body = webhooks[-1]
    signature, stamp = headers["x-signoff-signature"], headers["x-signoff-timestamp"]
    assert verify(SECRET.encode(), body, signature, stamp)
    assert not verify(b"wrong", body, signature, stamp)
    doc = json.loads(body)
    assert doc["event"] == "request.created" and doc["request"]["id"] == req.id
    assert doc["url"] == f"https://inbox.example/requests/{req.id}"
    assert {h["idempotency-key"] for h, _ in webhooks} == {str(doc["seq"])}
    slack = [json.loads(b) for h, b in receiver.received if "x-signoff-signature" not in h]
    assert len(slack) == 1 and f"https://inbox.example/requests/{req.id}" in slack[0]["text"]
    kinds = [
        (e.kind, e.data["channel"], e.data["attempts"])
        for e in store.events_after(0, 100)
        if e.kind.startswith("notify.")
    ]
    assert sorted(kinds) == [("notify.delivered", "chat", 1), ("notify.delivered", "ops", 3)]
    store.close()
    # a restart (new objects over the same file) sends nothing twice
    store = open_store(db)
    assert Notifier.from_settings(store, settings_for(receiver.url)).run_once() == 0
    store.create_request(make_request())
    assert Notifier.from_settings(store, settings_for(receiver.url)).run_once() == 2
    store.close()


@pytest.mark.slow  # a real server and 2,100 records
def test_failed_delivery_is_recorded_and_shown_on_the_request_page(tmp_path: Path) -> None:
    with LiveServer(tmp_path) as live:
        req = live.store.create_request(make_request())
        settings = Settings(
            extra={
                "notifications": {
                    "ops": {
                        "type": "webhook",
                        "url": "http://127.0.0.1:9/nothing",
                        "retries": 1,
                        "backoff": 0.01,
                        "timeout": 1,
                    }
                }
            }
        )
        Notifier.from_settings(live.store, settings).run_once()
        with live.client() as c:
            html = c.get(f"/requests/{req.id}").text
        assert "notify.failed" in html and "ops" in html
        for n in range(2100):  # the page once looked only at the last 2,000 events
            live.store.record("verdict", {"n": n}, run_id="busy")
        with live.client() as c:
            assert "notify.failed" in c.get(f"/requests/{req.id}").text


def test_review_after_lists_and_reverts_and_refuses_changed_files(tmp_path: Path) -> None:
    with LiveServer(tmp_path) as live:
        ws = Workspace(live.workspace)
        (live.workspace / "notes.txt").write_text("before\n")
        snapshots: list[Snapshot] = []
        from signoff.models import ToolCall

        for path, text in (("notes.txt", "after\n"), ("other.txt", "new\n")):
            call = ToolCall("write_file", {"path": path, "content": text}, "c")
            _, snap = ws.run_recorded(call, "k")
            assert snap is not None
            snapshots.append(snap)
            live.store.record(
                "review", {"call": call.to_json(), "snapshot": snap.to_json()}, run_id="run-r"
            )
        (live.workspace / "other.txt").write_text("changed by a person\n")
        with live.client() as c:
            page = c.get("/reviews").text
            assert "notes.txt" in page and "other.txt" in page
            csrf = page.split('name="csrf-token" content="')[1].split('"')[0]
            seqs = [e.seq for e in live.store.events_after(0, 100) if e.kind == "review"]
            ok = c.post(f"/reviews/{seqs[0]}/revert", data={"csrf": csrf})
            assert ok.status_code == 303
            assert (live.workspace / "notes.txt").read_text() == "before\n"
            refused = c.post(f"/reviews/{seqs[1]}/revert", data={"csrf": csrf})
            assert refused.status_code == 409 and "changed since" in refused.text
            assert (live.workspace / "other.txt").read_text() == "changed by a person\n"
            twice = c.post(f"/reviews/{seqs[0]}/revert", data={"csrf": csrf})
            assert twice.status_code == 422 and "already reverted" in twice.text
        assert [e.kind for e in live.store.events_after(0, 100)].count("review.reverted") == 1


def test_users_commands_print_the_token_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from signoff.cli import serve as cli_web

    parser = build_parser()
    if "serve" not in parser.format_help():  # until the lead wires cli_web into cli.py
        sub = next(a for a in parser._actions if a.dest == "command")
        cli_web.register(sub)
    db = str(tmp_path / "s.db")

    def run(*argv: str) -> str:
        args = parser.parse_args(list(argv))
        assert args.func(args) == 0
        return capsys.readouterr().out

    out = run("users", "add", "alice", "--role", "admin", "--db", db)
    token = out.strip().splitlines()[1]
    assert token.startswith("so_alice_")
    # the first account ends local mode: the person who ran the server is told, and how
    # to sign in; a second account changes nothing, so nothing is said
    assert "local mode is over" in out and "/login" in out
    second = run("users", "add", "bob", "--db", db)
    assert second.strip().splitlines()[-1].startswith("so_bob_")
    assert "local mode" not in second
    assert "alice\tadmin" in run("users", "list", "--db", db)
    assert token not in run("users", "list", "--db", db)
    run("users", "remove", "alice", "--db", db)
    run("users", "remove", "bob", "--db", db)
    assert "No accounts" in run("users", "list", "--db", db)


def test_web_strings_exist_in_both_languages() -> None:
    from signoff.web.strings import WEB

    assert all(set(v) == {"en", "zh"} and all(v.values()) for v in WEB.values())


def test_accounts_and_api_on_postgres(tmp_path: Path) -> None:
    from signoff.accounts import Accounts
    from store_helpers import Backend

    backend = Backend("postgres", tmp_path)  # skips when unreachable (unless required)
    try:
        accounts = Accounts(backend.url)
        token = accounts.add("alice", "approver")
        assert accounts.authenticate(token) == accounts.get("alice")
        assert Accounts(backend.url).secret() == accounts.secret()
        accounts.close()
        from starlette.testclient import TestClient

        from signoff.web.app import create_app

        store = backend.open()
        req = store.create_request(make_request())
        app = create_app(backend.url, workspace=tmp_path, settings=Settings())
        with TestClient(app, base_url="http://127.0.0.1") as c:
            headers = {"Authorization": f"Bearer {token}"}
            res = c.post(
                f"/api/requests/{req.id}/decide", json={"kind": "approve"}, headers=headers
            )
            assert res.status_code == 200 and res.json()["decision"]["actor"] == "alice"
    finally:
        backend.close()
