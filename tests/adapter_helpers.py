"""Shared by the Claude Code adapter tests: hook events as Claude Code sends them."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from signoff.adapters import claude_code


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project in a private home (user settings, ~/.claude), with a file to edit."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.delenv("SIGNOFF_DB", raising=False)
    monkeypatch.delenv("CLAUDE_PROJECT_DIR", raising=False)
    root = tmp_path / "proj"
    root.mkdir()
    (root / "app.py").write_text("def main():\n    return 1\n")
    return Path(os.path.realpath(root))


def event(
    ws: Path,
    tool: str,
    args: dict[str, Any],
    *,
    name: str = "PreToolUse",
    session: str = "sess-1",
    tool_use_id: str | None = "toolu_01",
    **more: Any,
) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "session_id": session,
        "transcript_path": str(ws / "t.jsonl"),
        "cwd": str(ws),
        "permission_mode": "default",
        "hook_event_name": name,
        "tool_name": tool,
        "tool_input": args,
    }
    if tool_use_id is not None and name != "PermissionRequest":
        doc["tool_use_id"] = tool_use_id
    doc.update(more)
    return doc


def hook(ws: Path, doc: Any, *, ask: str | None = None) -> tuple[dict[str, Any] | None, int, str]:
    return claude_code.answer(doc, workspace=str(ws), ask=ask, env={})


def decision(out: dict[str, Any] | None) -> str:
    """PreToolUse's permissionDecision, or "none" when the hook said nothing."""
    if out is None:
        return "none"
    return str(out["hookSpecificOutput"]["permissionDecision"])


def reason(out: dict[str, Any] | None) -> str:
    assert out is not None
    return str(out["hookSpecificOutput"]["permissionDecisionReason"])
