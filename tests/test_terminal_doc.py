"""docs/terminal.md's picture of the box is the real box: rendered here from a real verdict
and a real preview, it must match the picture line for line. And the expiry names its zone
and the time left."""

from __future__ import annotations

import io
import re
from pathlib import Path

from signoff.channels import Prompt
from signoff.channels.render import render_request
from signoff.channels.terminal import TerminalChannel
from signoff.i18n import t
from signoff.models import ALWAYS_SCOPES, Request, ToolCall
from signoff.policy import Policy
from signoff.settings import Settings
from signoff.times import relative
from signoff.workspace import Workspace

DOC = Path(__file__).resolve().parent.parent / "docs" / "terminal.md"
CREATED = 1_796_000_000.0  # 2026-11-30 00:53:20 UTC
SHOWN_ROOT = "/home/me/invoice-tool"  # the workspace as the picture names it
WIDTH = 78


def picture() -> str:
    """The first fenced block of docs/terminal.md, marked `text`."""
    found = re.search(r"^```text\n(.*?)^```", DOC.read_text(), re.DOTALL | re.MULTILINE)
    assert found, "docs/terminal.md has no ```text picture of the box"
    return found.group(1)


def real_box(root: Path) -> str:
    (root / "build").mkdir()
    policy = Policy(Settings(), workspace=root)
    call = ToolCall("execute_command", {"command": "rm -rf build/"}, "call_1")
    preview = Workspace(root).preview(call, policy.registry.get(call.name))
    request = Request(
        id="req_3f2a9c1d7e5b4a60",
        call=call,
        verdict=policy.evaluate(call),
        preview=preview.replace(str(root), SHOWN_ROOT),
        created_at=CREATED,
        expires_at=CREATED + 59 * 60,
    )
    box = render_request(request, width=WIDTH, lang="en", now=CREATED)
    return box + t("menu", "en") + "\n"


def test_the_docs_picture_is_the_real_box(tmp_path: Path) -> None:
    real = "\n".join(line.rstrip() for line in real_box(tmp_path).splitlines())
    shown = "\n".join(line.rstrip() for line in picture().splitlines())
    assert shown == real, f"docs/terminal.md's picture is out of date; the real box:\n{real}"


def test_expiry_names_its_zone_and_the_time_left(tmp_path: Path) -> None:
    box = real_box(tmp_path)
    assert "expires  2026-11-30 01:52:20 UTC (in 59 min)" in box


def test_time_left_in_words() -> None:
    now = 1_000_000.0
    assert relative(now + 30, now) == "in 30 s"
    assert relative(now + 59 * 60 + 20, now) == "in 59 min"
    assert relative(now + 3600, now) == "in 1 h"
    assert relative(now + 23 * 3600 + 5 * 60, now) == "in 23 h 5 min"
    assert relative(now + 3 * 86400, now) == "in 3 days"
    assert relative(now - 120, now) == "2 min ago"


def test_the_docs_always_dialog_is_the_real_one(tmp_path: Path) -> None:
    """The second picture: `a` on that box, as the terminal shows it."""
    blocks = re.findall(r"^```text\n(.*?)^```", DOC.read_text(), re.DOTALL | re.MULTILINE)
    shown = blocks[1].splitlines()
    request = Request(
        id="req_1",
        call=ToolCall("execute_command", {"command": "rm -rf build/"}),
        verdict=Policy(Settings(), workspace=tmp_path).evaluate(
            ToolCall("execute_command", {"command": "rm -rf build/"})
        ),
    )
    out = io.StringIO()
    channel = TerminalChannel(io.StringIO("a\n2\n"), out, lang="en", actor="me", width=WIDTH)
    prompt = Prompt(
        request,
        lambda arguments: None,
        always_rule=request.verdict.suggested_rule,
        always_scope="run",
        always_scopes=ALWAYS_SCOPES,
    )
    decision = channel.decide(prompt)
    assert decision.kind == "approve_always" and decision.scope == "project"
    # Off a terminal the typed keys are not echoed: the text after "> " is the dialog's.
    lines = [line.rstrip().removeprefix("> ") for line in out.getvalue().splitlines()]
    assert shown[0] == "a"
    start = lines.index(shown[1])
    for doc_line, real in zip(shown[1:], lines[start:], strict=False):
        assert real.startswith(doc_line.rstrip()), (doc_line, real)
