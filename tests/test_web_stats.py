"""The statistics page and `GET /api/stats`, against a real server over a real SQLite file.

The history is built through the real store and `approvals.decide`; model-written tool names
and rules carry markup, which must come out inert.
"""

from __future__ import annotations

import contextlib
import html
import json
import re
import time
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from signoff.audit.stats import Day, Stats, compute_stats
from signoff.cli.audit import main as cli
from signoff.web.stats_view import MAX_DAYS, build_chart, duration
from web_helpers import DAY, EVIL, EVIL_TOOL, LiveServer, build_stats_history


@pytest.fixture
def live(tmp_path: Path) -> Iterator[LiveServer]:
    with LiveServer(tmp_path) as server:
        build_stats_history(server.store, time.time())
        yield server


def cli_json(capsys: pytest.CaptureFixture[str], db: str, *extra: str) -> Any:
    capsys.readouterr()
    assert cli(["stats", "--db", db, "--json", *extra]) == 0
    return json.loads(capsys.readouterr().out)


def test_api_returns_what_the_cli_prints(
    live: LiveServer, capsys: pytest.CaptureFixture[str]
) -> None:
    since = str(time.time() - 2.5 * DAY)
    with live.client() as c:
        everything = c.get("/api/stats")
        window = c.get("/api/stats", params={"since": since})
        strict = c.get("/api/stats", params={"min_count": "6"})
    assert everything.status_code == 200, everything.text
    doc = everything.json()
    assert doc == cli_json(capsys, live.db)
    assert window.json() == cli_json(capsys, live.db, "--since", since)
    assert strict.json() == cli_json(capsys, live.db, "--min-count", "6")
    assert doc["calls"] == 18 and doc["questions"] == 12 and doc["decided"] == 11
    assert doc["decisions"] == {"approve": 5, "edit": 0, "reject": 5, "skip": 1, "answer": 0}
    assert {s["kind"] for s in doc["suggestions"]} == {"allow", "deny"}
    assert strict.json()["suggestions"] == []
    assert window.json()["questions"] == 7  # the approvals were three days ago
    assert sum(d["calls"] for d in doc["by_day"]) == 18


def test_api_since_uses_the_cli_syntax_and_refuses_nonsense(live: LiveServer) -> None:
    with live.client() as c:
        day = c.get("/api/stats?since=1d").json()
        assert day["questions"] == 2 and day["since"] == pytest.approx(time.time() - DAY, abs=60)
        assert c.get("/api/stats?since=2w").json()["questions"] == 12
        iso = time.strftime("%Y-%m-%d", time.gmtime(time.time() + 2 * DAY))
        assert c.get(f"/api/stats?since={iso}").json()["calls"] == 0
        for bad in ("yesterday", "nan", "inf", "1e400", "-inf", "99999-01-01"):
            res = c.get("/api/stats", params={"since": bad})
            assert res.status_code == 422, (bad, res.text)
            assert res.json()["error"] == "invalid" and "since" in res.json()["message"]
        for bad in ("0", "x", "-1"):
            assert c.get(f"/api/stats?min_count={bad}").status_code == 422


def test_roles_anyone_signed_in_may_read_the_statistics(live: LiveServer) -> None:
    viewer = live.accounts.add("vera", "viewer")
    with live.client() as anon:
        assert anon.get("/api/stats").status_code == 401
        res = anon.get("/stats", follow_redirects=False)
        assert res.status_code == 303 and res.headers["location"] == "/login?next=/stats"
    with live.client(viewer) as c:
        assert c.get("/api/stats").json()["questions"] == 12
        page = c.get("/stats")
        assert page.status_code == 200 and 'id="chart"' in page.text
        assert 'href="/stats"' in c.get("/").text  # linked from the inbox header


def _between(text: str, start: str, end: str) -> list[str]:
    return [
        html.unescape(m)
        for m in re.findall(re.escape(start) + "(.*?)" + re.escape(end), text, re.S)
    ]


