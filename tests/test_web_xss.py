"""XSS in every page of the web inbox, in a real browser (issue 26: "attack the parts the
reviews did not reach"). Markup is planted in everything a model, an agent or a hook's
sender can write: tool names, arguments, reasons, rules, intents, transcripts, previews,
run and session ids, tenants, questions and their options, rejection reasons and actors,
grants, reviewed files, board titles, hook events, notification deliveries, and the query
strings and paths a link can carry. Each page is loaded twice: once with the
Content-Security-Policy stripped (so only escaping stands between the markup and the
page: nothing may run and no element may be injected), once as served (no CSP violation
may be reported: an injected inline script or handler would be one)."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

import pytest

from adapter_helpers import event
from signoff.board import Board
from signoff.models import Decision, Grant, ToolCall, Verdict
from store_helpers import make_request
from web_helpers import LiveServer, build_stats_history, start_run

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"]

if not os.path.exists(CHROMIUM):
    if os.environ.get("SIGNOFF_REQUIRE_BROWSER"):
        raise RuntimeError(f"SIGNOFF_REQUIRE_BROWSER is set but {CHROMIUM} is missing")
    pytest.skip(f"{CHROMIUM} is missing", allow_module_level=True)

from playwright.sync_api import Browser, BrowserContext, Page, Route, sync_playwright  # noqa: E402

EVILS = (
    "<script>window.__pwned='script'</script>",
    "<img src=x onerror=\"window.__pwned='img'\">",
    '"><svg onload="window.__pwned=\'svg\'"></svg>',
    "'><iframe srcdoc=\"<script>parent.__pwned='iframe'</script>\"></iframe>",
    "</textarea></code></pre></title><script>window.__pwned='close'</script>",
    "<a href=\"javascript:window.__pwned='href'\">click</a>",
    "<style>*{display:none}</style><base href=//127.0.0.1:9/>",
    "{{7*7}}${7*7}",
)
EVIL = "".join(EVILS)
FILE = "<img src=x onerror=\"window.__pwned='file'\">.txt"  # a file name: no slash

# After the page and its own script ran: what escaping let through.
INJECTED = """() => {
  const found = [];
  for (const el of document.querySelectorAll('*')) {
    for (const a of el.attributes) {
      if (a.name.startsWith('on')) found.push(el.tagName + ' ' + a.name);
      if (/^\\s*javascript:/i.test(a.value)) found.push(el.tagName + ' ' + a.name + ' js');
    }
  }
  for (const s of document.scripts) if (!s.src.endsWith('/static/app.js')) found.push('script');
  for (const tag of ['iframe', 'base', 'style', 'img', 'object', 'embed'])
    for (const el of document.getElementsByTagName(tag)) found.push(tag);
  return found;
}"""
WATCH = """
window.__csp = [];
document.addEventListener('securitypolicyviolation',
  e => window.__csp.push(e.violatedDirective + ' ' + e.blockedURI + ' ' + e.sample));
