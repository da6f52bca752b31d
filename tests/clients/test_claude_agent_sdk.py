"""signoff's `can_use_tool` in front of the real Claude Agent SDK, end to end.

The SDK runs its bundled claude binary against the FAKE Anthropic API in a scratch project
(scratch HOME): the client really runs, or does not run, its tools; signoff judges every
call through `can_use_tool(...)` and its hooks. Every destructive command here acts only
inside the test's tmp_path.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from agent_sdk_harness import claude_agent_sdk
from claude_code_harness import VENV_BIN

from signoff.adapters.claude import NAME, Guard, can_use_tool
from signoff.adapters.core import request_id
from signoff.llm.fake_anthropic import FakeAnthropicServer, Seen, Text, ToolResult, ToolUse
from signoff.models import Decision, Request

RM_RF_BUILD = "rm -rf build"
RM_ONE_FILE = "rm build/out.txt"
RM_OTHER_FILE = "rm build/other.txt"


@pytest.fixture(scope="module")
def sdk() -> Any:
    return claude_agent_sdk()


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "build").mkdir(parents=True)
    (root / "build" / "out.txt").write_text("compiled\n")
    (root / "build" / "other.txt").write_text("other\n")
    (root / "notes.txt").write_text("the notes\n")
    (root / ".env").write_text("TOKEN=secret-value\n")
    (tmp_path / "home").mkdir()
    # `rm build/out.txt` would run contained, unasked (a revertible deletion): these tests
    # are about what happens to a question, so it asks by rule (a local file: the tests'
    # own settings.toml stays theirs)
    (root / ".signoff").mkdir()
    (root / ".signoff" / "settings.local.toml").write_text(
        '[permissions]\nask = ["Bash(rm build/out.txt)"]\n'
    )
    return root


def settings(project: Path, text: str) -> None:
    folder = project / ".signoff"
    folder.mkdir(exist_ok=True)
    (folder / "settings.toml").write_text(text)


def echo_last_result(seen: Seen) -> Text:
    result = seen.last_tool_result
    return Text(f"the tool said: {result.text if result else '(nothing)'}")


def bash(command: str) -> list[Any]:
    return [ToolUse("Bash", {"command": command, "description": "scripted"}), echo_last_result]


async def run(
    sdk: Any,
    api: FakeAnthropicServer,
    project: Path,
    guard: Guard,
    *,
    hooks: bool = True,
    **more: Any,
) -> list[Any]:
    """One query through the SDK; its messages. `more`: other `ClaudeAgentOptions`."""
    env = {
        "ANTHROPIC_BASE_URL": api.base_url,
        "ANTHROPIC_API_KEY": "fake",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "HOME": str(project.parent / "home"),
        "IS_SANDBOX": "1",  # the client refuses bypassPermissions as root without it
    }
    options = sdk.ClaudeAgentOptions(
        can_use_tool=guard,
        hooks=guard.hooks if hooks else None,
        cwd=str(project),
        env=env,
        **more,
    )

    async def prompt() -> AsyncIterator[dict[str, Any]]:
        yield {"type": "user", "message": {"role": "user", "content": "do the scripted work"}}

    return [message async for message in sdk.query(prompt=prompt(), options=options)]


def signoff(project: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    """The signoff command line, as another process, in the project."""
    done = subprocess.run(
        [str(VENV_BIN / "signoff"), *args],
        cwd=project,
        env={**os.environ, "HOME": str(project.parent / "home")},
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    if check:
        assert done.returncode == 0, f"signoff {' '.join(args)}: {done.stderr}"
    return done


def audit(project: Path) -> list[dict[str, Any]]:
    entries = json.loads(signoff(project, "audit", "--json").stdout)
    assert isinstance(entries, list)
    return entries


def kinds(project: Path, kind: str) -> list[dict[str, Any]]:
    return [e["data"] for e in audit(project) if e["kind"] == kind]


def only_result(api: FakeAnthropicServer) -> ToolResult:
    results = api.tool_results()
    assert len(results) == 1, results
    return results[0]


def session_of(messages: list[Any]) -> str:
    sessions = {m.session_id for m in messages if type(m).__name__ == "ResultMessage"}
    assert len(sessions) == 1, sessions
    return str(sessions.pop())


# ----------------------------------------------------------------------------- deny


@pytest.mark.filterwarnings("ignore::UserWarning")  # the SDK warns that the callback is shadowed
@pytest.mark.parametrize(
    ("hooks", "mode"),
    [(True, "default"), (False, "default"), (True, "bypassPermissions")],
    ids=["with-hooks", "callback-only", "with-hooks-bypassPermissions"],
)
async def test_a_denied_rm_rf_never_runs_and_its_reason_reaches_the_model(
    sdk: Any, project: Path, hooks: bool, mode: str
) -> None:
    settings(project, '[permissions]\ndeny = ["Bash(rm -rf:*)"]\n')
    with FakeAnthropicServer(bash(RM_RF_BUILD)) as api:
        await run(sdk, api, project, can_use_tool(project), hooks=hooks, permission_mode=mode)
    assert (project / "build" / "out.txt").read_text() == "compiled\n"
    result = only_result(api)
    assert result.is_error is True
    assert "signoff denied this call (rule Bash(rm -rf:*))" in result.text
    verdicts = kinds(project, "verdict")
    assert [(v["call"]["arguments"]["command"], v["verdict"]["effect"]) for v in verdicts] == [
        (RM_RF_BUILD, "deny")
    ]
    assert verdicts[0]["client"] == NAME
    assert not kinds(project, "session.outcome")  # it never ran
    signoff(project, "audit", "verify")


async def test_a_deny_holds_on_a_read_the_client_would_allow_unasked(
    sdk: Any, project: Path
) -> None:
    """The client never asks `can_use_tool` about a read; the hook judges it anyway."""
    settings(project, '[permissions]\ndeny = ["Read(./.env)"]\n')
    script = [ToolUse("Read", {"file_path": str(project / ".env")}), echo_last_result]
    with FakeAnthropicServer(script) as api:
        await run(sdk, api, project, can_use_tool(project))
    result = only_result(api)
    assert result.is_error is True
    assert "secret-value" not in result.text
    assert "signoff denied this call (rule Read(./.env))" in result.text


# ----------------------------------------------------------------------------- allow


async def test_a_read_runs_and_its_outcome_is_on_the_record(sdk: Any, project: Path) -> None:
    script = [ToolUse("Read", {"file_path": str(project / "notes.txt")}), echo_last_result]
    with FakeAnthropicServer(script) as api:
        messages = await run(sdk, api, project, can_use_tool(project))
    result = only_result(api)
    assert result.is_error is False
    assert "the notes" in result.text
    (verdict,) = kinds(project, "verdict")
    assert verdict["verdict"]["effect"] == "allow"
    assert verdict["session_id"] == session_of(messages)  # Claude's own, from the hook
    (outcome,) = kinds(project, "session.outcome")
    assert outcome["outcome"] == "ran"
    assert outcome["call"]["name"] == "Read"
    signoff(project, "audit", "verify")


async def test_a_file_write_runs_and_is_kept_for_review(sdk: Any, project: Path) -> None:
    target = project / "made.txt"
    script = [ToolUse("Write", {"file_path": str(target), "content": "new\n"}), echo_last_result]
    with FakeAnthropicServer(script) as api:
        await run(sdk, api, project, can_use_tool(project))
    assert target.read_text() == "new\n"
    assert only_result(api).is_error is False
    (verdict,) = kinds(project, "verdict")
    assert verdict["verdict"]["effect"] == "notify"
    (review,) = kinds(project, "review")  # revertible: `signoff review`, `signoff revert`
    assert [e["path"] for e in review["snapshot"]["entries"]] == ["made.txt"]


# ----------------------------------------------------------------------------- ask


# The client skips `can_use_tool` for what its own settings allow; the hooks send every
# call to signoff whatever they say.
CLIENT_SETTINGS = {
    "allowed-Bash": {"allowed_tools": ["Bash"]},
    "acceptEdits": {"permission_mode": "acceptEdits"},
    "dontAsk": {"permission_mode": "dontAsk"},
    "bypassPermissions": {"permission_mode": "bypassPermissions"},
}


@pytest.mark.filterwarnings("ignore::UserWarning")  # the SDK warns that the callback is shadowed
@pytest.mark.parametrize("client_settings", CLIENT_SETTINGS.values(), ids=CLIENT_SETTINGS)
async def test_the_clients_own_allowances_never_skip_signoffs_ask(
    sdk: Any, project: Path, client_settings: dict[str, Any]
) -> None:
    asked: list[Request] = []

    async def decide(request: Request) -> Decision:
        asked.append(request)
        return Decision("reject", actor="tester", reason="not now")

    with FakeAnthropicServer(bash(RM_ONE_FILE)) as api:
        await run(sdk, api, project, can_use_tool(project, ask=decide), **client_settings)
    assert [r.call.arguments["command"] for r in asked] == [RM_ONE_FILE]
    assert (project / "build" / "out.txt").exists()
    assert "rejected by tester: not now" in only_result(api).text


async def pending_request(project: Path, task: asyncio.Task[Any], deadline: float = 60) -> Any:
    """The request the callback waits on, read from another process (`signoff inbox`),
    without blocking the event loop the SDK runs in."""
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        assert not task.done(), task.result()
        done = await asyncio.to_thread(signoff, project, "inbox", "--json", check=False)
        if done.returncode == 0 and json.loads(done.stdout):
            (request,) = json.loads(done.stdout)
            return request
        assert done.returncode == 0 or "no signoff store" in done.stderr, done.stderr
        await asyncio.sleep(0.2)
    raise AssertionError(f"no request in the inbox after {deadline} s")


async def test_an_inbox_approval_from_another_process_lets_the_call_run(
    sdk: Any, project: Path
) -> None:
    with FakeAnthropicServer(bash(RM_ONE_FILE)) as api:
        task = asyncio.ensure_future(run(sdk, api, project, can_use_tool(project, wait=90)))
        request = await pending_request(project, task)
        assert request["call"]["arguments"]["command"] == RM_ONE_FILE
        assert (project / "build" / "out.txt").exists()  # nothing runs while undecided
        await asyncio.to_thread(signoff, project, "approve", request["id"], "--reason", "old")
        messages = await asyncio.wait_for(task, 120)
    assert not (project / "build" / "out.txt").exists()
    assert (project / "build" / "other.txt").exists()
    assert only_result(api).is_error is False
    # the id names the session and the tool-use id: a re-asked call finds the same request
    session = session_of(messages)
    tool_use = api.tool_results()[0].tool_use_id
    assert request["id"] == request_id(f"{NAME}/{session}/{tool_use}")
    shown = json.loads(signoff(project, "show", request["id"], "--json").stdout)
    assert shown["state"] == "finished"  # claimed by the callback, finished by PostToolUse
    (outcome,) = kinds(project, "session.outcome")
    assert outcome["request"] == request["id"]
    signoff(project, "audit", "verify")


async def test_an_expired_inbox_request_is_a_deny(sdk: Any, project: Path) -> None:
    with FakeAnthropicServer(bash(RM_ONE_FILE)) as api:
        await run(sdk, api, project, can_use_tool(project, wait=1))
    assert (project / "build" / "out.txt").exists()
    result = only_result(api)
    assert result.is_error is True
    assert "before it expired; the call did not run" in result.text


async def test_an_ask_function_edits_the_call_and_the_edit_runs(sdk: Any, project: Path) -> None:
    asked: list[Request] = []

    async def decide(request: Request) -> Decision:
        asked.append(request)
        return Decision("edit", actor="tester", arguments={"command": RM_OTHER_FILE})

    with FakeAnthropicServer(bash(RM_ONE_FILE)) as api:
        await run(sdk, api, project, can_use_tool(project, ask=decide))
    assert [r.call.arguments["command"] for r in asked] == [RM_ONE_FILE]
    assert asked[0].preview.startswith(RM_ONE_FILE)  # what the person read: the command first
    assert (project / "build" / "out.txt").exists()  # the model's call did not run
    assert not (project / "build" / "other.txt").exists()  # the person's did
    assert only_result(api).is_error is False
    (decided,) = [e for e in audit(project) if e["kind"] == "request.decided"]
    assert decided["actor"] == "tester"


async def test_an_ask_function_that_rejects_sends_its_reason_to_the_model(
    sdk: Any, project: Path
) -> None:
    async def decide(request: Request) -> Decision:
        return Decision("reject", actor="tester", reason="keep the build output")

    with FakeAnthropicServer(bash(RM_ONE_FILE)) as api:
        await run(sdk, api, project, can_use_tool(project, ask=decide))
    assert (project / "build" / "out.txt").exists()
    result = only_result(api)
    assert result.is_error is True
    assert "rejected by tester: keep the build output" in result.text


async def test_an_ask_function_that_fails_blocks_the_call(sdk: Any, project: Path) -> None:
    async def decide(request: Request) -> Decision:
        raise RuntimeError("the approval service is down")

    with FakeAnthropicServer(bash(RM_ONE_FILE)) as api:
        await run(sdk, api, project, can_use_tool(project, ask=decide))
    assert (project / "build" / "out.txt").exists()
    result = only_result(api)
    assert result.is_error is True
    assert "blocked: the approval service is down" in result.text


# ----------------------------------------------------------------------------- the docs


def test_the_docs_example_runs(sdk: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """docs/coding-agents.md's `python agent-sdk` block (test_docs leaves it to us: it
    needs the SDK, which this harness installs)."""
    text = (Path(__file__).resolve().parents[2] / "docs" / "coding-agents.md").read_text()
    (block,) = re.findall(r"^```python agent-sdk\n(.*?)^```", text, re.DOTALL | re.MULTILINE)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path))  # the bundled client's own files
    exec(compile(block, "docs/coding-agents.md", "exec"), {"__name__": "__doc_example__"})
