"""The real Claude Code client with `signoff mcp proxy` as its MCP server.

`signoff mcp install claude-code` moves the project's MCP server (the real filesystem
server from npm) into `.signoff/mcp.toml` and leaves one entry in `.mcp.json`, the proxy.
Interactively, Claude Code asks once before it starts a server that a project's `.mcp.json`
names; the answer is kept as `enableAllProjectMcpServers: true` or
`enabledMcpjsonServers: ["signoff"]` in the settings. A headless `claude -p` run (2.1.332)
starts them without asking (measured: the test passes without that key too); the test writes
the key the way a person would, in the project's `.claude/settings.json`.
The FAKE Anthropic API scripts the model's calls of `mcp__signoff__files__...` tools, and
the test checks what the model was told and what happened in the files.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
from claude_code_harness import VENV_BIN, Claude

from signoff.llm.fake_anthropic import FakeAnthropicServer, Seen, Text, ToolUse
from signoff.store import open_store

pytest.importorskip("mcp")

from mcp_servers import filesystem_server, install_servers

READ = "mcp__signoff__files__read_text_file"
WRITE = "mcp__signoff__files__write_file"
MOVE = "mcp__signoff__files__move_file"


def signoff(project: Path, home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The signoff command line as a separate process (a person, elsewhere)."""
    done = subprocess.run(
        [str(VENV_BIN / "python"), "-m", "signoff", *args],
        cwd=project,
        env={**os.environ, "HOME": str(home)},
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    assert done.returncode == 0, f"signoff {' '.join(args)}: {done.stderr}"
    return done


def events(project: Path) -> list[dict[str, Any]]:
    store = open_store(workspace=project)
    try:
        return [
            {"kind": e.kind, "request": e.request_id, **e.data}
            for e in store.events_after(0, limit=10000)
        ]
    finally:
        store.close()


def test_claude_code_through_the_proxy_reads_asks_and_is_denied(claude: Claude) -> None:
    install_servers()
    project, home = claude.project, claude.home
    data = project / "data"
    data.mkdir()
    (data / "hello.txt").write_text("hello from the file\n")
    (project / ".mcp.json").write_text(
        json.dumps({"mcpServers": {"files": filesystem_server(data)}})
    )
    signoff(project, home, "mcp", "install", "claude-code", "--workspace", str(project))
    entry = json.loads((project / ".mcp.json").read_text())["mcpServers"]
    assert list(entry) == ["signoff"], entry
    (project / ".signoff" / "settings.toml").write_text(
        '[permissions]\ndeny = ["files__move_file"]\n'
    )
    # the person's approval of the project's MCP server (asked for interactively)
    (project / ".claude").mkdir()
    (project / ".claude" / "settings.json").write_text(
        json.dumps({"enableAllProjectMcpServers": True})
    )

    write = {"path": str(data / "new.txt"), "content": "written once"}
    approved: list[str] = []

    def approve_then_retry(seen: Seen) -> ToolUse:
        # a person approves from another process, then the model retries the same call
        result = seen.last_tool_result
        assert result is not None
        found = re.search(r"req_[0-9a-f]+", result.text)
        assert found, result.text
        if found.group() not in approved:
            signoff(project, home, "approve", found.group(), "--workspace", str(project))
            approved.append(found.group())
        return ToolUse(WRITE, write, id="toolu_retry")

    script = [
        ToolUse(READ, {"path": str(data / "hello.txt")}, id="toolu_read"),
        ToolUse(WRITE, write, id="toolu_write"),
        approve_then_retry,
        ToolUse(
            MOVE,
            {"source": str(data / "hello.txt"), "destination": str(data / "moved.txt")},
            id="toolu_move",
        ),
        Text("done"),
    ]
    with FakeAnthropicServer(script) as api:
        # Claude Code's own check is opened for the proxy's tools: signoff alone decides
        run = claude.run(api, "work with the files", "--allowedTools", "mcp__signoff")
    assert run.returncode == 0, f"exit {run.returncode}: {run.stderr[-3000:]}"

    results = {r.tool_use_id: r for r in api.tool_results()}
    assert set(results) == {"toolu_read", "toolu_write", "toolu_retry", "toolu_move"}, results
    # allowed (read-only): the content reaches the model
    assert not results["toolu_read"].is_error
    assert "hello from the file" in results["toolu_read"].text
    # asked: the model reads that it has not run and how a person decides
    asked = results["toolu_write"]
    assert asked.is_error and "has NOT run" in asked.text, asked
    assert f"signoff approve {approved[0]}" in asked.text
    # approved from another process, retried: it ran
    assert not results["toolu_retry"].is_error, results["toolu_retry"]
    assert (data / "new.txt").read_text() == "written once"
    # denied: the reason reaches the model, and the upstream never heard of it
    denied = results["toolu_move"]
    assert denied.is_error and "files__move_file" in denied.text, denied
    assert "denied" in denied.text
    assert (data / "hello.txt").read_text() == "hello from the file\n"
    assert not (data / "moved.txt").exists()
    assert sorted(p.name for p in data.iterdir()) == ["hello.txt", "new.txt"]

    log = events(project)
    ran = [e for e in log if e["kind"] == "session.outcome" and e.get("request") == approved[0]]
    assert [e["outcome"] for e in ran] == ["ran"], ran  # the approved call ran once
    moves = [e for e in log if e["kind"] == "session.outcome" and "move" in e["call"]["name"]]
    assert moves == []
    store = open_store(workspace=project)
    try:
        assert store.get_request(approved[0]).state == "finished"
    finally:
        store.close()
