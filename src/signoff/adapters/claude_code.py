"""The Claude Code shell over the adapter core: its hook JSON in, its hook JSON out.

    echo '{"hook_event_name": "PreToolUse", ...}' | signoff hook claude-code
    {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                            "permissionDecisionReason": "signoff denied this call ..."}}

Events: `PreToolUse` (judge; answer allow, deny, ask or defer), `PermissionRequest` (Claude
Code is about to show its dialog: inbox mode answers it from the inbox), `PostToolUse` and
`PostToolUseFailure` (the outcome goes on the record). Claude Code's tools map onto
signoff's declarations (`Bash` is a shell command, `Write`/`Edit` write a file, ...); a tool
signoff does not know asks. Exit codes follow the protocol: 0 with the JSON answer; 2
blocks, with the reason on stderr: bad input, an unreachable store, any error at all.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import Iterator, Mapping

from ..escape import escape_untrusted
from ..exceptions import InvalidInput
from ..models import ToolCall
from ..tools import ALIASES, ToolSpec, alias_spec
from .core import Adapter, Answer, Client, HookCall, hook_event, hook_options, read_hook_input

TYPE_CHECKING = False  # not typing's: see signoff/__init__.py

if TYPE_CHECKING:
    from typing import Any, TextIO

    from .core import HookEvent

NAME = "claude-code"
EVENTS: dict[str, HookEvent] = {
    "PreToolUse": "pre",
    "PermissionRequest": "permission",
    "PostToolUse": "post",
    "PostToolUseFailure": "post_failure",
}
MAX_REASON = 9000  # Claude Code caps hook strings at 10,000 characters

_FILE_TOOLS = ("Read", "Write", "Edit", "MultiEdit", "NotebookEdit", "Glob", "Grep", "LS")


def _spec(name: str, tier: str, **options: Any) -> ToolSpec:
    return ToolSpec(name=name, tier=tier, kind="other", subject_args=(), **options)  # type: ignore[arg-type]


def _specs() -> dict[str, ToolSpec]:
    specs = {name: alias_spec(name) for name in (*_FILE_TOOLS, "Bash", "WebFetch")}
    specs.update(
        {
            # answered by Anthropic's servers, reads the web, changes nothing here
            "WebSearch": _spec("WebSearch", "read", description="Search the web."),
            # a subagent: its own tool calls come through these same hooks
            "Agent": _spec("Agent", "read", description="Start a subagent."),
            "Task": _spec("Task", "read", description="Start a subagent."),
            "TodoWrite": _spec("TodoWrite", "read", description="Update the task list."),
            "BashOutput": _spec("BashOutput", "read", description="Read a background shell."),
            "TaskOutput": _spec("TaskOutput", "read", description="Read a background task."),
            "KillShell": _spec("KillShell", "write", description="Stop a background shell."),
            # Claude Code 2.1.3xx: tools that only load or report something; whatever work
            # follows (a loaded tool, a skill's steps, a woken session) fires these hooks
            "ToolSearch": _spec("ToolSearch", "read", description="Load a tool's schema."),
            "Skill": _spec("Skill", "read", description="Load a skill's instructions."),
            "ListAgents": _spec("ListAgents", "read", description="List agents."),
            "ReportFindings": _spec("ReportFindings", "read", description="Report findings."),
            "ScheduleWakeup": _spec("ScheduleWakeup", "read", description="Resume later."),
            "DeferredToolPlaceholder": _spec(
                "DeferredToolPlaceholder", "read", description="Never called."
            ),
            # not declared, so they ask: `Workflow` runs a script inside the client, and
            # `SendMessage` reaches other sessions, local or in the cloud
            # the person is the tool
            "AskUserQuestion": _spec(
                "AskUserQuestion", "read", always_ask=True, description="Ask the user."
            ),
            "ExitPlanMode": _spec(
                "ExitPlanMode", "read", always_ask=True, description="Propose a plan."
            ),
        }
    )
    return specs


def protected_paths(workspace: str, home: str) -> tuple[str, ...]:
    """What decides over the agent and must be out of its reach: Claude Code's settings
    files (they name the hooks), the managed settings, and the command the hook runs."""
    paths = [
        os.path.join(root, ".claude", name)
        for root in (workspace, home)
        for name in ("settings.json", "settings.local.json")
    ]
    paths += ["/etc/claude-code", "/Library/Application Support/ClaudeCode"]
    script = hook_script()
    if script:
        paths.append(script)
    return tuple(paths)


def hook_script() -> str | None:
    """The `signoff` program a hook runs, when it is a script of its own."""
    found = which("signoff")
    return os.path.realpath(found) if found else None


def which(name: str) -> str | None:
    """`shutil.which(name)` on POSIX, without importing shutil (with its compression
    modules, a tenth of a hook's start-up); a test holds the two equal."""
    search = os.environ.get("PATH")
    if search is None:
        try:
            search = os.confstr("CS_PATH")
        except (AttributeError, ValueError):
            search = os.defpath
    for folder in search.split(os.pathsep) if search else ():
        path = os.path.join(folder, name)
        executable = os.path.exists(path) and os.access(path, os.F_OK | os.X_OK)
        if executable and not os.path.isdir(path):
            return path
    return None


def changed_files(call: ToolCall) -> tuple[str, ...]:
    key = {"Write": "file_path", "Edit": "file_path", "MultiEdit": "file_path"}.get(call.name)
    if call.name == "NotebookEdit":
        key = "notebook_path"
    value = call.arguments.get(key) if key else None
    return (value,) if isinstance(value, str) and value else ()


# --------------------------------------------------------------------- previews


def preview(call: ToolCall, workspace: str) -> str:
    """What a person reads: the diff of an edit against the real file, the whole file of
    a write, the command, else the arguments."""
    from ..workspace._text import cut_text

    args = call.arguments
    try:
        if call.name in ("Write", "Edit", "MultiEdit") and isinstance(args.get("file_path"), str):
            return cut_text(_file_preview(call.name, args, workspace))
        if call.name == "Bash" and isinstance(args.get("command"), str):
            return cut_text(args["command"]) + agents_words(args.get("description"))
    except (OSError, InvalidInput) as exc:  # a preview never blocks the request
        return cut_text(f"{exc}\n\n{_json(args)}")
    return cut_text(_json(args))


MAX_WORDS = 300  # characters of the agent's description of a command shown


def agents_words(description: Any) -> str:
    """The agent's description of a command, for after it: one line, marked as the
    agent's, cut short. The command comes first, whole; no line of the description may
    pass for a line of it (`Show status\n\ngit status` used to read as a command)."""
    if not isinstance(description, str) or not description.strip():
        return ""
    text = " ".join(description.split())
    if len(text) > MAX_WORDS:
        text = f"{text[:MAX_WORDS]} [... {len(text) - MAX_WORDS} more characters]"
    return f"\n\nagent's description: {text}"


def _json(args: Mapping[str, Any]) -> str:
    return json.dumps(dict(args), indent=2, ensure_ascii=False, default=str)


def _current(path: str) -> str | None:
    from ..safe_files import read_regular
    from ..workspace._text import human_size, is_binary

    if not os.path.lexists(path):
        return None
    data, _ = read_regular(os.path.realpath(path), raw=path, tool="preview")
    if is_binary(data):
        raise InvalidInput(f"{path} is a binary file of {human_size(len(data))}")
    return data.decode("utf-8", "replace")


def _file_preview(tool: str, args: Mapping[str, Any], workspace: str) -> str:
    path = str(args["file_path"])
    full = path if os.path.isabs(path) else os.path.join(workspace, path)
    rel = os.path.relpath(full, workspace)
    shown = rel if not rel.startswith("..") else full
    before = _current(full)
    if tool == "Write":
        content = args.get("content")
        if not isinstance(content, str):
            raise InvalidInput("Write: content is not a string")
        if before is None:
            lines = content.count("\n") + (0 if content.endswith("\n") or not content else 1)
            size = len(content.encode("utf-8"))
            return f"new file: {shown} ({size} bytes, {lines} lines)\n\n{content}"
        return _diff(shown, before, content)
    if before is None:
        raise InvalidInput(f"{tool}: {shown} does not exist")
    edits = args.get("edits") if tool == "MultiEdit" else [args]
    if not isinstance(edits, list):
        raise InvalidInput("MultiEdit: edits is not a list")
    after = before
    for number, edit in enumerate(edits, start=1):
        if not isinstance(edit, Mapping):
            raise InvalidInput(f"{tool}: edit {number} is not an object")
        old, new = edit.get("old_string"), edit.get("new_string")
        if not isinstance(old, str) or not isinstance(new, str):
            raise InvalidInput(f"{tool}: edit {number} needs old_string and new_string")
        count = after.count(old) if old else 0
        if count == 0:
            raise InvalidInput(f"{tool}: edit {number}: old_string is not in {shown}")
        if count > 1 and not edit.get("replace_all"):
            raise InvalidInput(
                f"{tool}: edit {number}: old_string occurs {count} times in {shown} "
                "(the edit will fail unless replace_all is set)"
            )
        after = after.replace(old, new) if edit.get("replace_all") else after.replace(old, new, 1)
    return _diff(shown, before, after)


def _diff(rel: str, before: str, after: str) -> str:
    import difflib

    lines = difflib.unified_diff(
        before.splitlines(keepends=True),
        after.splitlines(keepends=True),
        fromfile=f"a/{rel}",
        tofile=f"b/{rel}",
    )
    return "".join(x if x.endswith("\n") else x + "\n\\ No newline at end of file\n" for x in lines)


def answer_input(call: ToolCall, result: Any) -> Mapping[str, Any] | None:
    """A person's answer to `AskUserQuestion` as its `answers` (question text -> answer)."""
    if call.name != "AskUserQuestion":
        return None
    questions = call.arguments.get("questions")
    texts = [
        str(q["question"])
        for q in (questions if isinstance(questions, list) else [])
        if isinstance(q, Mapping) and isinstance(q.get("question"), str)
    ]
    if isinstance(result, Mapping):
        answers = {str(k): v if isinstance(v, str) else json.dumps(v) for k, v in result.items()}
    elif isinstance(result, str) and len(texts) == 1:
        answers = {texts[0]: result}
    else:
        return None
    return {**call.arguments, "answers": answers}


def contained_input(call: ToolCall, workspace: str, cwd: str, keep: str) -> dict[str, Any]:
    """Bash's input that runs the judged command inside `signoff sandbox`, as the very
    signoff that judged it (docs/containment.md): `bash -c COMMAND`, contained; its change
    set reported to `keep`.json and what it replaced kept in `keep`.backup, for review."""
    import shlex

    from ..sandbox import command_line

    command = call.arguments["command"]
    argv = command_line(
        ["bash", "-c", command],
        workspace=workspace,
        cwd=cwd,
        report=keep + ".json",
        backup=keep + ".backup",
    )
    return {**call.arguments, "command": shlex.join(argv)}


CLIENT = Client(
    name=NAME,
    specs=_specs(),
    preview=preview,
    protected=protected_paths,
    changed_files=changed_files,
    answer_input=answer_input,
    modes={"plan": "plan", "acceptEdits": "accept-edits"},
    contained_input=contained_input,
)
assert all(name in ALIASES for name in _FILE_TOOLS)


# --------------------------------------------------------------------- the protocol


def parse(doc: Any) -> HookCall:
    """Claude Code's hook input; every problem names the field."""
    event_name = hook_event(doc, EVENTS)
    event = EVENTS[event_name]

    def text(key: str, *, required: bool) -> str:
        value = doc.get(key)
        if value is None and not required:
            return ""
        if not isinstance(value, str) or (required and not value):
            raise InvalidInput(f"{event_name}: {key} must be a non-empty string")
        return value

    tool_input = doc.get("tool_input")
    if not isinstance(tool_input, Mapping):
        raise InvalidInput(f"{event_name}: tool_input must be a JSON object")
    response = doc.get("tool_response") if event == "post" else doc.get("error")
    return HookCall(
        client=NAME,
        event=event,
        session_id=text("session_id", required=True),
        call_id=text("tool_use_id", required=event != "permission"),
        tool=text("tool_name", required=True),
        arguments=dict(tool_input),
        cwd=text("cwd", required=False),
        permission_mode=text("permission_mode", required=False) or "default",
        agent_id=text("agent_id", required=False) or None,
        response=response,
        transcript_path=text("transcript_path", required=False) or None,
    )


def _reason(text: str) -> str:
    text = escape_untrusted(text)
    return text if len(text) <= MAX_REASON else text[: MAX_REASON - 20] + " [... cut]"


def render(event: HookEvent, answer: Answer) -> dict[str, Any] | None:
    """The JSON answer for an event, or None to say nothing (the client's own flow)."""
    if answer.behavior == "none" or event in ("post", "post_failure"):
        return None
    if event == "permission":
        if answer.behavior == "allow":
            decision: dict[str, Any] = {"behavior": "allow"}
            if answer.updated_input is not None:
                decision["updatedInput"] = dict(answer.updated_input)
        else:  # ask/defer cannot answer a dialog: only allow opens it
            decision = {"behavior": "deny", "message": _reason(answer.reason), "interrupt": False}
        return {"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": decision}}
    out: dict[str, Any] = {
        "hookEventName": "PreToolUse",
        "permissionDecision": answer.behavior,
        "permissionDecisionReason": _reason(answer.reason),
    }
    if answer.updated_input is not None and answer.behavior == "allow":
        out["updatedInput"] = dict(answer.updated_input)
    return {"hookSpecificOutput": out}


