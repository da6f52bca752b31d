"""The Codex, Gemini and Cursor shells as `signoff hook <client>` processes, and their
installers (no real client: those run in tests/clients/). Cursor is tested here only,
against its documented hook schema (hooks v1): there is no Cursor to run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from signoff.adapters import codex, cursor, gemini, install_clients
from signoff.exceptions import InvalidInput

RM_RF_BUILD = "rm -rf build"
SRC = str(Path(__file__).resolve().parents[1] / "src")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / ".signoff").mkdir(parents=True)
    (root / ".signoff" / "settings.toml").write_text(
        '[permissions]\ndeny = ["Bash(rm -rf:*)"]\n[hooks]\nwait = "60s"\n'
    )
    return root


def hook(client: str, doc: Any, *args: str) -> subprocess.CompletedProcess[str]:
    text = doc if isinstance(doc, str) else json.dumps(doc)
    return subprocess.run(
        [sys.executable, "-P", "-m", "signoff", "hook", client, *args],
        input=text,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": SRC},
        check=False,
    )


def codex_pre(project: Path, command: str, n: int = 1) -> dict[str, Any]:
    return {
        "hook_event_name": "PreToolUse",
        "session_id": "s1",
        "tool_use_id": f"call_{n}",
        "cwd": str(project),
        "tool_name": "Bash",
        "tool_input": {"command": command},
    }


# ------------------------------------------------------------------ Codex


def test_codex_deny_is_a_deny_with_the_reason(project: Path) -> None:
    done = hook("codex", codex_pre(project, RM_RF_BUILD))
    out = json.loads(done.stdout)["hookSpecificOutput"]
    assert done.returncode == 0
    assert out["permissionDecision"] == "deny"
    assert "rule Bash(rm -rf:*)" in out["permissionDecisionReason"]


def test_codex_allow_says_nothing_codex_cannot_take_an_allow(project: Path) -> None:
    done = hook("codex", codex_pre(project, "git status"))
    assert (done.returncode, done.stdout) == (0, "")


def test_codex_bad_input_blocks_with_text_on_stderr(project: Path) -> None:
    for doc in ("not json", {"hook_event_name": "PreToolUse"}, {"hook_event_name": "Nope"}):
        done = hook("codex", doc)
        assert done.returncode == 2 and "blocked" in done.stderr, doc


def test_codex_an_ask_waits_then_a_passed_deadline_blocks(project: Path) -> None:
    done = hook("codex", codex_pre(project, "git push"), "--deadline", "2")  # asks
    assert done.returncode == 2
    assert "deadline of 2 s" in done.stderr and "blocked" in done.stderr


def test_codex_cannot_ask_natively() -> None:
    with pytest.raises(InvalidInput, match="not possible with codex"):
        install_clients.install("codex", ".", ask="native", check=False)
    done = hook("codex", {}, "--ask", "native")
    assert done.returncode == 2


def test_codex_permission_request_failure_is_a_deny() -> None:
    out, code = codex.blocked("permission", "x")
    assert code == 0 and out is not None
    assert out["hookSpecificOutput"]["decision"]["behavior"] == "deny"


def test_codex_patch_is_judged_as_writes_of_its_files(project: Path) -> None:
    patch = (
        "*** Begin Patch\n*** Add File: a.txt\n+hi\n*** Delete File: ../outside.txt\n"
        "*** End Patch\n"
    )
    hc = codex.parse({**codex_pre(project, patch), "tool_name": "apply_patch"})
    assert hc.tool == "apply_patch" and hc.arguments["paths"] == ["a.txt", "../outside.txt"]
    with pytest.raises(InvalidInput, match="no '\\*\\*\\* Add"):
        codex.patch_paths("just text")
    done = hook(
        "codex", {**codex_pre(project, patch), "tool_name": "apply_patch"}, "--deadline", "2"
    )
    assert done.returncode == 2 and "deadline" in done.stderr  # outside: it asks, nobody answers


def test_codex_an_edit_from_the_inbox_is_refused_not_run() -> None:
    from signoff.adapters.core import Answer

    out, _ = codex.render("pre", Answer("allow", "approved", updated_input={"command": "ls"}))
    assert out is not None and out["hookSpecificOutput"]["permissionDecision"] == "deny"


# ------------------------------------------------------------------ Gemini


def gemini_pre(project: Path, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    return {
        "hook_event_name": "BeforeTool",
        "session_id": "g1",
        "timestamp": "2026-12-01T13:00:00Z",
        "cwd": str(project),
        "tool_name": tool,
        "tool_input": args,
    }


def test_gemini_shell_command_is_judged_by_signoffs_rules(project: Path) -> None:
    done = hook("gemini", gemini_pre(project, "run_shell_command", {"command": RM_RF_BUILD}))
    assert json.loads(done.stdout) == {
        "decision": "deny",
        "reason": "signoff denied this call (rule Bash(rm -rf:*)): denied by rule Bash(rm -rf:*)",
    }
    ok = hook("gemini", gemini_pre(project, "read_file", {"file_path": "README.md"}))
    assert (ok.returncode, ok.stdout) == (0, "")


def test_gemini_native_ask_is_geminis_own_dialog(project: Path) -> None:
    doc = gemini_pre(project, "run_shell_command", {"command": "git push"})
    done = hook("gemini", doc, "--ask", "native")
    out = json.loads(done.stdout)
    assert out["decision"] == "ask" and out["reason"].startswith("signoff asks")


def test_gemini_tools_map_onto_declarations() -> None:
    specs = gemini.CLIENT.specs
    assert specs["run_shell_command"].kind == "shell"
    assert specs["write_file"].kind == "file_write" and specs["write_file"].path_arg == "file_path"
    assert specs["replace"].kind == "file_write"
    assert specs["read_file"].kind == "file_read"
    assert specs["web_fetch"].url_arg == "url"
    one = gemini.parse(gemini_pre(Path("/"), "web_fetch", {"prompt": "sum up https://a.example/x"}))
    assert one.arguments["url"] == "https://a.example/x"
    two = gemini.parse(
        gemini_pre(Path("/"), "web_fetch", {"prompt": "https://a.example https://b.example"})
    )
    assert two.tool == gemini.SEVERAL_URLS  # undeclared: it asks


def test_gemini_a_write_outside_the_workspace_is_not_waved_through(project: Path) -> None:
    doc = gemini_pre(project, "write_file", {"file_path": "/etc/cron.d/x", "content": "x"})
    native = hook("gemini", doc, "--ask", "native")
    assert json.loads(native.stdout)["decision"] == "ask"
    inbox = hook("gemini", doc, "--ask", "inbox", "--deadline", "2")  # nobody decides
    assert inbox.returncode == 2 and "deadline" in inbox.stderr


# ------------------------------------------------------------------ Cursor (documented schema)


def cursor_doc(project: Path, event: str, **fields: Any) -> dict[str, Any]:
    return {
        "hook_event_name": event,
        "conversation_id": "c1",
        "generation_id": "gen1",
        "workspace_roots": [str(project)],
        **fields,
    }


def test_cursor_shell_deny_allow_and_schema(project: Path) -> None:
    denied = hook(
        "cursor", cursor_doc(project, "beforeShellExecution", command=RM_RF_BUILD, cwd=str(project))
    )
    out = json.loads(denied.stdout)
    assert denied.returncode == 2 and out["permission"] == "deny"
    assert "rule Bash(rm -rf:*)" in out["user_message"] == out["agent_message"]
    allowed = hook(
        "cursor",
        cursor_doc(project, "beforeShellExecution", command="git status", cwd=str(project)),
    )
    assert (allowed.returncode, json.loads(allowed.stdout)) == (0, {"permission": "allow"})
    read = hook(
        "cursor",
        cursor_doc(project, "beforeReadFile", file_path=str(project / "a.txt"), content=""),
    )
    assert json.loads(read.stdout) == {"permission": "allow"}
    after = hook(
        "cursor", cursor_doc(project, "afterShellExecution", command="git status", output="ok")
    )
    assert (after.returncode, json.loads(after.stdout)) == (0, {})


def test_cursor_mcp_input_is_json_text_and_bad_text_blocks(project: Path) -> None:
    hc = cursor.parse(
        cursor_doc(project, "beforeMCPExecution", tool_name="query", tool_input='{"q": 1}')
    )
    assert (hc.tool, hc.arguments) == ("mcp:query", {"q": 1})
    bad = hook(
        "cursor", cursor_doc(project, "beforeMCPExecution", tool_name="q", tool_input="{nope")
    )
    assert bad.returncode == 2 and json.loads(bad.stdout)["permission"] == "deny"


# ------------------------------------------------------------------ install


def test_hook_command_turns_every_failure_into_exit_2(tmp_path: Path) -> None:
    for base in ("false", "/nonexistent/signoff", "sh -c 'kill -9 $$'"):
        command = install_clients.hook_command("codex", ask="inbox", deadline=5, base=base)
        done = subprocess.run(["sh", "-c", command], capture_output=True, text=True, check=False)
        assert done.returncode == 2 and "the call is blocked" in done.stderr, base


def test_install_gemini_and_cursor_keep_other_hooks_and_uninstall_exactly(project: Path) -> None:
    settings = project / ".gemini" / "settings.json"
    settings.parent.mkdir()
    mine = {"matcher": "write_file", "hooks": [{"type": "command", "command": "mine"}]}
    settings.write_text(json.dumps({"theme": "x", "hooks": {"BeforeTool": [mine]}}))
    install_clients.install("gemini", project, check=False)
    doc = json.loads(settings.read_text())
    before = doc["hooks"]["BeforeTool"]
    assert before[1] == mine and "signoff" in before[0]["hooks"][0]["command"]
    assert before[0]["hooks"][0]["timeout"] == 120_000  # ms: longer than wait + deadline
    assert "--deadline 90" in before[0]["hooks"][0]["command"]
    install_clients.install("gemini", project, check=False)  # twice: still one group
    assert len(json.loads(settings.read_text())["hooks"]["BeforeTool"]) == 2
    install_clients.uninstall("gemini", project)
    assert json.loads(settings.read_text()) == {"theme": "x", "hooks": {"BeforeTool": [mine]}}

    report = install_clients.install("cursor", project, check=False)
    assert any("not run them on a real Cursor" in w for w in report.warnings)
    hooks = json.loads((project / ".cursor" / "hooks.json").read_text())
    assert hooks["version"] == 1
    assert all(g[0]["failClosed"] is True for g in hooks["hooks"].values())
    assert set(hooks["hooks"]) == set(install_clients.EVENTS["cursor"])


def test_install_refuses_an_old_or_missing_client(project: Path, tmp_path: Path) -> None:
    old = tmp_path / "gemini"
    old.write_text("#!/bin/sh\necho 0.20.1\n")
    old.chmod(0o755)
    with pytest.raises(Exception, match=r"older than 0\.61\.0"):
        install_clients.install("gemini", project, program=str(old))
    with pytest.raises(Exception, match="cannot run"):
        install_clients.install("codex", project, program=str(tmp_path / "missing"))
    assert not (project / ".gemini").exists()  # nothing was written


ESCAPES = [
    ("codex", "Bash", {"command": "echo x >> {home}/.codex/config.toml"}),
    ("codex", "Bash", {"command": "sed -i s/a/b/ ~/.codex/hooks.json"}),
    ("codex", "Bash", {"command": "rm -r .codex"}),
    ("gemini", "write_file", {"file_path": ".gemini/settings.json", "content": "{{}}"}),
    ("gemini", "run_shell_command", {"command": "echo {{}} > {home}/.gemini/settings.json"}),
    ("cursor", "Shell", {"command": "echo {{}} > .cursor/hooks.json"}),
]


@pytest.mark.parametrize(("client", "tool", "args"), ESCAPES)
def test_the_agent_cannot_rewrite_what_runs_its_hooks(
    client: str,
    tool: str,
    args: dict[str, str],
    project: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from signoff.adapters.core import Adapter, HookCall

    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("CODEX_HOME", str(home / ".codex"))
    shell = {"codex": codex, "gemini": gemini, "cursor": cursor}[client]
    filled = {k: v.format(home=home) for k, v in args.items()}
    hc = HookCall(client, "pre", "s", "c", tool, filled, cwd=str(project))
    adapter = Adapter(shell.CLIENT, project)
    verdict = adapter.policy(hc).evaluate(hc.call())
    assert verdict.effect == "deny", verdict


def test_cursor_at_the_deadline_the_deny_is_the_only_thing_on_stdout(project: Path) -> None:
    doc = cursor_doc(project, "beforeShellExecution", command="git push", cwd=str(project))
    done = hook("cursor", doc, "--deadline", "2")  # git push asks; nobody decides
    assert done.returncode == 2
    out = json.loads(done.stdout)  # one JSON object, nothing before it
    assert out["permission"] == "deny" and "deadline of 2 s" in out["agent_message"]
