"""Attack: a huge model-written argument in a real browser (issue 11, item 9).

The request page must stay small and usable with a 3 MB argument: the call is cut with its
full length noted, the edit box offers no cut JSON, and the "raw" link shows the whole
request. Playwright drives Debian's chromium; skips, saying so, when it is missing.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the tests' own helpers

from web_helpers import LiveServer, start_run

CHROMIUM = "/usr/bin/chromium"
if not os.path.exists(CHROMIUM):
    if os.environ.get("SIGNOFF_REQUIRE_BROWSER"):
        raise RuntimeError(f"SIGNOFF_REQUIRE_BROWSER is set but {CHROMIUM} is missing")
    pytest.skip(f"{CHROMIUM} is missing", allow_module_level=True)

from playwright.sync_api import Browser, sync_playwright  # noqa: E402

pytestmark = pytest.mark.slow  # drives a real browser

ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
SIZE = 3_000_000


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        yield b
        b.close()


def test_a_huge_argument_page_is_cut_and_the_whole_is_one_click_away(
    tmp_path: Path, browser: Browser
) -> None:
    with LiveServer(tmp_path) as live:
        token = live.accounts.add("alice", "approver")
        body = "Z" * SIZE
        run = start_run(live.store, live.workspace, {"to": "carol", "body": body})
        rid = run.waiting_on[0]
        context = browser.new_context()
        try:
            page = context.new_page()
            page.on("pageerror", lambda exc: pytest.fail(f"page error: {exc}"))
            page.goto(f"{live.url}/login")
            page.fill("input[name=token]", token)
            page.click("form.login button[type=submit]")
            page.wait_for_url(f"{live.url}/")
            response = page.goto(f"{live.url}/requests/{rid}")
            assert response is not None and len(response.body()) < 400_000
            shown = page.locator("#call").inner_text()
            assert len(shown) < 25_000 and "characters in all" in shown
            assert page.locator("#edit-arguments").input_value() == ""
            page.click("#raw-link")
            page.wait_for_url(f"{live.url}/requests/{rid}/raw")
            whole = json.loads(page.locator("body").inner_text())
            assert whole["call"]["arguments"]["body"] == body
        finally:
            context.close()
