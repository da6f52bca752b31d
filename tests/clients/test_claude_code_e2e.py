"""signoff in front of the real Claude Code client, end to end.

Each test installs signoff's hooks with `signoff install claude-code` into a scratch project,
scripts the FAKE Anthropic API to make tool calls, and runs `claude -p`: the client really
runs (or does not run) its tools, and calls `signoff hook claude-code` as a process of its
own. Claude Code's own permission check is opened with `--allowedTools` wherever the point
is that signoff alone stops a call (the first test shows the same call then runs without
signoff). Every destructive command here acts only inside the test's tmp_path.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
import tomlkit
from claude_code_harness import VENV_BIN, Claude, ClaudeRun

from signoff.llm.fake_anthropic import FakeAnthropicServer, Seen, Text, ToolResult, ToolUse

RM_RF_BUILD = "rm -rf build"
RM_ONE_FILE = "rm build/out.txt"


def echo_last_result(seen: Seen) -> Text:
    """The model's last word: what its tool call came back with, so a test can read it."""
    result = seen.last_tool_result
    return Text(f"the tool said: {result.text if result else '(nothing)'}")


def bash(command: str) -> list[Any]:
    return [ToolUse("Bash", {"command": command, "description": "scripted"}), echo_last_result]


def signoff(claude: Claude, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    """The signoff command line, as a separate process, in the project."""
    env = {**os.environ, "HOME": str(claude.home)}
    done = subprocess.run(
        [str(VENV_BIN / "signoff"), *args],
        cwd=claude.project,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    if check:
        assert done.returncode == 0, f"signoff {' '.join(args)}: {done.stderr}"
    return done


def install(claude: Claude, *args: str, **tables: dict[str, Any]) -> None:
    """`signoff install claude-code`, then more signoff settings for the test, merged
    into the tables install wrote (`hooks={"wait": "5s"}`)."""
    signoff(claude, "install", "claude-code", "--claude", str(claude.binary), *args)
    # `rm build/out.txt` would run contained, unasked (a revertible deletion): these tests
    # are about what happens to a question, so it asks by rule
    permissions = dict(tables.get("permissions", {}))
    permissions.setdefault("ask", [f"Bash({RM_ONE_FILE})"])
    tables = {**tables, "permissions": permissions}
    hooks = json.loads((claude.project / ".claude" / "settings.json").read_text())
    assert {h["onFailure"] for g in hooks["hooks"].values() for h in g[0]["hooks"]} == {"block"}
    path = claude.project / ".signoff" / "settings.toml"
    doc = tomlkit.parse(path.read_text())
    for name, values in tables.items():
        table = doc.setdefault(name, tomlkit.table())
        table.update(values)
    path.write_text(tomlkit.dumps(doc))


def audit(claude: Claude) -> list[dict[str, Any]]:
    entries = json.loads(signoff(claude, "audit", "--json").stdout)
    assert isinstance(entries, list)
    return entries


def verdicts(claude: Claude) -> list[tuple[str, str]]:
    """(command or tool, effect) of every verdict on the record, in order."""
    found = []
    for entry in audit(claude):
        if entry["kind"] == "verdict":
            call = entry["data"]["call"]
            what = call["arguments"].get("command") or call["name"]
            found.append((what, entry["data"]["verdict"]["effect"]))
    return found


def only_result(api: FakeAnthropicServer) -> ToolResult:
    results = api.tool_results()
    assert len(results) == 1, results
    return results[0]


def make_build(project: Path) -> Path:
    build = project / "build"
    build.mkdir()
    (build / "out.txt").write_text("compiled\n")
    return build


def pending_request(claude: Claude, run: Any, deadline: float = 60) -> dict[str, Any]:
    """The request the hook is waiting on, read from another process (`signoff inbox`)."""
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        assert run.process.poll() is None, run.finish()
        done = signoff(claude, "inbox", "--json", check=False)
        if done.returncode == 2 and "no signoff store" in done.stderr:
            time.sleep(0.2)  # the hook has not opened the store yet: reads never create it
            continue
        assert done.returncode == 0, done.stderr
        listed = json.loads(done.stdout)
        if listed:
            assert len(listed) == 1, listed
            request = listed[0]
            assert isinstance(request, dict)
            return request
        time.sleep(0.2)
    raise AssertionError(f"no request in the inbox after {deadline} s")


def assert_ok(run: ClaudeRun) -> None:
    assert run.returncode == 0, f"exit {run.returncode}: {run.stderr[-2000:]}"


# ----------------------------------------------------------------------------- the tests


def test_without_signoff_the_same_call_would_delete_build(claude: Claude) -> None:
    # The control for the tests below: with Claude Code's own check opened, nothing but
    # signoff stands between the scripted call and the files.
    make_build(claude.project)
    with FakeAnthropicServer(bash(RM_RF_BUILD)) as api:
        run = claude.run(api, "clean up", "--allowedTools", "Bash")
    assert_ok(run)
    assert not (claude.project / "build").exists()
    assert only_result(api).is_error is False


def test_a_denied_rm_rf_never_runs_and_the_model_reads_why(claude: Claude) -> None:
    build = make_build(claude.project)
    install(claude, "--ask", "inbox", permissions={"deny": ["Bash(rm -rf:*)"]})
    with FakeAnthropicServer(bash(RM_RF_BUILD)) as api:
        run = claude.run(api, "clean up", "--allowedTools", "Bash")
    assert_ok(run)
    assert (build / "out.txt").read_text() == "compiled\n"
    result = only_result(api)  # what the model was shown as the tool's result
    assert result.is_error is True
    assert "signoff denied this call (rule Bash(rm -rf:*))" in result.text
    assert run.result["result"] == f"the tool said: {result.text}"
    assert [d["tool_name"] for d in run.result["permission_denials"]] == ["Bash"]
    assert verdicts(claude) == [(RM_RF_BUILD, "deny")]
    assert not any(e["kind"] == "session.outcome" for e in audit(claude))
    signoff(claude, "audit", "verify")


def test_an_inbox_approval_from_another_process_lets_the_call_run(claude: Claude) -> None:
    build = make_build(claude.project)
    install(claude, "--ask", "inbox", hooks={"wait": "90s"})
    with FakeAnthropicServer(bash(RM_ONE_FILE)) as api:
        run = claude.start(api, "clean up", "--allowedTools", "Bash")
        request = pending_request(claude, run)
        assert request["call"]["arguments"]["command"] == RM_ONE_FILE
        assert (build / "out.txt").exists()  # the client waits while nobody has decided
        signoff(claude, "approve", request["id"], "--reason", "old output")
        done = run.finish()
    assert_ok(done)
    assert not (build / "out.txt").exists()
    assert only_result(api).is_error is False
    shown = json.loads(signoff(claude, "show", request["id"], "--json").stdout)
    assert shown["state"] == "finished"  # claimed by the hook, finished by PostToolUse
    signoff(claude, "audit", "verify")


def test_an_inbox_rejection_reaches_the_model_with_its_reason(claude: Claude) -> None:
    build = make_build(claude.project)
    install(claude, "--ask", "inbox", hooks={"wait": "90s"})
    with FakeAnthropicServer(bash(RM_ONE_FILE)) as api:
        run = claude.start(api, "clean up", "--allowedTools", "Bash")
        request = pending_request(claude, run)
        signoff(claude, "reject", request["id"], "--reason", "keep the build output")
        done = run.finish()
    assert_ok(done)
    assert (build / "out.txt").exists()
    result = only_result(api)
    assert result.is_error is True
    assert "rejected by" in result.text and "keep the build output" in result.text


CRASHES = {
    # the hook process dies by a signal (as when it is killed for memory)
    "killed": "{python} -c 'import os, signal; os.kill(os.getpid(), signal.SIGKILL)'",
    # the hook's program is gone (signoff uninstalled, a venv removed)
    "missing": "{project}/no-such-signoff hook claude-code",
    # the hook raises before it can answer
    "raises": "{python} -c 'raise RuntimeError(\"boom\")'",
}


@pytest.mark.parametrize("how", sorted(CRASHES))
def test_a_hook_that_crashes_blocks_the_call(claude: Claude, how: str) -> None:
    python = VENV_BIN / "python"
    command = CRASHES[how].format(python=python, project=claude.project)
    install(claude, "--command", command)
    with FakeAnthropicServer(bash("touch made-by-claude")) as api:
        run = claude.run(api, "make a file", "--allowedTools", "Bash")
    assert_ok(run)
    assert not (claude.project / "made-by-claude").exists()
    result = only_result(api)
    assert result.is_error is True
    assert 'blocking because onFailure is "block"' in result.text


def test_a_hook_that_cannot_open_its_store_blocks_the_call(claude: Claude) -> None:
    install(claude)
    (claude.project / ".signoff" / "signoff.db").write_bytes(b"this is not a database\n" * 64)
    with FakeAnthropicServer(bash("touch made-by-claude")) as api:
        run = claude.run(api, "make a file", "--allowedTools", "Bash")
    assert_ok(run)
    assert not (claude.project / "made-by-claude").exists()
    result = only_result(api)
    assert result.is_error is True
    assert "signoff could not judge this call, so it is blocked" in result.text


def test_an_edit_is_previewed_as_its_diff_and_runs_as_approved(claude: Claude) -> None:
    notes = claude.project / "notes.txt"
    notes.write_text("alpha\nbeta\ngamma\n")
    install(claude, "--ask", "inbox", permissions={"ask": ["Edit"]})
    edit = {"file_path": str(notes), "old_string": "beta", "new_string": "BETA"}
    script = [ToolUse("Read", {"file_path": str(notes)}), ToolUse("Edit", edit), echo_last_result]
    with FakeAnthropicServer(script) as api:
        run = claude.start(api, "shout beta", "--allowedTools", "Read,Edit")
        request = pending_request(claude, run)
        shown = json.loads(signoff(claude, "show", request["id"], "--json").stdout)
        signoff(claude, "approve", request["id"])
        done = run.finish()
    assert_ok(done)
    assert shown["preview"] == (
        "--- a/notes.txt\n+++ b/notes.txt\n@@ -1,3 +1,3 @@\n alpha\n-beta\n+BETA\n gamma\n"
    )
    assert notes.read_text() == "alpha\nBETA\ngamma\n"
    assert [r.is_error for r in api.tool_results()] == [False, False]
    assert verdicts(claude) == [("Read", "allow"), ("Edit", "ask")]


def test_git_status_runs_without_asking(claude: Claude) -> None:
    subprocess.run(["git", "init", "-q", str(claude.project)], check=True)
    # inbox with a short wait: had signoff asked, the call would be refused, not hang
    install(claude, "--ask", "inbox", hooks={"wait": "5s"})
    with FakeAnthropicServer(bash("git status")) as api:
        run = claude.run(api, "what changed?")  # no --allowedTools: nothing else says yes
    assert_ok(run)
    result = only_result(api)
    assert result.is_error is False
    assert "No commits yet" in result.text
    assert verdicts(claude) == [("git status", "allow")]
    assert json.loads(signoff(claude, "inbox", "--json", "--all").stdout) == []
    outcomes = [e["data"]["outcome"] for e in audit(claude) if e["kind"] == "session.outcome"]
    assert outcomes == ["ran"]


def test_a_deferred_headless_run_is_resumed_by_the_worker_once_approved(claude: Claude) -> None:
    build = make_build(claude.project)
    install(
        claude,
        "--ask",
        "defer",
        hooks={"claude": str(claude.binary), "resume_args": ["--output-format", "json"]},
    )
    with FakeAnthropicServer(bash(RM_ONE_FILE)) as api:
        first = claude.run(api, "clean up")
        assert_ok(first)
        assert first.result["stop_reason"] == "tool_deferred", first.result
        assert (build / "out.txt").exists()  # nothing ran: the session waits for a person
        (request,) = json.loads(signoff(claude, "inbox", "--json").stdout)
        signoff(claude, "approve", request["id"])
        # the worker resumes the session, in its own process, with the client's environment
        worker = subprocess.run(
            [str(VENV_BIN / "signoff"), "worker", "--once"],
            cwd=claude.project,
            env={**os.environ, **claude.env(api)},
            capture_output=True,
            text=True,
            timeout=120,
            stdin=subprocess.DEVNULL,
            check=False,
        )
    assert worker.returncode == 0, worker.stderr
    assert not (build / "out.txt").exists()
    result = only_result(api)
    assert result.is_error is False, result.text
    shown = json.loads(signoff(claude, "show", request["id"], "--json").stdout)
    assert shown["state"] == "finished"
    resumed = [e["data"] for e in audit(claude) if e["data"].get("outcome") == "resumed"]
    assert [r["exit"] for r in resumed] == [0]


def test_an_inbox_edit_runs_the_persons_arguments_not_the_models(claude: Claude) -> None:
    build = make_build(claude.project)
    install(claude, "--ask", "inbox", hooks={"wait": "90s"})
    with FakeAnthropicServer(bash(RM_ONE_FILE)) as api:
        run = claude.start(api, "clean up", "--allowedTools", "Bash")
        request = pending_request(claude, run)
        edited = {"command": "touch build/kept", "description": "keep it instead"}
        signoff(claude, "edit", request["id"], "--args", json.dumps(edited))
        done = run.finish()
    assert_ok(done)
    assert (build / "out.txt").exists()  # the model's command never ran
    assert (build / "kept").exists()  # the person's did
    assert only_result(api).is_error is False


def test_an_edit_into_a_denied_call_is_still_denied(claude: Claude) -> None:
    build = make_build(claude.project)
    install(
        claude,
        "--ask",
        "inbox",
        hooks={"wait": "90s"},
        permissions={"deny": ["Bash(rm -rf:*)"]},
    )
    with FakeAnthropicServer(bash(RM_ONE_FILE)) as api:
        run = claude.start(api, "clean up", "--allowedTools", "Bash")
        request = pending_request(claude, run)
        worse = {"command": RM_RF_BUILD, "description": "all of it"}
        edit = signoff(claude, "edit", request["id"], "--args", json.dumps(worse))
        done = run.finish()
    assert "state rejected" in edit.stdout  # judged again as it was decided: a deny wins
    assert_ok(done)
    assert (build / "out.txt").exists()
    result = only_result(api)
    assert result.is_error is True
    assert "edited the call, and the edited call is denied" in result.text
    assert "Bash(rm -rf:*)" in result.text


def test_loading_a_tool_and_searching_a_folder_never_ask(claude: Claude) -> None:
    # the model loads deferred tools (ToolSearch) all the time: a question each time would
    # be the alert fatigue signoff exists to avoid. (A Grep of the whole project asks: it
    # holds .signoff/, which Grep would read; tests/test_tools_reach.py.)
    install(claude, "--ask", "inbox", hooks={"wait": "5s"})
    (claude.project / "notes").mkdir()
    (claude.project / "notes" / "a.txt").write_text("needle\n")
    script = [
        ToolUse("ToolSearch", {"query": "select:Glob,Grep"}),
        ToolUse("Glob", {"pattern": "**/*.txt"}),
        ToolUse("Grep", {"pattern": "needle", "path": "notes"}),
        echo_last_result,
    ]
    with FakeAnthropicServer(script) as api:
        # (headless, Glob and Grep exist only when named; signoff judges them all the same)
        run = claude.run(api, "find the needle", "--allowedTools", "Glob,Grep")
    assert_ok(run)
    assert [r.is_error for r in api.tool_results()] == [False, False, False], api.tool_results()
    assert "a.txt" in api.tool_results()[1].text
    assert verdicts(claude) == [("ToolSearch", "allow"), ("Glob", "allow"), ("Grep", "allow")]
    assert json.loads(signoff(claude, "inbox", "--json", "--all").stdout) == []
