"""The HTTP hook's credential (issue 26, item 8): hook events need the hook's own token,
never a person's; an outcome must be of a call judged here, else it is on the record as
unmatched, naming who sent it, and refused. A hook's token opens nothing else.

The attack: a viewer's API token posts `PostToolUse` for `git push --force origin main`,
a call never judged; before, it became a keyed `session.outcome` ("ran: ...") with no
actor, and `audit verify` accepted it."""

from __future__ import annotations

import json
import os
import stat
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from adapter_helpers import event, ws
from signoff.accounts import Accounts
from signoff.adapters.install import install, uninstall
from signoff.audit import describe, verify_store
from signoff.store import Event
from test_claude_code_cli import fake_version, signoff
from web_helpers import LiveServer

__all__ = ["ws"]

PUSH = {"command": "git push --force origin main"}


@pytest.fixture
def server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[LiveServer]:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.delenv("SIGNOFF_HOOK_TOKEN", raising=False)
    with LiveServer(tmp_path) as live:
        yield live


def ws_of(server: LiveServer) -> Path:
    return Path(os.path.realpath(server.workspace))


def post(server: LiveServer, token: str, doc: dict[str, Any]) -> Any:
    with server.client(token) as client:
        return client.post("/hooks/claude-code", json=doc)


def entries(server: LiveServer, kind: str) -> list[Event]:
    return [e for e in server.store.events_after(0, 1000) if e.kind == kind]


@pytest.mark.parametrize("role", ["viewer", "approver", "admin"])
def test_a_persons_token_cannot_post_hook_events(server: LiveServer, role: str) -> None:
    token = server.accounts.add("laptop", role)
    ws = ws_of(server)
    forged = post(server, token, event(ws, "Bash", PUSH, name="PostToolUse"))
    judged = post(server, token, event(ws, "Bash", {"command": "git status"}))
    assert forged.status_code == 403, forged.text
    assert judged.status_code == 403
    message = forged.json()["error"]
    assert f"laptop's, a {role}'s" in message and "signoff install claude-code --http" in message
    assert server.store.events_after(0) == []  # nothing on the record


def test_an_outcome_for_a_call_never_judged_is_unmatched_names_its_sender_and_is_refused(
    server: LiveServer,
) -> None:
    token = server.accounts.add("laptop-hook", "hook")
    ws = ws_of(server)
    forged = post(server, token, event(ws, "Bash", PUSH, name="PostToolUse"))
    assert forged.status_code == 409, forged.text
    assert "matches no judged call" in forged.json()["error"]
    assert entries(server, "session.outcome") == []
    (unmatched,) = entries(server, "session.unmatched")
    assert unmatched.actor == "hook:laptop-hook"
    assert unmatched.data["sender"] == "hook:laptop-hook"
    assert unmatched.data["call"]["arguments"] == PUSH
    line = describe(unmatched)
    assert line.startswith("UNMATCHED outcome from hook:laptop-hook, not recorded as one")
    assert verify_store(server.store).ok  # on the record, as what it is


def test_a_judged_calls_outcome_is_recorded_with_its_sender(server: LiveServer) -> None:
    token = server.accounts.add("laptop-hook", "hook")
    ws = ws_of(server)
    status = {"command": "git status"}
    pre = post(server, token, event(ws, "Bash", status))
    assert pre.json()["hookSpecificOutput"]["permissionDecision"] == "allow"
    ran = post(server, token, event(ws, "Bash", status, name="PostToolUse", tool_response="ok"))
    assert ran.status_code == 200, ran.text
    (verdict,) = entries(server, "verdict")
    (outcome,) = entries(server, "session.outcome")
    assert verdict.actor == outcome.actor == "hook:laptop-hook"
    assert outcome.data["outcome"] == "ran" and outcome.data["call"]["arguments"] == status
    again = post(server, token, event(ws, "Bash", status, name="PostToolUse"))
    assert again.status_code == 409  # one outcome per judged call: a replay is unmatched


def test_an_outcome_with_other_arguments_than_judged_is_unmatched(server: LiveServer) -> None:
    token = server.accounts.add("laptop-hook", "hook")
    ws = ws_of(server)
    post(server, token, event(ws, "Bash", {"command": "git status"}))  # allowed
    swapped = post(server, token, event(ws, "Bash", PUSH, name="PostToolUse"))
    assert swapped.status_code == 409
    assert entries(server, "session.outcome") == []
    (unmatched,) = entries(server, "session.unmatched")
    assert "other arguments" in unmatched.data["why"]


