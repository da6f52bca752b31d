"""The JSON API and the security rules, against a real server over a real SQLite file."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from signoff.accounts import Accounts
from signoff.cli.serve import check_bind, is_loopback
from signoff.exceptions import ConfigurationError
from signoff.models import ToolCall
from signoff.runs.worker import work
from signoff.web.openapi import DOCUMENT
from store_helpers import make_request
from web_helpers import SENT, LiveServer, start_run


@pytest.fixture
def live(tmp_path: Path) -> Iterator[LiveServer]:
    with LiveServer(tmp_path) as server:
        yield server


def tokens(live: LiveServer) -> dict[str, str]:
    return {
        name: live.accounts.add(name, role)
        for name, role in (
            ("alice", "approver"),
            ("bob", "approver"),
            ("vera", "viewer"),
            ("ada", "admin"),
        )
    }


def test_accounts_store_only_a_hash_and_tokens_authenticate(tmp_path: Path) -> None:
    accounts = Accounts(str(tmp_path / "a.db"))
    token = accounts.add("alice_x", "approver")
    assert accounts.authenticate(token) is not None
    altered = token[:-1] + ("1" if token[-1] == "0" else "0")  # always a different token
    assert accounts.authenticate(altered) is None
    assert accounts.authenticate("so_nobody_abc") is None
    raw = accounts._sql("SELECT token_hash, salt FROM signoff_accounts")
    assert token.split("_")[-1] not in json.dumps(raw)
    accounts.remove("alice_x")
    assert accounts.authenticate(token) is None
    assert accounts.secret() == accounts.secret()
    accounts.close()


def test_non_loopback_bind_is_refused_without_accounts(tmp_path: Path) -> None:
    accounts = Accounts(str(tmp_path / "a.db"))
    assert is_loopback("127.0.0.1") and is_loopback("::1") and not is_loopback("0.0.0.0")
    check_bind("127.0.0.1", accounts)
    with pytest.raises(ConfigurationError, match="no accounts"):
        check_bind("0.0.0.0", accounts)
    accounts.add("ada", "admin")
    check_bind("0.0.0.0", accounts)
    accounts.close()


def test_decide_through_the_api_and_the_worker_resumes(live: LiveServer) -> None:
    t = tokens(live)
    run = start_run(live.store, live.workspace, {"to": "carol", "body": "hi"})
    rid = run.waiting_on[0]
    with live.client() as anon:
        assert anon.get("/api/requests").status_code == 401
        assert anon.get("/api/health").json()["ok"] is True
    with live.client(t["vera"]) as viewer:
        listed = viewer.get("/api/requests").json()
        assert [r["id"] for r in listed] == [rid]
        assert listed[0]["summary"] == "to=carol"
        assert listed[0]["metadata"]["intent"] == "I will send it."
        refused = viewer.post(f"/api/requests/{rid}/decide", json={"kind": "approve"})
        assert refused.status_code == 403 and "viewer" in refused.json()["message"]
    with live.client(t["alice"]) as alice:
        done = alice.post(f"/api/requests/{rid}/decide", json={"kind": "approve"})
        assert done.status_code == 200, done.text
        assert done.json()["state"] == "approved" and "resumes" in done.json()["what_next"]
        again = alice.post(f"/api/requests/{rid}/decide", json={"kind": "reject", "reason": "late"})
        assert again.status_code == 409 and "approve by alice" in again.json()["message"]
    SENT.clear()
    assert work(live.store, once=True) == 1
    assert [s["to"] for s in SENT] == ["carol"]
    with live.client(t["vera"]) as viewer:
        doc = viewer.get(f"/api/runs/{run.id}").json()
        assert doc["status"] == "finished"
        assert doc["messages"][-1]["content"] == "Finished: sent to carol"
        assert viewer.get(f"/api/requests/{rid}").json()["outcome"]["ok"] is True


def test_listed_approvers_are_enforced(live: LiveServer) -> None:
    t = tokens(live)
    run = start_run(live.store, live.workspace, {"to": "x"}, approvers=["bob", "role:admin"])
    rid = run.waiting_on[0]
    with live.client(t["alice"]) as alice:
        res = alice.post(f"/api/requests/{rid}/decide", json={"kind": "approve"})
        assert res.status_code == 403 and "may not decide" in res.json()["message"]
    with live.client(t["ada"]) as ada:  # role:admin is listed
        assert (
            ada.post(f"/api/requests/{rid}/decide", json={"kind": "skip"}).json()["state"]
            == "skipped"
        )


def test_expired_request_cannot_be_approved(live: LiveServer) -> None:
    t = tokens(live)
    req = live.store.create_request(make_request(), ttl_seconds=0.2)
    time.sleep(0.3)
    with live.client(t["alice"]) as alice:
        res = alice.post(f"/api/requests/{req.id}/decide", json={"kind": "approve"})
        assert res.status_code == 410 and "expired" in res.json()["message"]
        assert alice.get(f"/api/requests/{req.id}").json()["state"] == "expired"


def test_edit_is_validated_and_invalid_changes_nothing(live: LiveServer) -> None:
    t = tokens(live)
    run = start_run(live.store, live.workspace, {"to": "carol"})
    rid = run.waiting_on[0]
    with live.client(t["alice"]) as alice:
        bad = alice.post(
            f"/api/requests/{rid}/decide", json={"kind": "edit", "arguments": {"to": 5, "cc": "x"}}
        )
        assert bad.status_code == 422 and "not valid" in bad.json()["message"]
        assert alice.get(f"/api/requests/{rid}").json()["state"] == "pending"
        reject = alice.post(f"/api/requests/{rid}/decide", json={"kind": "reject"})
        assert reject.status_code == 422 and "reason" in reject.json()["message"]
        ok = alice.post(
            f"/api/requests/{rid}/decide", json={"kind": "edit", "arguments": {"to": "dave"}}
        )
        doc = ok.json()
        assert doc["call"]["arguments"] == {"to": "dave"}
        assert doc["metadata"]["original_call"]["arguments"] == {"to": "carol"}


def test_self_approval_can_be_forbidden(tmp_path: Path) -> None:
    with LiveServer(tmp_path, forbid_self_approval=True) as live:
        t = tokens(live)
        req = live.store.create_request(make_request(requested_by="alice"))
        with live.client(t["alice"]) as alice:
            res = alice.post(f"/api/requests/{req.id}/decide", json={"kind": "approve"})
            assert res.status_code == 403 and "own request" in res.json()["message"]
        with live.client(t["bob"]) as bob:
            assert (
                bob.post(f"/api/requests/{req.id}/decide", json={"kind": "approve"}).status_code
                == 200
            )


def test_grants_list_and_admin_revoke(live: LiveServer) -> None:
    t = tokens(live)
    run = start_run(live.store, live.workspace, {"to": "carol"})
    rid = run.waiting_on[0]
    with live.client(t["alice"]) as alice:
        res = alice.post(
            f"/api/requests/{rid}/decide", json={"kind": "approve_always", "scope": "run"}
        )
        assert res.status_code == 200, res.text
        grants = alice.get("/api/grants").json()
        assert len(grants) == 1 and grants[0]["created_by"] == "alice"
        gid = grants[0]["id"]
        assert alice.post(f"/api/grants/{gid}/revoke").status_code == 403
    with live.client(t["ada"]) as ada:
        assert ada.post(f"/api/grants/{gid}/revoke").status_code == 200
        assert ada.get("/api/grants").json() == []


def _csrf(html: str) -> str:
    match = re.search(r'name="csrf-token" content="([^"]+)"', html)
    assert match
    return match.group(1)


def test_forms_need_the_csrf_token_and_cookies_are_strict(live: LiveServer) -> None:
    t = tokens(live)
    req = live.store.create_request(make_request())
    with live.client() as browser:
        login_page = browser.get("/login")
        cookie = login_page.headers["set-cookie"].lower()
        assert "httponly" in cookie and "samesite=strict" in cookie
        assert browser.post("/login", data={"token": t["alice"]}).status_code == 403
        res = browser.post("/login", data={"token": t["alice"], "csrf": _csrf(login_page.text)})
        assert res.status_code == 303
        page = browser.get(f"/requests/{req.id}")
        assert page.status_code == 200
        refused = browser.post(f"/requests/{req.id}/decide", data={"kind": "approve"})
        assert refused.status_code == 403 and "CSRF" in refused.text
        forged = browser.post(
            f"/requests/{req.id}/decide", data={"kind": "approve", "csrf": "0" * 40}
        )
        assert forged.status_code == 403
        api = browser.post(f"/api/requests/{req.id}/decide", json={"kind": "approve"})
        assert api.status_code == 403 and api.json()["error"] == "csrf"
        assert live.store.get_request(req.id).state == "pending"
        ok = browser.post(
            f"/requests/{req.id}/decide", data={"kind": "approve", "csrf": _csrf(page.text)}
        )
        assert ok.status_code == 303
        assert live.store.get_request(req.id).decision.actor == "alice"  # type: ignore[union-attr]


def test_security_headers(live: LiveServer) -> None:
    with live.client() as c:
        for path in ("/login", "/api/health", "/openapi.json", "/static/app.js"):
            headers = c.get(path).headers
            csp = headers["content-security-policy"]
            assert "script-src 'self'" in csp and "unsafe-inline" not in csp
            assert "frame-ancestors 'none'" in csp
            assert headers["x-content-type-options"] == "nosniff"


def test_local_mode_only_on_loopback_hosts(live: LiveServer) -> None:
    req = live.store.create_request(make_request())
    with live.client() as c:
        assert c.get("/api/requests").status_code == 200  # no accounts: local user
        spoofed = c.get("/api/requests", headers={"Host": "evil.example:80"})
        assert spoofed.status_code == 401  # DNS rebinding gets nothing
        assert c.get(f"/api/requests/{req.id}").json()["id"] == req.id


def test_html_injection_is_inert_in_pages(live: LiveServer) -> None:
    evil = '<script>window.__pwned=1</script><img src=x onerror="window.__pwned=2">'
    req = live.store.create_request(
        make_request(
            call=ToolCall("bash", {"command": f"echo '{evil}' \u202egnp.exe"}, "c1"),
            preview=f"+{evil}\n-old",
            metadata={"intent": evil},
        )
    )
    with live.client() as c:
        html = c.get(f"/requests/{req.id}").text + c.get("/").text
    assert "<script>window" not in html and "<img src=x" not in html
    assert "&lt;script&gt;window.__pwned=1&lt;/script&gt;" in html
    assert "\u202e" not in html and "\\u202e" in html


def test_the_inbox_filters_reach_its_live_updates_as_they_are(live: LiveServer) -> None:
    """A filter's value is one query value in the URL the page's script fetches cards
    with, whatever it holds (`&state=all` in a tool's name adds no filter)."""
    with live.client() as browser:
        page = browser.get("/", params={"tool": "x&state=all", "run": "r#1"})
    assert 'tool=x%26state%3Dall&amp;run=r%231&amp;tenant=&amp;state=pending"' in page.text


def test_answer_form_follows_the_tools_declaration(live: LiveServer) -> None:
    declared = live.store.create_request(
        make_request(
            call=ToolCall("confirm_budget", {"amount": 5}, "c1"), metadata={"asks_human": True}
        )
    )
    not_declared = live.store.create_request(
        make_request(
            call=ToolCall("ask_vendor", {"question": "price?"}, "c2"),
            metadata={"asks_human": False},
        )
    )
    unknown = live.store.create_request(
        make_request(call=ToolCall("ask_human", {"question": "which branch?"}, "c3"))
    )
    with live.client() as c:
        pages = {r.id: c.get(f"/requests/{r.id}").text for r in (declared, not_declared, unknown)}
    assert 'id="form-answer"' in pages[declared.id]
    assert 'id="form-answer"' not in pages[not_declared.id]
    assert 'id="form-answer"' in pages[unknown.id]  # stored without it: judged by its look


def test_openapi_documents_every_api_route(live: LiveServer) -> None:
    paths = set(DOCUMENT["paths"])
    from signoff.web import api, events

    for route in [*api.ROUTES, *events.ROUTES]:
        assert route.path in paths, route.path
    with live.client() as c:
        assert c.get("/openapi.json").json()["openapi"].startswith("3.")


def test_events_stream_is_server_sent_events(live: LiveServer) -> None:
    req = live.store.create_request(make_request())
    with live.client() as c, c.stream("GET", "/api/events?after=0&wait=0.5") as res:
        assert res.headers["content-type"].startswith("text/event-stream")
        text = "".join(res.iter_text())
    assert f'"request_id":"{req.id}"' in text and "event: request.created" in text
    assert re.search(r"^id: 1$", text, re.M)


def test_schemathesis_finds_no_server_error(live: LiveServer) -> None:
    import schemathesis
    from hypothesis import HealthCheck, given, settings

    token = live.accounts.add("fuzz", "admin")
    live.store.create_request(make_request())
    schema = schemathesis.openapi.from_url(f"{live.url}/openapi.json")
    failures: list[str] = []
    calls: list[int] = []
    for op in schema.get_all_operations():
        operation = op.ok()
        if operation.path == "/api/events":
            continue

        @settings(
            max_examples=8, deadline=None, database=None, suppress_health_check=list(HealthCheck)
        )
        @given(case=operation.as_strategy())
        def check(case: Any) -> None:
            response = case.call(base_url=live.url, headers={"Authorization": f"Bearer {token}"})
            calls.append(response.status_code)
            if response.status_code >= 500:
                failures.append(f"{case.method} {case.formatted_path}: {response.status_code}")

        check()
    assert failures == [] and len(calls) >= 30


def test_bad_input_is_a_client_error(live: LiveServer) -> None:
    with live.client() as c:
        assert c.get("/api/requests?limit=abc").status_code == 422
        assert c.get("/api/requests?state=nope").status_code == 422
        assert c.get("/api/requests/nope").status_code == 404
        assert c.post("/api/requests/x/decide", content=b"{").status_code in (400, 403)
        assert c.get("/api/events?after=-3").status_code == 422
        assert isinstance(httpx.codes.OK, int)
