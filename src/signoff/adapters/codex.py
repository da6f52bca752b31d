"""The Codex CLI shell over the adapter core (verified on `@openai/codex` 0.171.0).

    echo '{"hook_event_name": "PreToolUse", "tool_name": "Bash", ...}' | signoff hook codex
    {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                            "permissionDecisionReason": "signoff denied this call ..."}}

What Codex allows a hook to say, and so what signoff says:

- `PreToolUse` can only deny (an `allow` or `ask` answer is refused by Codex, and so is
  `updatedInput`). signoff deny -> deny with the reason; allow and notify -> nothing
  (Codex's own sandbox and approval policy go on); ask -> the hook waits on the signoff
  inbox (Codex cannot ask from here), then says nothing (approved) or denies. An inbox
  edit cannot be handed to Codex, so it is refused with the edited call in the reason.
- `PermissionRequest` (Codex is about to prompt): allow or deny from the inbox.
- `PostToolUse`: the outcome goes on the record.

Tools: `Bash` (`tool_input.command`), `apply_patch` (the patch text in
`tool_input.command`; the files it touches are read from it and judged as file writes),
MCP tools as `mcp__server__tool` (declare them with `[hooks] tiers`; undeclared asks).
Codex fails open on a crash, an exit other than 2, exit 2 without stderr, and a timeout:
install wraps the command so any failure is exit 2 with a reason, and passes `--deadline`.
"""

from __future__ import annotations

import os
import re

from ..exceptions import InvalidInput
from ..models import ToolCall
from ..records import replace
from ..tools import ToolSpec, alias_spec
from . import claude_code
from .core import Answer, Client, HookCall, hook_event
from .shells import Shell, object_field, reason_text, text_field

TYPE_CHECKING = False  # not typing's: see signoff/__init__.py

if TYPE_CHECKING:
    from typing import Any

    from .core import HookEvent

NAME = "codex"
EVENTS: dict[str, HookEvent] = {
    "PreToolUse": "pre",
    "PermissionRequest": "permission",
    "PostToolUse": "post",
}
PATCH_TOOLS = ("apply_patch", "Edit", "Write")  # Codex names apply_patch either way
_PATCH_LINE = re.compile(r"^\*\*\* (Add File|Update File|Delete File|Move to): (.+?)\s*$", re.M)


def _specs() -> dict[str, ToolSpec]:
    return {
        # the model's `exec_command` may name a `workdir`: where the command runs
        "Bash": replace(alias_spec("Bash"), cwd_arg="workdir"),
        "apply_patch": ToolSpec(
            name="apply_patch",
            tier="write",
            kind="file_write",
            path_arg="paths",  # a list: every file the patch touches
            default_path=None,
            subject_args=(),
            description="Apply a patch (add, update, delete or move files).",
        ),
    }


def patch_paths(patch: str) -> list[str]:
    """The files a Codex patch adds, updates, deletes or moves to; none is an error (a
    patch signoff cannot read is not waved through)."""
    paths = [m.group(2) for m in _PATCH_LINE.finditer(patch)]
    if not paths:
        raise InvalidInput("apply_patch: no '*** Add/Update/Delete File:' line in the patch")
    return paths


def protected_paths(workspace: str, home: str) -> tuple[str, ...]:
    """Codex's config and hooks (they name the hook and its trust), the project's
    `.codex/`, and what Claude Code's shell protects (the hook's own program)."""
    codex_home = os.environ.get("CODEX_HOME") or os.path.join(home, ".codex")
    return (
        os.path.join(codex_home, "config.toml"),
        os.path.join(codex_home, "hooks.json"),
        os.path.join(workspace, ".codex"),
        "/etc/codex",
        *claude_code.protected_paths(workspace, home),
    )


def changed_files(call: ToolCall) -> tuple[str, ...]:
    paths = call.arguments.get("paths") if call.name == "apply_patch" else None
    return tuple(p for p in paths if isinstance(p, str)) if isinstance(paths, list) else ()


def preview(call: ToolCall, workspace: str) -> str:
    if call.name == "apply_patch" and isinstance(call.arguments.get("command"), str):
        from ..workspace._text import cut_text

        return cut_text(call.arguments["command"])
    return claude_code.preview(call, workspace)


CLIENT = Client(
    name=NAME,
    specs=_specs(),
    preview=preview,
    protected=protected_paths,
    changed_files=changed_files,
    answer_input=lambda call, result: None,  # Codex takes no new input from a hook
)


def event_of(doc: Any) -> HookEvent | None:
    return EVENTS.get(str(doc.get("hook_event_name"))) if isinstance(doc, dict) else None


def parse(doc: Any) -> HookCall:
    name = hook_event(doc, EVENTS)
    event = EVENTS[name]
    tool = text_field(doc, name, "tool_name", required=True)
    arguments = object_field(doc, name, "tool_input")
    if tool in PATCH_TOOLS and "file_path" not in arguments:
        patch = arguments.get("command")
        if not isinstance(patch, str):
            raise InvalidInput(f"{name}: {tool}: tool_input.command must be the patch text")
        tool, arguments = "apply_patch", {"command": patch, "paths": patch_paths(patch)}
    return HookCall(
        client=NAME,
        event=event,
        session_id=text_field(doc, name, "session_id", required=True),
        call_id=text_field(doc, name, "tool_use_id", required=False),
        tool=tool,
        arguments=arguments,
        cwd=text_field(doc, name, "cwd", required=False),
        response=doc.get("tool_response"),
        transcript_path=text_field(doc, name, "transcript_path", required=False) or None,
    )


def _deny_pre(reason: str) -> dict[str, Any]:
    return {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": reason_text(reason) or "signoff: blocked",
        }
    }


def _permission(behavior: str, reason: str = "") -> dict[str, Any]:
    decision: dict[str, Any] = {"behavior": behavior}
    if behavior == "deny":
        decision["message"] = reason_text(reason) or "signoff: blocked"
    return {"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": decision}}


def render(event: HookEvent, answer: Answer) -> tuple[dict[str, Any] | None, int]:
    if event in ("post", "post_failure") or answer.behavior == "none":
        return None, 0
    if answer.behavior == "allow" and answer.updated_input is not None:
        # Codex cannot run other arguments than its own: refuse, and say what was approved
        answer = Answer(
            "deny",
            f"{answer.reason}; Codex cannot run an edited call from a hook, so this one is "
            f"refused. The call a person approved: {dict(answer.updated_input)}",
        )
    if event == "permission":
        if answer.behavior == "allow":
            return _permission("allow"), 0
        return _permission("deny", answer.reason), 0
    if answer.behavior == "allow":
        return None, 0  # PreToolUse cannot allow: Codex's own policy goes on
    if answer.behavior in ("ask", "defer"):  # never chosen for Codex; if so, not a pass
        return _deny_pre(f"{answer.reason}; Codex cannot ask from a hook, so it is blocked"), 0
    return _deny_pre(answer.reason), 0


def blocked(event: HookEvent | None, reason: str) -> tuple[dict[str, Any] | None, int]:
    """Exit 2 with the reason on stderr blocks a PreToolUse (Codex needs the text); a
    PermissionRequest gets a deny."""
    if event == "permission":
        return _permission("deny", reason), 0
    return None, 2


SHELL = Shell(
    client=CLIENT,
    parse=parse,
    render=render,
    blocked=blocked,
    event_of=event_of,
    strategies=("inbox",),
    markers=(".signoff", ".codex"),
)

__all__ = ["CLIENT", "EVENTS", "SHELL", "parse", "patch_paths", "render"]