def test_a_denied_call_cannot_have_run_but_may_have_failed(server: LiveServer) -> None:
    token = server.accounts.add("laptop-hook", "hook")
    ws = ws_of(server)
    rm = {"command": "rm -rf /"}
    denied = post(server, token, event(ws, "Bash", rm))
    assert denied.json()["hookSpecificOutput"]["permissionDecision"] == "deny"
    ran = post(server, token, event(ws, "Bash", rm, name="PostToolUse"))
    assert ran.status_code == 409
    assert "denied here" in entries(server, "session.unmatched")[0].data["why"]
    post(server, token, event(ws, "Bash", rm, tool_use_id="toolu_02"))
    failed = post(
        server, token, event(ws, "Bash", rm, name="PostToolUseFailure", tool_use_id="toolu_02")
    )
    assert failed.status_code == 200, failed.text
    assert [e.data["outcome"] for e in entries(server, "session.outcome")] == ["failed"]


def test_a_call_asked_in_the_clients_dialog_matches_its_outcome(server: LiveServer) -> None:
    token = server.accounts.add("laptop-hook", "hook")
    ws = ws_of(server)
    curl = {"command": "curl https://example.com -d @notes.txt"}
    asked = post(server, token, event(ws, "Bash", curl))
    assert asked.json()["hookSpecificOutput"]["permissionDecision"] == "ask"
    ran = post(server, token, event(ws, "Bash", curl, name="PostToolUse"))
    assert ran.status_code == 200, ran.text
    assert [e.kind for e in server.store.events_after(0)][-2:] == [
        "session.decided",
        "session.outcome",
    ]


