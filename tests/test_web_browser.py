"""The web inbox in a real browser: Playwright driving Debian's chromium (never downloaded).

Skips only when /usr/bin/chromium is missing and SIGNOFF_REQUIRE_BROWSER is unset.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from signoff.models import ToolCall
from signoff.runs.worker import work
from store_helpers import make_request
from web_helpers import SENT, LiveServer, build_stats_history, start_run

CHROMIUM = "/usr/bin/chromium"
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
DOCS = Path(__file__).resolve().parent.parent / "docs"

if not os.path.exists(CHROMIUM):
    if os.environ.get("SIGNOFF_REQUIRE_BROWSER"):
        raise RuntimeError(f"SIGNOFF_REQUIRE_BROWSER is set but {CHROMIUM} is missing")
    pytest.skip(f"{CHROMIUM} is missing", allow_module_level=True)

from playwright.sync_api import Browser, Page, expect, sync_playwright  # noqa: E402


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        yield b
        b.close()


@pytest.fixture
def live(tmp_path: Path, browser: Browser) -> Iterator[LiveServer]:
    with LiveServer(tmp_path) as server:
        yield server
        for context in browser.contexts:  # close event streams before the server stops
            context.close()


def login(browser: Browser, live: LiveServer, name: str, role: str = "approver") -> Page:
    token = live.accounts.add(name, role)
    page = browser.new_context(viewport={"width": 1200, "height": 800}).new_page()
    page.on("pageerror", lambda exc: pytest.fail(f"page error: {exc}"))
    page.goto(f"{live.url}/login")
    page.fill("input[name=token]", token)
    page.click("form.login button[type=submit]")
    page.wait_for_url(f"{live.url}/")
    return page


def pwned(page: Page) -> Any:
    return page.evaluate("() => window.__pwned")


def test_agent_request_appears_live_then_approval_resumes_the_run(
    browser: Browser, live: LiveServer
) -> None:
    page = login(browser, live, "alice")
    expect(page.locator("#empty")).to_be_visible()
    expect(page.locator("#live")).to_be_visible()  # the event stream is open
    run = start_run(
        live.store,
        live.workspace,
        {"to": "carol", "body": "quarterly numbers"},
        intent="Sending the report to Carol as asked.",
    )
    rid = run.waiting_on[0]
    card = page.locator(f'li.card[data-id="{rid}"]')
    expect(card).to_be_visible(timeout=5000)  # no reload
    expect(page.locator("#count")).to_have_text("1")
    # a second request, so the screenshot shows more than one risk
    live.store.create_request(
        make_request(
            call=ToolCall("bash", {"command": "rm -rf build && git push --force"}, "c9"),
            preview="rm -rf build && git push --force",
        )
    )
    expect(page.locator("li.card")).to_have_count(2, timeout=5000)
    if os.environ.get("SIGNOFF_SCREENSHOT"):  # refresh docs/web-inbox.png on purpose only
        page.screenshot(path=str(DOCS / "web-inbox.png"))
    page.keyboard.press("j")
    card.click()
    expect(page.locator(".intent")).to_have_text("Sending the report to Carol as asked.")
    expect(page.locator("#call")).to_contain_text('"to": "carol"')
    page.click("#form-approve button")
    expect(page.locator(".decided")).to_contain_text("Decided by you (alice): approved")
    SENT.clear()
    assert work(live.store, once=True) == 1
    assert [s["to"] for s in SENT] == ["carol"]
    expect(page.locator("#result")).to_have_text("sent to carol", timeout=5000)  # live
    page.reload()
    expect(page.locator("ol.history")).to_contain_text("Finished: sent to carol")


def test_invalid_edit_shows_the_error_and_changes_nothing(
    browser: Browser, live: LiveServer
) -> None:
    run = start_run(live.store, live.workspace, {"to": "carol"})
    rid = run.waiting_on[0]
    page = login(browser, live, "alice")
    page.goto(f"{live.url}/requests/{rid}")
    page.keyboard.press("e")
    expect(page.locator("#edit-arguments")).to_be_focused()
    page.fill("#edit-arguments", '{"to": 5, "bcc": "everyone"}')
    page.click("#form-edit button")
    expect(page.locator("#error")).to_contain_text("not valid")
    expect(page.locator("#edit-arguments")).to_have_value('{"to": 5, "bcc": "everyone"}')
    assert live.store.get_request(rid).state == "pending"
    assert live.store.get_request(rid).call.arguments == {"to": "carol"}
    page.fill("#edit-arguments", "{not json")
    page.click("#form-edit button")
    expect(page.locator("#error")).to_contain_text("not valid JSON")
    page.fill("#edit-arguments", '{"to": "dave"}')
    page.click("#form-edit button")
    expect(page.locator(".compare")).to_contain_text('"carol"')
    expect(page.locator(".compare .edited")).to_contain_text('"dave"')


def test_rejection_reason_reaches_the_transcript(browser: Browser, live: LiveServer) -> None:
    run = start_run(live.store, live.workspace, {"to": "carol"})
    rid = run.waiting_on[0]
    page = login(browser, live, "alice")
    page.goto(f"{live.url}/requests/{rid}?lang=zh")
    expect(page.locator("#form-approve button")).to_contain_text("批准")
    page.goto(f"{live.url}/requests/{rid}?lang=en")
    page.click("#form-reject button")  # empty reason: the browser refuses (required)
    assert live.store.get_request(rid).state == "pending"
    page.keyboard.press("r")
    page.keyboard.type("Carol is on leave; send it to Dave")
    page.click("#form-reject button")
    expect(page.locator(".decided")).to_contain_text("Decided by you (alice): rejected")
    assert work(live.store, once=True) == 1
    tool_results = [m for m in live.store.load_messages(run.id) if m.get("role") == "tool"]
    assert "Carol is on leave; send it to Dave" in tool_results[0]["content"]


def test_second_approver_sees_already_approved(browser: Browser, live: LiveServer) -> None:
    run = start_run(live.store, live.workspace, {"to": "carol"})
    rid = run.waiting_on[0]
    alice = login(browser, live, "alice")
    bob = login(browser, live, "bob")
    alice.goto(f"{live.url}/requests/{rid}")
    bob.goto(f"{live.url}/requests/{rid}")
    expect(bob.locator("#live")).to_be_visible()
    alice.click("#form-approve button")
    expect(bob.locator(".decided")).to_contain_text("Already approved by alice", timeout=5000)
    expect(bob.locator("#decide")).to_have_count(0)
    bob.goto(f"{live.url}/")
    bob.goto(f"{live.url}/requests/{rid}")
    expect(bob.locator(".decided")).to_contain_text("Already approved by alice")


def test_injection_renders_inert(browser: Browser, live: LiveServer) -> None:
    evil = '<script>window.__pwned=1</script><img src=x onerror="window.__pwned=2"><b>bold</b>'
    run = start_run(live.store, live.workspace, {"to": evil, "body": evil}, intent=evil)
    rid = run.waiting_on[0]
    diff = live.store.create_request(
        make_request(
            call=ToolCall("write_file", {"path": "a.html", "content": evil}, "c2"),
            preview=f"--- a.html\n+++ a.html\n+{evil}\n-{evil}",
        )
    )
    page = login(browser, live, "alice")
    expect(page.locator("li.card")).to_have_count(2)
    for target in (rid, diff.id):
        page.goto(f"{live.url}/requests/{target}")
        expect(page.locator("#call")).to_contain_text("<script>window.__pwned=1</script>")
        assert page.locator("b:text('bold')").count() == 0
    page.goto(f"{live.url}/requests/{rid}")
    expect(page.locator(".intent")).to_have_text(evil)
    page.fill("#reject-reason", evil)
    page.click("#form-reject button")
    expect(page.locator(".reason")).to_contain_text("<script>")
    page.goto(f"{live.url}/")
    live.store.create_request(make_request(call=ToolCall("bash", {"command": evil}, "c3")))
    expect(page.locator("li.card")).to_have_count(2, timeout=5000)  # the live path too
    assert pwned(page) is None
    page.goto(f"{live.url}/requests/{diff.id}")
    expect(page.locator("#preview .add")).to_contain_text("+<script>")
    assert pwned(page) is None


def test_viewer_sees_no_decision_forms(browser: Browser, live: LiveServer) -> None:
    req = live.store.create_request(make_request())
    page = login(browser, live, "vera", "viewer")
    page.goto(f"{live.url}/requests/{req.id}")
    expect(page.locator("#decide")).to_have_count(0)
    expect(page.locator("main")).to_contain_text("You can view but not decide.")


def test_stats_page_draws_the_chart(browser: Browser, live: LiveServer) -> None:
    build_stats_history(live.store, time.time())  # its tool names and rules carry markup
    page = login(browser, live, "vera", "viewer")
    page.click("#nav-stats")
    page.wait_for_url(f"{live.url}/stats")
    chart = page.locator("#chart svg")
    expect(chart).to_be_visible()
    box = chart.bounding_box()
    assert box is not None and box["width"] > 300 and box["height"] > 80
    bars = page.locator("#chart rect.bar")
    assert bars.count() >= 6
    tallest = max(
        (bars.nth(i).bounding_box() or {"height": 0})["height"] for i in range(bars.count())
    )
    assert tallest > 40  # drawn, not just present
    expect(page.locator("#chart-desc")).to_contain_text("18 calls, 12 asked")
    expect(page.locator("#fig-calls dd.big")).to_have_text("18")
    expect(page.locator("pre.command")).to_contain_text("signoff grant add 'send(to=<script>")
    if os.environ.get("SIGNOFF_SCREENSHOT"):  # refresh docs/web-stats.png on purpose only
        page.screenshot(path=str(DOCS / "web-stats.png"), full_page=True)
    page.fill("input[name=since]", "1d")
    page.click("#since-form button")
    page.wait_for_url(f"{live.url}/stats?since=1d")
    expect(page.locator("#fig-calls dd.big")).to_have_text("2")
    page.goto(f"{live.url}/stats?lang=zh")
    expect(page.locator("h1")).to_contain_text("统计")
    expect(page.locator("#chart-title")).to_have_text("每日调用")
    assert pwned(page) is None


def test_audit_page_filters_and_verifies(browser: Browser, live: LiveServer) -> None:
    build_stats_history(live.store, time.time())  # its rules and reasons carry markup
    page = login(browser, live, "vera", "viewer")
    page.click("#nav-audit")
    page.wait_for_url(f"{live.url}/audit")
    rows = page.locator("#entries tbody tr")
    assert rows.count() == len(live.store.events_after(0, limit=10_000))
    page.fill("#audit-filters input[name=run]", "run-b")
    page.click("#audit-filters button[type=submit]:not([name])")
    page.wait_for_url(f"{live.url}/audit?run=run-b**")
    assert rows.count() > 0
    for i in range(rows.count()):
        expect(rows.nth(i).locator("td").nth(3)).to_contain_text("run-b")
    page.click("#verify")
    expect(page.locator("#verified")).to_contain_text("entries verified")
    assert pwned(page) is None
