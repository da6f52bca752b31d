"""The audit log in the browser and over the API: the same entries and verification as
`signoff audit --json` and `signoff audit verify --json`; model-written text is inert."""

from __future__ import annotations

import html
import json
import re
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from signoff.cli.audit import main as cli
from signoff.models import Decision, ToolCall
from store_helpers import make_request
from web_helpers import EVIL, LiveServer, build_stats_history


@pytest.fixture
def live(tmp_path: Path) -> Iterator[LiveServer]:
    with LiveServer(tmp_path) as server:
        build_stats_history(server.store, time.time())
        yield server


def cli_json(capsys: pytest.CaptureFixture[str], *argv: str) -> Any:
    capsys.readouterr()
    cli(list(argv))
    return json.loads(capsys.readouterr().out)


def test_api_returns_what_the_cli_prints(
    live: LiveServer, capsys: pytest.CaptureFixture[str]
) -> None:
    with live.client() as c:
        everything = c.get("/api/audit").json()
        run_b = c.get("/api/audit", params={"run": "run-b", "kind": "request."}).json()
        newest = c.get("/api/audit", params={"limit": "3"}).json()
        verified = c.get("/api/audit/verify").json()
    assert everything == cli_json(capsys, "audit", "--db", live.db, "--json")
    assert run_b == cli_json(
        capsys, "audit", "--db", live.db, "--json", "--run", "run-b", "--kind", "request."
    )
    assert run_b and {e["run_id"] for e in run_b} == {"run-b"}
    assert {e["kind"].split(".")[0] for e in run_b} == {"request"}
    assert [e["seq"] for e in newest] == [e["seq"] for e in everything[-3:]]
    assert verified == cli_json(capsys, "audit", "verify", "--db", live.db, "--json")
    assert verified["ok"] and verified["entries"] == len(everything)


def test_bad_filters_are_client_errors(live: LiveServer) -> None:
    with live.client() as c:
        for params in ({"since": "yesterday-ish"}, {"limit": "0"}, {"limit": "x"}):
            res = c.get("/api/audit", params=params)
            assert res.status_code == 422, (params, res.text)
            assert res.json()["error"] == "invalid"
        page = c.get("/audit", params={"since": "nonsense"})
    assert page.status_code == 422 and 'id="error"' in page.text


def test_page_lists_newest_first_and_model_text_is_inert(live: LiveServer) -> None:
    req = live.store.create_request(
        make_request(call=ToolCall("bash", {"command": f"echo '{EVIL}' \u202egnp.exe"}, "c9"))
    )
    live.store.decide(req.id, Decision("reject", reason=EVIL), actor="bob")
    with live.client() as c:
        page = c.get("/audit").text
        one_run = c.get("/audit", params={"run": "run-b"}).text
    seqs = [int(s) for s in re.findall(r'<tr data-seq="(\d+)"', page)]
    assert seqs == sorted(seqs, reverse=True) and len(seqs) > 10
    assert "<script" not in page.split("</nav>")[1] and "\u202e" not in page
    assert "&lt;script&gt;" in page and "\\u202e" in page
    assert "reject -&gt; rejected" in page
    assert "run-a" not in one_run.split('id="entries"')[1]
    with live.client() as c:
        request_page = c.get(f"/requests/{req.id}").text
        trail = c.get("/audit", params={"request": req.id}).text
    assert f'href="/audit?request={req.id}"' in request_page
    kinds = re.findall(r"<td><code>([a-z_.]+)</code></td>", trail)
    assert kinds == ["request.decided", "request.created"]


def test_page_verifies_the_chain_and_names_the_first_bad_entry(live: LiveServer) -> None:
    with live.client() as c:
        ok = c.get("/audit", params={"verify": "1"}).text
        assert 'id="verified"' in ok and 'id="tampered"' not in ok
        conn = sqlite3.connect(live.db)
        conn.execute(
            "UPDATE signoff_events SET entry = replace(entry, 'alice', 'mallory') "
            "WHERE seq = (SELECT min(seq) FROM signoff_events WHERE entry LIKE "
            "'%alice%')"
        )
        conn.commit()
        bad_seq = conn.execute(
            "SELECT min(seq) FROM signoff_events WHERE entry LIKE '%mallory%'"
        ).fetchone()[0]
        conn.close()
        tampered = c.get("/audit", params={"verify": "1"}).text
        report = c.get("/api/audit/verify").json()
    assert 'id="tampered"' in tampered and f"first bad entry {bad_seq}" in tampered
    assert not report["ok"] and report["first_bad_seq"] == bad_seq


def test_viewers_see_it_strangers_do_not(tmp_path: Path) -> None:
    with LiveServer(tmp_path) as live:
        token = live.accounts.add("vera", "viewer")
        live.store.record(
            "verdict",
            {"call": {"name": "ls", "arguments": {}}, "verdict": {"effect": "allow"}},
            run_id="r",
        )
        with live.client() as anon:
            assert anon.get("/api/audit").status_code == 401
            assert anon.get("/api/audit/verify").status_code == 401
            assert anon.get("/audit", follow_redirects=False).status_code == 303
        with live.client(token) as viewer:
            assert [e["kind"] for e in viewer.get("/api/audit").json()] == ["verdict"]


def test_an_entry_edited_into_garbage_is_a_clear_error_not_a_crash(live: LiveServer) -> None:
    conn = sqlite3.connect(live.db)
    conn.execute(
        "UPDATE signoff_events SET entry = '{not json' "
        "WHERE seq = (SELECT max(seq) FROM signoff_events)"
    )
    conn.commit()
    conn.close()
    with live.client() as c:
        page = c.get("/audit")
        api = c.get("/api/audit")
        report = c.get("/api/audit/verify").json()
    assert page.status_code == api.status_code == 409  # integrity, named; not a crash
    assert "signoff audit verify" in html.unescape(page.text)
    assert "signoff audit verify" in api.json()["message"] and not report["ok"]
