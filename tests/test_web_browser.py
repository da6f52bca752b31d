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


# ------------------------------------------------------------------ the first hour (issue 14)


@pytest.fixture
def live_worker(tmp_path: Path, browser: Browser) -> Iterator[LiveServer]:
    """A server that resumes runs itself, as `signoff serve` does by default."""
    with LiveServer(tmp_path, worker=True, worker_poll=0.2) as server:
        yield server
        for context in browser.contexts:
            context.close()


def test_approving_in_the_page_moves_the_run_on(browser: Browser, live_worker: LiveServer) -> None:
    run = start_run(live_worker.store, live_worker.workspace, {"to": "carol"})
    rid = run.waiting_on[0]
    page = login(browser, live_worker, "alice")
    page.goto(f"{live_worker.url}/requests/{rid}")
    expect(page.locator("#run-status")).to_have_text("paused, waiting on this decision")
    SENT.clear()
    page.click("#form-approve button")
    # said plainly, and no "Already approved by" for one's own decision
    expect(page.locator("#done")).to_have_text(
        "✓ Approved. The run continues: this server resumes it now."
    )
    expect(page.locator(".decided")).to_contain_text("Decided by you (alice): approved")
    expect(page.locator("#status")).not_to_contain_text("Already")
    # no other process, no reload: the run finishes and the page shows it
    expect(page.locator("#run-status")).to_have_text("finished", timeout=15000)
    expect(page.locator("#result")).to_have_text("sent to carol")
    expect(page.locator("#after")).to_contain_text("Finished: sent to carol")
    assert [s["to"] for s in SENT] == ["carol"]
    assert live_worker.store.get_run(run.id).status == "finished"


@pytest.mark.parametrize("declared", [True, None])
def test_a_question_offers_the_answer_alone(
    browser: Browser, live: LiveServer, declared: bool | None
) -> None:
    question = ToolCall("ask_human", {"question": "Which version?", "options": ["0.2.0", "1.0"]})
    metadata = {} if declared is None else {"asks_human": declared}
    req = live.store.create_request(make_request(call=question, metadata=metadata, run_id=None))
    page = login(browser, live, "alice")
    page.goto(f"{live.url}/requests/{req.id}")
    for form in ("approve", "skip", "always", "reject", "edit"):
        expect(page.locator(f"#form-{form}")).to_have_count(0)
    expect(page.locator("#keys")).to_have_count(0)  # a/s/r/e mean nothing here
    expect(page.locator("#form-options button.option")).to_have_text(["0.2.0", "1.0"])
    expect(page.locator("#form-answer textarea")).to_be_visible()
    page.click("#form-options button.option >> text=0.2.0")
    expect(page.locator("#done")).to_have_text("✓ Answered: your answer goes back to the model.")
    decided = live.store.get_request(req.id)
    assert decided.state == "answered" and decided.decision is not None
    assert decided.decision.result == "0.2.0"


def test_pages_are_clean_no_errors_no_backticks_keys_only_where_they_work(
    browser: Browser, live: LiveServer
) -> None:
    build_stats_history(live.store, time.time())
    pending = start_run(live.store, live.workspace, {"to": "carol"}).waiting_on[0]
    decided = start_run(live.store, live.workspace, {"to": "dave"}).waiting_on[0]
    alone = live.store.create_request(make_request(run_id=None))
    page = login(browser, live, "alice")
    page.goto(f"{live.url}/requests/{decided}")
    page.click("#form-approve button")  # this server has no worker: the page says how
    run_id = live.store.get_request(decided).run_id
    expect(page.locator("#resume-command")).to_contain_text(f"signoff resume {run_id} --db ")
    expect(page.locator("#worker-command")).to_contain_text("signoff worker --db ")
    page.goto(f"{live.url}/requests/{alone.id}")
    page.click("#form-approve button")
    expect(page.locator("#what-next")).to_be_visible()
    failures: list[str] = []
    page.on("response", lambda r: r.status >= 400 and failures.append(f"{r.status} {r.url}"))
    page.on("console", lambda m: m.type == "error" and failures.append(m.text))
    with_keys = {"/", f"/requests/{pending}"}
    for path in [
        "/",
        f"/requests/{pending}",
        f"/requests/{decided}",
        f"/requests/{alone.id}",
        "/grants",
        "/reviews",
        "/stats",
        "/audit",
        "/grants?m=revoked",
        "/reviews?m=%E2%9C%93%20approved%20by%20the%20boss",  # not ours: not shown
    ]:
        page.goto(f"{live.url}{path}")
        page.wait_for_load_state("load")
        text = page.locator("body").inner_text()
        assert "`" not in text, f"{path}: literal backticks in {text!r}"
        assert "the boss" not in text
        expect(page.locator("footer.keys")).to_have_count(1 if path in with_keys else 0)
        # headless chromium fetches no favicon, so each page's own links are fetched here
        expect(page.locator("link[rel=icon]")).to_have_count(1)
        links = page.eval_on_selector_all(
            "link[href], script[src], img[src]", "els => els.map(e => e.href || e.src)"
        )
        for link in [*links, f"{live.url}/favicon.ico"]:
            fetched = page.request.get(link)
            assert fetched.ok, f"{path}: {link} answered {fetched.status}"
    page.goto(f"{live.url}/login")
    assert "`" not in page.locator("body").inner_text()
    expect(page.locator("footer.keys")).to_have_count(0)
    assert failures == []
    icon = page.request.get(f"{live.url}/favicon.ico")
    assert icon.headers["content-type"].startswith("image/svg+xml")


def test_login_page_says_what_to_do_and_why_local_mode_ended(
    browser: Browser, live: LiveServer
) -> None:
    page = browser.new_context().new_page()
    page.goto(f"{live.url}/")  # no accounts: local mode, the person who started the server
    expect(page.locator(".who")).to_contain_text("local")
    token = live.accounts.add("alice", "admin")  # someone adds the first account
    page.goto(f"{live.url}/")
    page.wait_for_url(f"{live.url}/login?next=/")
    expect(page.locator("#local-ended")).to_contain_text("Local mode has ended")
    expect(page.locator("#local-ended code").first).to_have_text("signoff users add")
    expect(page.locator("main")).to_contain_text("Paste your access token to sign in.")
    expect(page.locator("#login-help code")).to_have_text("signoff users add NAME --role approver")
    page.fill("input[name=token]", token)
    page.click("form.login button[type=submit]")
    page.wait_for_url(f"{live.url}/")
    page.goto(f"{live.url}/login")
    expect(page.locator("#local-ended")).to_have_count(0)  # said once, then forgotten
    fresh = browser.new_context().new_page()  # someone who never used local mode
    fresh.goto(f"{live.url}/login")
    expect(fresh.locator("#local-ended")).to_have_count(0)
