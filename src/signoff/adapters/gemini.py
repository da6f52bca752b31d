"""The Gemini CLI shell over the adapter core (verified on `@google/gemini-cli` 0.61.0).

    echo '{"hook_event_name": "BeforeTool", "tool_name": "run_shell_command", ...}' \\
        | signoff hook gemini
    {"decision": "deny", "reason": "signoff denied this call ..."}

`BeforeTool` is judged: deny -> `decision: deny` with the reason (the model reads it as the
tool's error); allow and notify -> nothing (Gemini's own flow goes on); ask -> `native`:
`decision: ask` (Gemini asks the person itself), or `inbox`: the hook waits on the signoff
inbox and answers allow (with `hookSpecificOutput.tool_input` for an edit) or deny.
`AfterTool`: the outcome goes on the record. Gemini sends no tool-call id, so a call is
named by its session, the time Gemini stamped on the event and its digest.

Gemini's tools as signoff's declarations: `run_shell_command` is a shell command (its
`dir_path` a path it acts in), `write_file` a write, `replace` an edit, `read_file` a
read; `list_directory` and `glob` list a folder, `grep_search` (`search_file_content`
before 0.61) and `read_many_files` read every file they walk (`signoff.walks`: a search
over a tree that holds a denied folder or signoff's state asks), `web_fetch` a fetch of
the one URL in its prompt (several URLs, or none: it asks), and the tools that only talk
or plan are reads. Anything else (MCP tools, `invoke_agent`,
...) asks unless `[hooks] tiers` declares it. Gemini fails open on a crash and a timeout:
install wraps the command so any failure is exit 2 with a reason, and passes `--deadline`.
"""

from __future__ import annotations

import os
import re

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

NAME = "gemini"
EVENTS: dict[str, HookEvent] = {"BeforeTool": "pre", "AfterTool": "post"}
_URL = re.compile(r"https?://[^\s<>\"'`)\]]+")
SEVERAL_URLS = "web_fetch (not one URL)"  # undeclared: it asks

# Tools that only talk, plan or keep notes inside the client.
_TALK = (
    "google_web_search",
    "write_todos",
    "update_topic",
    "complete_task",
    "enter_plan_mode",
    "activate_skill",
    "get_internal_docs",
    "tracker_add_dependency",
    "tracker_create_task",
    "tracker_get_task",
    "tracker_list_tasks",
    "tracker_update_task",
    "tracker_visualize",
)


def _spec(name: str, base: ToolSpec, **changes: Any) -> ToolSpec:
    return replace(base, name=name, schema=None, validator=None, lazy_validator=None, **changes)


def _specs() -> dict[str, ToolSpec]:
    shell, grep = alias_spec("Bash"), alias_spec("Grep")
    specs = {
        "run_shell_command": _spec("run_shell_command", shell, cwd_arg="dir_path"),
        "write_file": _spec("write_file", alias_spec("Write")),
        "replace": _spec("replace", alias_spec("Edit")),
        "read_file": _spec("read_file", alias_spec("Read")),
        # the contents of every file its globs match (`paths`: its name before 0.61)
        "read_many_files": _spec(
            "read_many_files",
            grep,
            path_arg=None,
            glob_args=("include", "paths"),
            glob_style="path",
        ),
        "list_directory": _spec(
            "list_directory", alias_spec("LS"), path_arg="dir_path", default_path=None
        ),
        "glob": _spec("glob", alias_spec("Glob"), path_arg="dir_path"),
        "grep_search": _spec("grep_search", grep, path_arg="dir_path", glob_args=("include",)),
        # grep_search's name (and `path`) before 0.61
        "search_file_content": _spec(
            "search_file_content", grep, path_arg="path", glob_args=("include",)
        ),
        "web_fetch": _spec("web_fetch", alias_spec("WebFetch"), url_arg="url"),
        "ask_user": ToolSpec(
            name="ask_user", tier="read", subject_args=(), always_ask=True, description="Ask."
        ),
        "exit_plan_mode": ToolSpec(
            name="exit_plan_mode", tier="read", subject_args=(), always_ask=True
        ),
    }
    for name in _TALK:
        specs[name] = ToolSpec(name=name, tier="read", subject_args=(), description=name)
    return specs


