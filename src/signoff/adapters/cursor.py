"""The Cursor shell over the adapter core. NOT verified on a real Cursor (there is none
here): written and tested against Cursor's documented hook schema (hooks v1).

    echo '{"hook_event_name": "beforeShellExecution", "command": "rm -rf build", ...}' \\
        | signoff hook cursor
    {"permission": "deny", "user_message": "signoff denied ...", "agent_message": "..."}

Events: `beforeShellExecution` (`command`, `cwd`) as a shell command, `beforeMCPExecution`
(`tool_name`, `tool_input` as JSON text) as the tool `mcp:<tool_name>` (declare it with
`[hooks] tiers`; undeclared asks), `beforeReadFile` (`file_path`) as a read, and
`afterShellExecution` for the record. A conversation is `conversation_id`; a call is named
by its `generation_id` and its digest. signoff allow -> `permission: allow`; deny ->
`permission: deny` with the reason for the person and the model (and exit 2, which Cursor
also reads as deny); ask -> the hook waits on the signoff inbox: Cursor's own `ask` is
ignored in its auto-review mode (Cursor forum topic 173694), so it is never relied on.
"""

from __future__ import annotations

import os
from typing import Any

from ..exceptions import InvalidInput
from ..models import ToolCall
from ..tools import ToolSpec, alias_spec
from . import claude_code
from .core import Answer, Client, HookCall, hook_event, load_hook_input
from .shells import Shell, reason_text, text_field

TYPE_CHECKING = False  # not typing's: see signoff/__init__.py

if TYPE_CHECKING:
    from .core import HookEvent

NAME = "cursor"
EVENTS: dict[str, HookEvent] = {
    "beforeShellExecution": "pre",
    "beforeMCPExecution": "pre",
    "beforeReadFile": "pre",
    "afterShellExecution": "post",
}


def _specs() -> dict[str, ToolSpec]:
    from dataclasses import replace

    return {
        "Shell": replace(alias_spec("Bash"), name="Shell"),
        "Read": alias_spec("Read"),
    }


def protected_paths(workspace: str, home: str) -> tuple[str, ...]:
    """Cursor's hooks files (user, project, enterprise) and the hook's own program."""
    return (
        os.path.join(workspace, ".cursor"),
        os.path.join(home, ".cursor", "hooks.json"),
        "/etc/cursor",
        "/Library/Application Support/Cursor",
        *claude_code.protected_paths(workspace, home),
    )


CLIENT = Client(
    name=NAME,
    specs=_specs(),
    preview=lambda call, ws: claude_code.preview(
        ToolCall("Bash" if call.name == "Shell" else call.name, dict(call.arguments)), ws
    ),
    protected=protected_paths,
    changed_files=lambda call: (),
    answer_input=lambda call, result: None,
)


def event_of(doc: Any) -> HookEvent | None:
    return EVENTS.get(str(doc.get("hook_event_name"))) if isinstance(doc, dict) else None


def parse(doc: Any) -> HookCall:
    name = hook_event(doc, EVENTS)
    roots = doc.get("workspace_roots")
    cwd = text_field(doc, name, "cwd", required=False)
    if not cwd and isinstance(roots, list) and roots and isinstance(roots[0], str):
        cwd = roots[0]
    arguments: dict[str, Any]
    if name in ("beforeShellExecution", "afterShellExecution"):
        tool, arguments = "Shell", {"command": text_field(doc, name, "command", required=True)}
    elif name == "beforeReadFile":
        tool, arguments = "Read", {"file_path": text_field(doc, name, "file_path", required=True)}
    else:
        tool = "mcp:" + text_field(doc, name, "tool_name", required=True)
        raw = doc.get("tool_input")
        try:
            value = load_hook_input(raw) if isinstance(raw, str) else raw
        except InvalidInput as exc:
            raise InvalidInput(f"{name}: tool_input: {exc}") from None
        if not isinstance(value, dict):
            raise InvalidInput(f"{name}: tool_input must be a JSON object")
        arguments = value
    generation = text_field(doc, name, "generation_id", required=False)
    return HookCall(
        client=NAME,
        event=EVENTS[name],
        session_id=text_field(doc, name, "conversation_id", required=True),
        # no tool-call id: the generation and the call's digest name it (the shell's
        # after-event carries both, so it finds the approved call)
        call_id=f"g:{generation}:{ToolCall(tool, arguments).digest()}" if generation else "",
        tool=tool,
        arguments=arguments,
        cwd=cwd,
        response=doc.get("output"),
    )


def render(event: HookEvent, answer: Answer) -> tuple[dict[str, Any] | None, int]:
    if event in ("post", "post_failure"):
        return {}, 0
    if answer.behavior in ("allow", "none") and answer.updated_input is None:
        if answer.behavior == "none":  # no verdict of signoff's own: Cursor asks
            return {"permission": "ask"}, 0
        return {"permission": "allow"}, 0
    reason = answer.reason
    if answer.updated_input is not None:
        reason = f"{reason}; Cursor cannot run an edited call from a hook, so it is refused"
    elif answer.behavior in ("ask", "defer"):
        reason = f"{reason}; Cursor's ask is not reliable in every mode, so it is blocked"
    text = reason_text(reason)
    return {"permission": "deny", "user_message": text, "agent_message": text}, 2


def blocked(event: HookEvent | None, reason: str) -> tuple[dict[str, Any] | None, int]:
    text = reason_text(reason)
    return {"permission": "deny", "user_message": text, "agent_message": text}, 2


SHELL = Shell(
    client=CLIENT,
    parse=parse,
    render=render,
    blocked=blocked,
    event_of=event_of,
    strategies=("inbox",),
    project_env="CURSOR_PROJECT_DIR",
    markers=(".signoff", ".cursor"),
)

__all__ = ["CLIENT", "EVENTS", "SHELL", "parse", "render"]