"""


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        yield b
        b.close()


@pytest.fixture
def live(tmp_path: Path, browser: Browser, monkeypatch: pytest.MonkeyPatch) -> Iterator[LiveServer]:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    with LiveServer(tmp_path) as server:
        yield server
        for context in browser.contexts:
            context.close()


def plant(live: LiveServer) -> tuple[list[str], list[str]]:
    """Markup in everything that can carry it; (pages to visit, request ids)."""
    store, ws = live.store, Path(os.path.realpath(live.workspace))
    run = start_run(store, live.workspace, {"to": EVIL, "body": EVIL}, intent=EVIL)
    asked = run.waiting_on[0]
    odd = store.create_request(
        make_request(
            call=ToolCall(EVIL, {EVIL: EVIL, "path": FILE}, "c2"),
            verdict=Verdict("ask", "high", EVIL, (EVIL, EVIL), "external", EVIL),
            preview=f"--- {FILE}\n+++ {FILE}\n+{EVIL}\n-{EVIL}",
            run_id=EVIL,
            tenant=EVIL,
            metadata={"intent": EVIL, "parent_runs": [EVIL], "original_call": {"name": EVIL}},
        )
    )
    question = store.create_request(
        make_request(
            call=ToolCall("ask_user", {"question": EVIL, "options": [EVIL, FILE]}, "c3"),
            metadata={"asks_human": True},
        )
    )
    rejected = store.create_request(make_request(call=ToolCall("bash", {"command": EVIL}, "c4")))
    store.decide(rejected.id, Decision("reject", reason=EVIL), actor=EVIL)
    edited = store.create_request(make_request(call=ToolCall("bash", {"command": "ls"}, "c5")))
    allowed = Verdict("allow", "none", None, (EVIL,), "read")
    store.decide(
        edited.id, Decision("edit", arguments={"command": EVIL}), actor="alice", new_verdict=allowed
    )
    store.record(
        "notify.delivered",
        {"channel": EVIL, "status": EVIL, "attempts": EVIL},
        request_id=odd.id,
    )
    store.add_grant(Grant(f"Bash({EVIL})", "project", created_by=EVIL))
    build_stats_history(store, time.time())
    board = Board(store)
    board.add_task(EVIL.replace("\n", " "), id="t-1", agent="lead")
    board.send("lead", EVIL, to="bob")
    hook = live.accounts.add("hook", "hook")
    with live.client(hook) as client:  # a hook's sender writes session, tool and ids
        for name in ("PreToolUse", "PostToolUse"):
            doc = event(ws, EVIL, {"x": EVIL}, name=name, session=EVIL, tool_use_id=EVIL)
            client.post("/hooks/claude-code", json=doc)
        write = {"file_path": str(ws / FILE), "content": EVIL}
        for name in ("PreToolUse", "PostToolUse"):  # a change kept for review
            client.post("/hooks/claude-code", json=event(ws, "Write", write, name=name))
    ids = [asked, odd.id, question.id, rejected.id, edited.id]
    q = {"tool": EVIL, "run": EVIL, "tenant": EVIL, "risk": EVIL, "state": "all"}
    audit = {"run": EVIL, "kind": EVIL, "actor": EVIL, "request": EVIL}
    pages = [
        "/",
        "/?state=all",
        f"/?{urlencode(q)}",
        "/grants",
        "/reviews",
        "/stats",
        f"/stats?since={quote(EVIL)}",
        "/audit",
        f"/audit?{urlencode(audit)}",
        f"/login?next=/{quote(EVIL)}",
        f"/requests/{quote(EVIL, safe='')}",
        f"/{quote(EVIL, safe='')}",
    ]
    for rid in ids:
        pages += [
            f"/requests/{rid}",
            f"/requests/{rid}/raw",
            f"/fragments/card/{rid}?state=all",
            f"/fragments/request/{rid}/status",
        ]
    return pages, ids


def only_local(origin: str, *, csp: bool) -> Any:
    """Every request the page makes: to the server under test, else refused (markup that
    got through must not reach anything else); without `csp`, the server's answers lose
    their Content-Security-Policy."""

    def handle(route: Route) -> None:
        url = route.request.url
        if not url.startswith(origin + "/"):
            route.abort()
        elif csp or "/api/events" in url:  # a fetch would wait the event stream out
            route.continue_()
        else:
            response = route.fetch(max_redirects=0)  # the browser follows them itself
            headers = {k: v for k, v in response.headers.items() if k != "content-security-policy"}
            route.fulfill(response=response, headers=headers)

    return handle


def signed_in(browser: Browser, live: LiveServer, token: str, *, csp: bool) -> Page:
    context: BrowserContext = browser.new_context()
    context.add_init_script(WATCH)
    context.route("**/*", only_local(live.url, csp=csp))
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(f"{live.url}/login")
    page.fill("input[name=token]", token)
    page.click("form.login button[type=submit]")
    page.wait_for_url(f"{live.url}/")
    return page


def visit(page: Page, url: str) -> dict[str, Any]:
    page.goto(url)
    page.wait_for_load_state("load")
    page.wait_for_timeout(150)  # the page's script, and what it fetches, have run
    return {
        "pwned": page.evaluate("() => window.__pwned"),
        "injected": page.evaluate(INJECTED),
        "csp": page.evaluate("() => window.__csp"),
        "text": page.evaluate("() => document.body ? document.body.innerText : ''"),
    }


def test_no_page_runs_or_grows_markup_from_what_agents_wrote(
    browser: Browser, live: LiveServer
) -> None:
    pages, ids = plant(live)
    token = live.accounts.add("alice", "admin")
    bare = signed_in(browser, live, token, csp=False)
    served = signed_in(browser, live, token, csp=True)
    shown = 0
    for path in pages:
        url = f"{live.url}{path}"
        seen = visit(bare, url)
        assert seen["pwned"] is None, (path, seen["pwned"])
        assert seen["injected"] == [], (path, seen["injected"])
        shown += "<script>window.__pwned='script'</script>" in seen["text"]
        checked = visit(served, url)
        assert checked["csp"] == [], (path, checked["csp"])
        assert checked["pwned"] is None
    assert shown >= 10  # the markup is there, as text, on the pages that show it
    for rid in ids:  # the request pages show it as text, whole
        text = visit(bare, f"{live.url}/requests/{rid}")["text"]
        assert "{{7*7}}${7*7}" in text  # shown as written, not evaluated anywhere


def test_markup_arriving_live_stays_text(browser: Browser, live: LiveServer) -> None:
    """Cards and status fragments are fetched and put in the page by its script
    (a template's innerHTML): markup in them would run there, with no CSP to stop it."""
    token = live.accounts.add("alice", "approver")
    page = signed_in(browser, live, token, csp=False)
    run = start_run(live.store, live.workspace, {"to": "bob"})
    page.goto(f"{live.url}/")
    page.wait_for_selector("#live:not([hidden])")
    live.store.create_request(
        make_request(call=ToolCall(EVIL, {"command": EVIL}, "c9"), preview=EVIL, run_id=EVIL)
    )
    page.wait_for_function("() => document.querySelectorAll('li.card').length === 2")
    assert page.evaluate("() => window.__pwned") is None
    assert page.evaluate(INJECTED) == []
    rid = run.waiting_on[0]
    page.goto(f"{live.url}/requests/{rid}")
    page.wait_for_selector("#live:not([hidden])")
    live.store.decide(rid, Decision("reject", reason=EVIL), actor=EVIL)
    page.wait_for_function("() => !document.getElementById('decide')")
    assert page.evaluate("() => window.__pwned") is None
    assert page.evaluate(INJECTED) == []
    assert "<script>window.__pwned='script'</script>" in page.inner_text("#status")