def blocked(event: HookEvent | None, reason: str) -> tuple[dict[str, Any] | None, int]:
    """What a failure answers: exit 2 blocks a tool call; a PermissionRequest ignores
    exit 2, so it gets a deny."""
    if event == "permission":
        return render("permission", Answer("deny", reason)), 0
    return None, 2


def workspace_of(hc: HookCall, given: str | None, env: Mapping[str, str]) -> str:
    """`--workspace`, else $CLAUDE_PROJECT_DIR, else the nearest folder above the
    session's cwd that holds `.signoff/` or `.claude/` (an agent that `cd`s into a
    subfolder stays under the project's rules), else the cwd."""
    root = given or env.get("CLAUDE_PROJECT_DIR")
    if root:
        return root
    if not hc.cwd:
        raise InvalidInput("no workspace: pass --workspace, or run from Claude Code (cwd)")
    here = os.path.realpath(hc.cwd)
    while True:
        if os.path.isdir(os.path.join(here, ".signoff")) or os.path.isdir(
            os.path.join(here, ".claude")
        ):
            return here
        parent = os.path.dirname(here)
        if parent == here:
            return hc.cwd
        here = parent


def answer(
    doc: Any,
    *,
    workspace: str | None = None,
    ask: str | None = None,
    env: Mapping[str, str] | None = None,
    adapter: Adapter | None = None,
    process_ends: bool = False,
) -> tuple[dict[str, Any] | None, int, str]:
    """One hook event: (JSON answer or None, exit code, message for stderr). Never raises;
    every failure blocks. `process_ends`: the process exits right after (see Store.close)."""
    event: HookEvent | None = None
    if isinstance(doc, Mapping):  # known before the rest is read: how a failure answers
        event = EVENTS.get(str(doc.get("hook_event_name")))
    try:
        hc = parse(doc)
        event = hc.event
        own = adapter is None
        if adapter is not None and hc.cwd and not _inside(hc.cwd, adapter.workspace):
            raise InvalidInput(
                f"the session runs in {hc.cwd}, outside the workspace {adapter.workspace} "
                "that this signoff judges for"
            )
        if adapter is None:
            root = workspace_of(hc, workspace, os.environ if env is None else env)
            from ..settings import load_settings

            settings = load_settings(root)
            adapter = Adapter(
                CLIENT, root, settings=settings, options=hook_options(settings, ask=ask)
            )
        try:
            result = adapter.handle(hc)
        finally:
            if own:
                adapter.close(process_ends=process_ends)
        return render(hc.event, result), 0, ""
    except BaseException as exc:  # fail closed on everything, even exits
        if isinstance(exc, KeyboardInterrupt):
            reason = "signoff: interrupted; the call is blocked"
        else:
            detail = str(exc) or type(exc).__name__
            if isinstance(exc, RecursionError):  # a value nested deeper than the stack
                detail = "its input is nested too deeply"
            reason = f"signoff could not judge this call, so it is blocked: {detail}"
        out, code = blocked(event, escape_untrusted(reason))
        return out, code, escape_untrusted(reason)