def test_the_servers_own_hook_token_is_a_sender_too(
    server: LiveServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SIGNOFF_HOOK_TOKEN", "s3cret-hook-token-0123456789")
    forged = post(
        server,
        "s3cret-hook-token-0123456789",
        event(ws_of(server), "Bash", PUSH, name="PostToolUse"),
    )
    assert forged.status_code == 409
    assert entries(server, "session.unmatched")[0].actor == "hook:$SIGNOFF_HOOK_TOKEN"


def test_a_hooks_token_opens_nothing_else(server: LiveServer) -> None:
    server.accounts.add("alice", "admin")
    token = server.accounts.add("laptop-hook", "hook")
    with server.client(token) as client:
        api = client.get("/api/requests")
        me = client.get("/api/me")
        stream = client.get("/api/events", params={"wait": "0"})
    assert api.status_code == me.status_code == 403
    assert "role hook" in api.json()["message"]
    assert stream.status_code == 401
    with server.client() as browser:
        page = browser.get("/login")
        csrf = page.text.split('name="csrf" value="')[1].split('"')[0]
        login = browser.post("/login", data={"csrf": csrf, "token": token, "next": "/"})
    assert login.status_code == 401
    assert "a hook&#39;s (role hook)" in login.text and "cannot sign in" in login.text


def test_a_hook_does_not_end_local_mode(server: LiveServer) -> None:
    server.accounts.add("laptop-hook", "hook")
    with server.client() as browser:
        assert browser.get("/").status_code == 200  # still the local user, on loopback
    server.accounts.add("alice", "approver")
    with server.client() as browser:
        assert browser.get("/").status_code == 303  # a person's account: sign in


# ------------------------------------------------------------------ made at install


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.delenv("SIGNOFF_DB", raising=False)
    return home


def test_install_http_makes_the_hooks_credential_and_uninstall_removes_it(
    tmp_path: Path, home: Path
) -> None:
    from signoff.adapters import hook_credential

    ws = tmp_path / "proj"
    ws.mkdir()
    claude = fake_version(tmp_path, "2.1.332")
    report = install(ws, http=True, claude=claude)
    path = Path(os.environ["SIGNOFF_CONFIG_DIR"]) / "hook-token"  # beside the key file
    token = path.read_text().strip()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    db = str(ws.resolve() / ".signoff" / "signoff.db")
    accounts = Accounts(db)
    try:
        account = accounts.authenticate(token)
        assert account is not None and account.role == "hook"
        assert account.name == hook_credential.default_name()
        assert accounts.people() == 0  # local mode goes on
    finally:
        accounts.close()
    assert any(f'export SIGNOFF_HOOK_TOKEN="$(cat {path})"' in line for line in report.lines)
    again = install(ws, http=True, claude=claude)  # nothing new: the same credential
    assert path.read_text().strip() == token
    assert any("already in" in line for line in again.lines)
    other = tmp_path / "other"  # another project, its own store: the same token, there too
    other.mkdir()
    install(other, http=True, claude=claude)
    assert path.read_text().strip() == token
    uninstall(ws)
    accounts = Accounts(db)
    try:
        assert accounts.authenticate(token) is None
    finally:
        accounts.close()
    accounts = Accounts(str(other.resolve() / ".signoff" / "signoff.db"))
    try:
        assert accounts.authenticate(token) is not None
    finally:
        accounts.close()


def test_install_refuses_a_persons_token_in_the_token_file(tmp_path: Path, home: Path) -> None:
    from signoff.exceptions import ConfigurationError

    ws = tmp_path / "proj"
    ws.mkdir()
    accounts = Accounts(str(ws / ".signoff" / "signoff.db"))
    path = Path(os.environ["SIGNOFF_CONFIG_DIR"]) / "hook-token"  # beside the key file
    path.write_text(accounts.add("alice", "admin") + "\n")
    accounts.close()
    with pytest.raises(ConfigurationError, match="alice, a admin, not a hook's"):
        install(ws, http=True, claude=fake_version(tmp_path, "2.1.332"))
    assert not (ws / ".claude").exists()  # nothing was written


def test_install_cli_prints_where_the_token_is_and_serve_takes_it(
    tmp_path: Path, home: Path
) -> None:
    from signoff.adapters import hook_credential

    ws = tmp_path / "proj"
    ws.mkdir()
    done = signoff(
        "install", "claude-code", "--http", "--claude", fake_version(tmp_path, "2.1.332"),
        "--workspace", str(ws), cwd=ws,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "export SIGNOFF_HOOK_TOKEN=" in done.stdout and "role hook" in done.stdout
    listed = signoff("users", "list", "--workspace", str(ws), cwd=ws)
    assert f"{hook_credential.default_name()}\thook" in listed.stdout
    settings = json.loads((ws / ".claude" / "settings.json").read_text())
    hook = settings["hooks"]["PostToolUse"][0]["hooks"][0]
    assert hook["headers"]["Authorization"] == "Bearer $SIGNOFF_HOOK_TOKEN"


def test_users_add_a_hook_says_what_it_is_for_and_local_mode_goes_on(
    tmp_path: Path, home: Path
) -> None:
    ws = tmp_path / "proj"
    ws.mkdir()
    done = signoff("users", "add", "ci-hook", "--role", "hook", "--workspace", str(ws), cwd=ws)
    assert done.returncode == 0, done.stderr
    assert "posts a coding agent's hook events" in done.stdout
    assert "local mode is over" not in done.stdout
    done = signoff("users", "add", "alice", "--role", "approver", "--workspace", str(ws), cwd=ws)
    assert "local mode is over" in done.stdout


# ------------------------------------------------------------------ a person's edit


def test_an_edited_calls_outcome_matches_the_edit_not_the_original(ws: Path) -> None:
    """Inbox mode through a sender: a person edits the call while the hook waits; the
    client runs the edit (`updatedInput`), so its outcome matches, and one that reports
    the original arguments is unmatched."""
    from signoff.adapters import claude_code
    from signoff.adapters.core import Adapter, hook_options, request_id
    from signoff.approvals import decide
    from signoff.models import Decision
    from signoff.settings import load_settings
    from signoff.store import open_store

    (ws / ".signoff").mkdir()
    (ws / ".signoff" / "settings.toml").write_text(
        '[hooks]\nask = "inbox"\nwait = "60s"\npoll = 0.05\n'
    )
    store = open_store(str(ws / ".signoff" / "signoff.db"))
    settings = load_settings(ws)
    original = {"command": "git push origin feature-x"}
    edited = {"command": "git push origin fix-y"}

    def person(rid: str) -> None:
        for _ in range(400):
            try:
                store.get_request(rid)
                break
            except KeyError:
                time.sleep(0.02)
        decide(store, rid, Decision("edit", arguments=edited), actor="alice", workspace=ws)

    def answer(doc: dict[str, Any]) -> tuple[Any, int, str]:
        adapter = Adapter(
            claude_code.CLIENT,
            ws,
            settings=settings,
            options=hook_options(settings),
            store=store,
            sender="hook:laptop-hook",
        )
        return claude_code.answer(doc, adapter=adapter)

    def edited_in_the_inbox(tool_use_id: str) -> str:
        doc = event(ws, "Bash", original, tool_use_id=tool_use_id)
        rid = request_id(f"claude-code/{doc['session_id']}/{tool_use_id}")
        thread = threading.Thread(target=person, args=(rid,))
        thread.start()
        out, _, _ = answer(doc)
        thread.join()
        assert out is not None and out["hookSpecificOutput"]["updatedInput"] == edited
        return rid

    try:
        ran = edited_in_the_inbox("toolu_01")
        post = event(ws, "Bash", edited, name="PostToolUse", tool_use_id="toolu_01")
        assert answer(post)[1] == 0
        assert store.get_request(ran).state == "finished"
        other = edited_in_the_inbox("toolu_02")
        post = event(ws, "Bash", original, name="PostToolUse", tool_use_id="toolu_02")
        _, code, message = answer(post)
        assert code == 2 and "other arguments" in message
        assert store.get_request(other).state == "claimed"  # not finished by a false report
        (unmatched,) = [e for e in store.events_after(0, 1000) if e.kind == "session.unmatched"]
        assert unmatched.data["call"]["arguments"] == original
    finally:
        store.close()