def test_page_shows_the_figures_the_chart_and_the_suggestions(live: LiveServer) -> None:
    with live.client() as c:
        api = c.get("/api/stats").json()
        page = c.get("/stats")
    assert page.status_code == 200
    text = page.text
    assert page.headers["content-security-policy"].startswith("default-src 'none'")
    # approvals.decide stamps decisions with the real clock: the history is days old
    figures = {
        m[0]: html.unescape(m[1])
        for m in re.findall(
            r'<div id="fig-([\w-]+)"><dt>[^<]*</dt><dd class="big">([^<]*)</dd>', text
        )
    }
    assert figures == {
        "calls": "18",
        "ask-share": "67%",
        "qpr": "4",
        "ttd": "2.0d",
        "expired": "0",
        "in-doubt": "0",
        "outcome-unknown": "0",
        "pending": "1",
    }
    assert "allow 6 · notify 0 · ask 12 · deny 0" in text and "12 of 18 calls" in text
    assert "p90 3.0d · 11 decisions" in text
    # the chart: inline SVG with a title, a description and a table of the same numbers
    svg = re.search(r"<svg .*?</svg>", text, re.S)
    assert svg is not None
    assert 'role="img"' in svg[0] and 'aria-labelledby="chart-title chart-desc"' in svg[0]
    assert re.search(
        r'<desc id="chart-desc">From \d{4}-\d\d-\d\d to \d{4}-\d\d-\d\d: 18 '
        r"calls, 12 asked; 5 approved, 0 edited, 5 rejected\.</desc>",
        svg[0],
    )
    days = re.findall(r'<g class="day" data-date="([\d-]+)">', svg[0])
    assert len(days) == 4  # three days ago .. today, quiet days included
    assert svg[0].count('class="bar bar-approve"') == 1
    assert svg[0].count('class="bar bar-reject"') == 1
    assert len(re.findall(r'<tr><th scope="row">\d{4}-', text)) == len(api["by_day"])
    assert "style=" not in text and "<script>" not in text.split("</head>")[1]
    # tables per tool and per rule; suggestions with their exact command and TOML line
    assert _between(text, '<th scope="row"><code>', "</code>")[:3] == ["send", "bash", EVIL_TOOL]
    by_kind = {s["kind"]: s for s in api["suggestions"]}
    assert _between(text, '<pre class="command"><code>', "</code>") == [by_kind["allow"]["command"]]
    assert by_kind["allow"]["command"] == (
        "signoff grant add 'send(to=<script>window.__pwned=1</script>'\"'\"'s)' --scope project"
    )
    assert _between(text, '<pre class="toml"><code>', "</code>") == [by_kind["deny"]["toml"]]
    assert by_kind["deny"]["toml"] == json.dumps(f'Bash(curl "{EVIL}":*)') + ","
    assert "approved all 5 times it was asked" in text


def test_model_text_is_inert_on_the_page(live: LiveServer) -> None:
    with live.client() as c:
        text = c.get("/stats").text + c.get("/stats?lang=zh").text
    assert EVIL not in text and "<img src=x" not in text
    assert "&lt;script&gt;window.__pwned=1&lt;/script&gt;" in text
    assert "&lt;img src=x onerror=&#34;window.__pwned=2&#34;&gt;" in text


def test_page_in_chinese_with_a_window_and_errors(live: LiveServer) -> None:
    with live.client() as c:
        zh = c.get("/stats?lang=zh&since=1d").text
        assert "统计" in zh and "每日调用" in zh and "自 1d 起" in zh
        assert "询问的 5 次全部被批准" not in zh  # the approvals are older than a day
        assert '<dd class="big">2</dd>' in zh  # two calls in the last day
        assert "询问的 5 次全部被批准" in c.get("/stats?lang=zh").text
        bad = c.get("/stats?lang=en&since=someday")
        assert bad.status_code == 422 and 'id="error"' in bad.text
        assert "since &#39;someday&#39;: use a duration" in bad.text
        ancient = c.get("/stats", params={"since": "9" * 15 + "w"})  # before year 1
        assert ancient.status_code == 200 and '<dd class="big">18</dd>' in ancient.text
        future = c.get("/stats", params={"since": "2999-01-01"}).text
        assert 'id="no-activity"' in future and "<svg" not in future