def _inside(path: str, root: str) -> bool:
    real = os.path.realpath(path)
    return real == root or real.startswith(root.rstrip("/") + "/")


@contextlib.contextmanager
def _stdout_aside(stdout: TextIO) -> Iterator[None]:
    """Send everything but the answer to stderr while judging. Claude Code ignores an
    answer that follows any other output on stdout and lets the call go ahead (a deny
    included), so a stray print, a library's warning or a child process writing to the
    inherited descriptor must never reach the client's stdout first."""
    if stdout is not sys.stdout:
        yield
        return
    try:
        stdout.flush()
        saved = os.dup(1)
    except (OSError, ValueError):  # no real descriptor (embedded): Python-level only
        with contextlib.redirect_stdout(sys.stderr):
            yield
        return
    try:
        os.dup2(2, 1)
        with contextlib.redirect_stdout(sys.stderr):
            yield
    finally:
        sys.stderr.flush()
        os.dup2(saved, 1)
        os.close(saved)


def main(
    *,
    workspace: str | None = None,
    ask: str | None = None,
    stdin: TextIO | None = None,
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
    process_ends: bool = False,
) -> int:
    """`signoff hook claude-code`: stdin JSON -> stdout JSON; exit 2 blocks.
    `process_ends`: the caller ends the process with os._exit once this returns."""
    stdin, stdout, stderr = stdin or sys.stdin, stdout or sys.stdout, stderr or sys.stderr
    try:
        doc = read_hook_input(stdin)
    except (ValueError, OSError) as exc:
        stderr.write(f"signoff: {escape_untrusted(str(exc))}; the call is blocked\n")
        return 2
    with _stdout_aside(stdout):
        out, code, message = answer(doc, workspace=workspace, ask=ask, process_ends=process_ends)
    if out is not None:
        stdout.write(json.dumps(out) + "\n")  # ASCII: whatever the locale of the hook
    if message:
        stderr.write(message + "\n")
    stdout.flush()
    return code


__all__ = ["CLIENT", "EVENTS", "answer", "main", "parse", "preview", "render"]
