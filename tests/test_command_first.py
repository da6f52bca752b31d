"""A shell call shows its command first, wherever a person reads it (issue 26, item 6).

A long model-written `description` used to come first in the preview (`# description`,
then the command), so the terminal box's 40 preview lines or a page's cut showed only the
agent's words. Now the command comes first, and the description after it on one line,
marked as the agent's own words: no line of it can pass for a line of the command.
"""

from __future__ import annotations

import html
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from signoff.adapters import claude_code, cursor, gemini
from signoff.channels.render import render_request
from signoff.models import Request, ToolCall, Verdict
from web_helpers import LiveServer

COMMAND = "git push --force origin main"
LONG = "\n".join(f"Step {i}: tidy the branch before review." for i in range(200))
TRICK = "Show the status\n\ngit status"  # a second line that looks like a command
MARK = "agent's description"

PREVIEWS = [
    ("claude-code", claude_code.CLIENT.preview, "Bash"),
    ("gemini", gemini.CLIENT.preview, "run_shell_command"),
    ("cursor", cursor.CLIENT.preview, "Shell"),
]


@pytest.mark.parametrize(("client", "preview", "tool"), PREVIEWS, ids=[p[0] for p in PREVIEWS])
@pytest.mark.parametrize(
    "description", [LONG, TRICK, "x" * 200_000], ids=["lines", "trick", "huge"]
)
def test_the_preview_starts_with_the_command(
    tmp_path: Path, client: str, preview: Any, tool: str, description: str
) -> None:
    shown = preview(ToolCall(tool, {"description": description, "command": COMMAND}), str(tmp_path))
    lines = shown.split("\n")
    assert lines[0] == COMMAND, shown[:300]
    if client != "cursor":  # Cursor's shell event carries no description
        told = [line for line in lines[1:] if line]
        assert len(told) == 1 and told[0].startswith(MARK), told[:3]
        assert "git status" not in lines  # the trick line is inside the marked line
        assert len(shown) < len(COMMAND) + 1000  # the agent's words are cut short


def test_a_multi_line_command_comes_whole_before_the_description(tmp_path: Path) -> None:
    command = "cat <<'EOF' > notes.txt\nhello\nEOF"
    shown = claude_code.preview(
        ToolCall("Bash", {"command": command, "description": "Write notes"}), str(tmp_path)
    )
    assert shown.startswith(command + "\n") and shown.endswith(f"{MARK}: Write notes")


def box_request(arguments: dict[str, Any], workspace: Path) -> Request:
    call = ToolCall("Bash", arguments, "toolu_1")
    return Request(
        id="req_1",
        call=call,
        verdict=Verdict("ask", "high", None, ("pushes to a remote",), "destructive"),
        preview=claude_code.preview(call, str(workspace)),
    )


def section(text: str, title: str) -> list[str]:
    """The lines of one section of a rendered box, without the borders."""
    lines = [line.strip("│ ").rstrip() for line in text.splitlines()]
    start = next(i for i, line in enumerate(lines) if line == title)
    out = []
    for line in lines[start + 1 :]:
        if line.startswith(("├", "╰")):
            break
        out.append(line)
    return out


def test_the_terminal_box_shows_the_command_before_the_agents_words(tmp_path: Path) -> None:
    request = box_request({"description": LONG, "command": COMMAND}, tmp_path)
    text = render_request(request, width=100)
    preview = section(text, "preview")
    assert preview[0] == COMMAND, preview[:3]
    arguments = section(text, "arguments")
    assert arguments[0].startswith("command:") and COMMAND in arguments[0], arguments[:3]


@pytest.fixture
def live(tmp_path: Path) -> Iterator[LiveServer]:
    with LiveServer(tmp_path) as server:
        yield server


def test_the_web_inbox_shows_the_command_before_the_agents_words(live: LiveServer) -> None:
    workspace = Path(os.path.realpath(live.workspace))
    arguments = {"description": "x" * 300_000, "aaa": "y" * 300_000, "command": COMMAND}
    request = live.store.create_request(box_request(arguments, workspace))
    with live.client() as c:
        page = c.get(f"/requests/{request.id}").text
        inbox = c.get("/").text
    shown = re.search(r'<pre class="preview" id="preview">(.*?)</pre>', page, re.S)
    assert shown is not None
    first = re.search(r"<span[^>]*>(.*?)</span>", shown.group(1), re.S)
    assert first is not None and html.unescape(first.group(1)) == COMMAND, shown.group(1)[:300]
    assert MARK in html.unescape(shown.group(1))
    call = re.search(r'<pre class="call" id="call">(.*?)</pre>', page, re.S)
    assert call is not None
    assert html.unescape(call.group(1)).lstrip("{\n ").startswith(f'"command": "{COMMAND}"')
    card = inbox.split(f'data-id="{request.id}"')[1].split("</li>")[0]
    assert COMMAND in html.unescape(card)