def protected_paths(workspace: str, home: str) -> tuple[str, ...]:
    """Gemini's settings (they name the hooks) and policies, user and project, the
    system settings, and the hook's own program."""
    return (
        os.path.join(workspace, ".gemini"),
        os.path.join(home, ".gemini", "settings.json"),
        os.path.join(home, ".gemini", "policies"),
        "/etc/gemini-cli",
        *claude_code.protected_paths(workspace, home),
    )


def changed_files(call: ToolCall) -> tuple[str, ...]:
    value = call.arguments.get("file_path") if call.name in ("write_file", "replace") else None
    return (value,) if isinstance(value, str) and value else ()


def preview(call: ToolCall, workspace: str) -> str:
    """Gemini's write and edit carry Claude Code's argument names: the same previews."""
    as_claude = {"write_file": "Write", "replace": "Edit", "run_shell_command": "Bash"}
    name = as_claude.get(call.name)
    shown = ToolCall(name, dict(call.arguments), call.id) if name else call
    return claude_code.preview(shown, workspace)


CLIENT = Client(
    name=NAME,
    specs=_specs(),
    preview=preview,
    protected=protected_paths,
    changed_files=changed_files,
    answer_input=lambda call, result: None,
)


def event_of(doc: Any) -> HookEvent | None:
    return EVENTS.get(str(doc.get("hook_event_name"))) if isinstance(doc, dict) else None


def parse(doc: Any) -> HookCall:
    name = hook_event(doc, EVENTS)
    tool = text_field(doc, name, "tool_name", required=True)
    arguments = object_field(doc, name, "tool_input")
    if tool == "web_fetch":
        prompt = arguments.get("prompt")
        urls = sorted(set(_URL.findall(prompt))) if isinstance(prompt, str) else []
        if len(urls) == 1:
            arguments = {**arguments, "url": urls[0]}
        else:
            tool = SEVERAL_URLS
    stamp = doc.get("timestamp")
    event = EVENTS[name]
    return HookCall(
        client=NAME,
        event=event,
        session_id=text_field(doc, name, "session_id", required=True),
        # no tool-call id: a BeforeTool is named by its time stamp (an AfterTool finds
        # the approved call by its digest)
        call_id=f"t:{stamp}" if event == "pre" and isinstance(stamp, str) and stamp else "",
        tool=tool,
        arguments=arguments,
        cwd=text_field(doc, name, "cwd", required=False),
        response=doc.get("tool_response"),
        transcript_path=text_field(doc, name, "transcript_path", required=False) or None,
    )


def render(event: HookEvent, answer: Answer) -> tuple[dict[str, Any] | None, int]:
    if event in ("post", "post_failure") or answer.behavior == "none":
        return None, 0
    if answer.behavior == "allow":
        if answer.request_id is None:
            return None, 0  # the policy allows: Gemini's own flow goes on
        out: dict[str, Any] = {"decision": "allow", "reason": reason_text(answer.reason)}
        if answer.updated_input is not None:
            out["hookSpecificOutput"] = {
                "hookEventName": "BeforeTool",
                "tool_input": dict(answer.updated_input),
            }
        return out, 0
    if answer.behavior == "ask":
        text = reason_text(answer.reason)
        return {"decision": "ask", "reason": text, "systemMessage": text}, 0
    if answer.behavior == "defer":  # Gemini cannot stop and be resumed: not a pass
        return {"decision": "deny", "reason": reason_text(answer.reason)}, 0
    return {"decision": "deny", "reason": reason_text(answer.reason)}, 0


def blocked(event: HookEvent | None, reason: str) -> tuple[dict[str, Any] | None, int]:
    """Exit 2 with the reason on stderr blocks (Gemini needs the text)."""
    return None, 2


SHELL = Shell(
    client=CLIENT,
    parse=parse,
    render=render,
    blocked=blocked,
    event_of=event_of,
    strategies=("inbox", "native"),
    project_env="GEMINI_PROJECT_DIR",
    markers=(".signoff", ".gemini"),
)

__all__ = ["CLIENT", "EVENTS", "SHELL", "parse", "render"]