def test_chart_geometry() -> None:
    def stats(days: tuple[Day, ...], since: float | None = None) -> Stats:
        return Stats(since, 5, 0, {}, 0, 0, 0, {}, (), 0, {}, (), (), {}, 0, 0, 0, 0, by_day=days)

    assert build_chart(compute_stats([])) is None
    chart = build_chart(
        stats(
            (Day("2027-01-01", calls=10, asked=5, approve=2, reject=1), Day("2027-01-04", calls=4))
        )
    )
    assert chart is not None
    assert [g.day.date for g in chart.groups] == [
        "2027-01-01",
        "2027-01-02",
        "2027-01-03",
        "2027-01-04",
    ]
    first = {b.kind: b for b in chart.groups[0].bars}
    assert first["calls"].height == pytest.approx(2 * first["asked"].height)
    assert first["calls"].y + first["calls"].height == chart.baseline
    assert first["approve"].height == pytest.approx(2 * first["reject"].height)
    assert first["reject"].y + first["reject"].height == pytest.approx(first["approve"].y)
    assert chart.groups[1].bars == () and chart.ymax == 10
    assert all(
        chart.left <= b.x and b.x + b.width <= chart.right for g in chart.groups for b in g.bars
    )
    long = tuple(Day(f"2027-{m:02d}-01", calls=1) for m in range(1, 13))
    many = build_chart(stats(long))
    assert many is not None and many.drawn == MAX_DAYS and many.hidden == 10
    assert many.last == "2027-12-01" and len(many.days) == 12
    assert duration(42) == "42s" and duration(150) == "2.5m" and duration(90, "zh") == "1.5 分钟"


def _signed_in(live: LiveServer, name: str, role: str) -> Any:
    import httpx

    token = live.accounts.add(name, role)
    client = httpx.Client(base_url=live.url, timeout=10)
    page = client.get("/login")
    csrf = re.search(r'name="csrf-token" content="([^"]+)"', page.text)
    assert csrf
    assert client.post("/login", data={"token": token, "csrf": csrf.group(1)}).status_code == 303
    return client


def _page_csrf(html_text: str) -> str:
    match = re.search(r'name="csrf-token" content="([^"]+)"', html_text)
    assert match
    return match.group(1)


def test_an_admin_turns_an_allow_suggestion_into_a_project_grant(live: LiveServer) -> None:
    from web_helpers import ALLOW_RULE

    settings_file = live.workspace / ".signoff" / "settings.local.toml"
    with contextlib.closing(_signed_in(live, "bob", "approver")) as approver:
        page = approver.get("/stats").text
        assert "/stats/allow" not in page  # the button is for admins only
        refused = approver.post("/stats/allow", data={"rule": ALLOW_RULE, "csrf": _page_csrf(page)})
        assert refused.status_code == 403
    with contextlib.closing(_signed_in(live, "ada", "admin")) as admin:
        page = admin.get("/stats").text
        assert page.count('action="/stats/allow"') == 1  # the allow suggestion, not the deny
        csrf = _page_csrf(page)
        assert admin.post("/stats/allow", data={"rule": ALLOW_RULE}).status_code == 403
        arbitrary = admin.post("/stats/allow", data={"rule": "Bash(*)", "csrf": csrf})
        assert (
            arbitrary.status_code == 422
            and "not an allow rule signoff suggests" in html.unescape(arbitrary.text)
        )
        assert not settings_file.exists()
        done = admin.post(
            "/stats/allow", data={"rule": ALLOW_RULE, "csrf": csrf}, follow_redirects=False
        )
        assert done.status_code == 303 and done.headers["location"].startswith("/grants")
        after = admin.get("/stats").text
    grants = live.store.list_grants(scope="project")
    assert [(g.rule, g.created_by) for g in grants] == [(ALLOW_RULE, "ada")]
    assert tomllib.loads(settings_file.read_text())["permissions"]["allow"] == [ALLOW_RULE]
    assert 'action="/stats/allow"' not in after  # granted: no longer suggested
