"""What a reviewer sees of a workspace tool call before it runs, and what a model sees.

`render_preview` turns a call into the text of its request: a unified diff for
`write_file` and `edit_file`, the tree of new files for `create_project`, the whole message
for `send_email`. Nothing is cut silently: every cut says how much was left out.
`openai_tools` is the chat-completions `tools` array for the built-ins. (What a call
replaced, to review and revert it after it ran, is in `snapshots`.)
"""

from __future__ import annotations

import difflib
import json
import os
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from ..exceptions import InvalidInput
from ..models import ToolCall
from ..tools import BUILTIN_SPECS, ToolSpec
from ._text import cut_text, human_size, is_binary
from .mail import email_fields

if TYPE_CHECKING:
    from . import Workspace

DELETE_HEAD_LINES = 20


# ---------------------------------------------------------------------- previews


def render_preview(ws: Workspace, call: ToolCall, spec: ToolSpec) -> str:
    """The preview of a (canonical) call; falls back to the arguments as JSON."""
    build = _BUILDERS.get(call.name)
    if build is not None:
        try:
            return cut_text(build(ws, call.arguments))
        # A preview must never break the gate: say what went wrong and show the call as is
        # (a path outside the root, an unreadable file, arguments of the wrong type).
        except Exception as exc:
            return f"{exc}\n\n{_json(call.arguments)}"
    if spec.command_arg and isinstance(call.arguments.get(spec.command_arg), str):
        return cut_text(str(call.arguments[spec.command_arg]))
    return cut_text(_json(call.arguments))


def _json(arguments: Mapping[str, Any]) -> str:
    return json.dumps(dict(arguments), indent=2, ensure_ascii=False, default=str)


def _text_or_none(path: str) -> str | None:
    """The file's text, None if it does not exist; binary and special files raise (a FIFO
    is never opened for reading: the preview would wait for a writer for ever)."""
    from ..safe_files import read_regular

    if not os.path.exists(path):
        return None
    data, _ = read_regular(path, raw=os.path.basename(path), tool="preview")
    if is_binary(data):
        raise InvalidInput(f"replaces a binary file of {human_size(len(data))}")
    return data.decode("utf-8", "replace")


def _diff(rel: str, before: str, after: str) -> str:
    lines = difflib.unified_diff(
        before.splitlines(keepends=True),
        after.splitlines(keepends=True),
        fromfile=f"a/{rel}",
        tofile=f"b/{rel}",
    )
    # A last line without a newline would run into the next diff line: mark it as git does.
    return "".join(x if x.endswith("\n") else x + "\n\\ No newline at end of file\n" for x in lines)


def _new_file(rel: str, content: str) -> str:
    size = human_size(len(content.encode("utf-8")))
    lines = content.count("\n") + (0 if content.endswith("\n") or not content else 1)
    return f"new file: {rel} ({size}, {lines} lines)\n\n{content}"


def _write_preview(ws: Workspace, args: Mapping[str, Any]) -> str:
    target = ws.resolve(args.get("path"))
    rel, content = ws.rel(target), args.get("content")
    if not isinstance(content, str):
        raise InvalidInput("write_file: content must be a string")
    before = _text_or_none(target)
    if before is None:
        return _new_file(rel, content)
    if before == content:
        return f"{rel}: no change (the file already has this content)"
    old, new = len(before.encode("utf-8")), len(content.encode("utf-8"))
    return f"overwrite {rel} ({human_size(old)} -> {human_size(new)})\n\n" + _diff(
        rel, before, content
    )


def _edit_preview(ws: Workspace, args: Mapping[str, Any]) -> str:
    target = ws.resolve(args.get("path"))
    rel, old, new = ws.rel(target), args.get("old"), args.get("new")
    before = _text_or_none(target)
    if before is None:
        return f"edit_file: {rel} does not exist; this edit will fail"
    count = edit_count(before, old)
    if count != 1:
        return edit_problem(rel, str(old), count) + "; this edit will fail as it stands"
    if not isinstance(new, str):
        raise InvalidInput("edit_file: new must be a string")
    return f"edit {rel}\n\n" + _diff(rel, before, before.replace(str(old), new, 1))


def edit_count(text: str, old: Any) -> int:
    if not isinstance(old, str) or not old:
        raise InvalidInput("edit_file: old must be a non-empty string")
    return text.count(old)


def edit_problem(path: str, old: str, count: int) -> str:
    found = "was not found" if count == 0 else f"was found {count} times"
    return (
        f"edit_file: the text to replace {found} in {path}; it must occur exactly once "
        "(include more surrounding lines to make it unique)"
    )


def _project_preview(ws: Workspace, args: Mapping[str, Any]) -> str:
    planned = ws.project_files(args.get("path"), args.get("files"))
    base = ws.rel(ws.resolve(args.get("path")))
    sizes = {name: len(content.encode("utf-8")) for name, _, content in planned}
    exists = [name for name, target, _ in planned if os.path.lexists(target)]
    head = f"create {len(planned)} files under {base}/ ({human_size(sum(sizes.values()))})"
    if exists:
        head += f"\nrefused as it stands: already exists: {', '.join(sorted(exists))}"
    out = [head, "", f"{base}/", *_tree(sizes)]
    for name, _, content in sorted(planned):
        out += ["", f"==> {name} <==", content]
    return "\n".join(out)


def _tree(sizes: Mapping[str, int]) -> list[str]:
    """`├──`/`└──` lines of nested names; files carry their sizes."""
    root: dict[str, Any] = {}
    for name, size in sizes.items():
        node = root
        parts = os.path.normpath(name).split(os.sep)
        for part in parts[:-1]:
            node = node.setdefault(part + "/", {})
        node[parts[-1]] = size

    def walk(node: Mapping[str, Any], prefix: str) -> Iterable[str]:
        keys = sorted(node)
        for index, key in enumerate(keys):
            last = index == len(keys) - 1
            value = node[key]
            label = key if isinstance(value, dict) else f"{key}  ({human_size(value)})"
            yield f"{prefix}{'└── ' if last else '├── '}{label}"
            if isinstance(value, dict):
                yield from walk(value, prefix + ("    " if last else "│   "))

    return list(walk(root, ""))


def _delete_preview(ws: Workspace, args: Mapping[str, Any]) -> str:
    target = ws.resolve(args.get("path"), follow=False)
    rel = ws.rel(target)
    if os.path.islink(target):
        return f"delete the symbolic link {rel} -> {os.readlink(target)} (not its target)"
    if os.path.isdir(target):
        return f"{rel} is a directory; delete_file will refuse it"
    if not os.path.exists(target):
        return f"{rel} does not exist; delete_file will fail"
    from ..safe_files import file_kind, read_regular

    kind = file_kind(os.lstat(target).st_mode)
    if kind != "file":  # a FIFO is not opened: reading it would wait for ever
        return f"delete {rel} (a {kind}, not a regular file)"
    data, size = read_regular(target, raw=rel, tool="preview", limit=64 * 1024)
    if is_binary(data):
        return f"delete {rel} (binary file, {human_size(size)})"
    lines = data.decode("utf-8", "replace").splitlines()
    total = "" if size > len(data) else f", {len(lines)} lines"
    out = [f"delete {rel} ({human_size(size)}{total}); first lines:", ""]
    out += lines[:DELETE_HEAD_LINES]
    if len(lines) > DELETE_HEAD_LINES or size > len(data):
        out.append(f"[... the rest of the file ({human_size(size)} in all) not shown]")
    return "\n".join(out)


def _command_preview(ws: Workspace, args: Mapping[str, Any]) -> str:
    timeout = args.get("timeout")
    return (
        f"{args.get('command')}\n\n(bash -c in {ws.root}; timeout "
        f"{60 if timeout is None else timeout} s)"
    )


def _email_preview(ws: Workspace, args: Mapping[str, Any]) -> str:
    fields = email_fields(
        ws.sender, args.get("to"), args.get("subject"), args.get("body"), args.get("cc")
    )
    headers = [f"{k}: {v}" for k, v in fields.items() if k != "Body" and v]
    note = "(sent to the local outbox .signoff/outbox.mbox; Message-ID and Date added then)"
    return "\n".join([*headers, "", fields["Body"], "", note])


def _ask_preview(ws: Workspace, args: Mapping[str, Any]) -> str:
    options = args.get("options") or []
    lines = [str(args.get("question", ""))]
    if options:
        lines += ["", *(f"{i}. {option}" for i, option in enumerate(options, 1))]
    return "\n".join(lines)


_BUILDERS: dict[str, Callable[[Workspace, Mapping[str, Any]], str]] = {
    "write_file": _write_preview,
    "edit_file": _edit_preview,
    "create_project": _project_preview,
    "delete_file": _delete_preview,
    "execute_command": _command_preview,
    "send_email": _email_preview,
    "fetch_url": lambda ws, args: f"GET {args.get('url')}",
    "ask_human": _ask_preview,
}


# ---------------------------------------------------------------------- tools for a model

_USAGE = {
    "read_file": "Paths are relative to the workspace root.",
    "list_dir": "Without a path, lists the workspace root. Directories end with '/'.",
    "search_code": "Python regular expression; results are file:line:text.",
    "write_file": "Creates the file (and its directories) or replaces its whole content.",
    "edit_file": "`old` must occur exactly once in the file; include surrounding lines.",
    "create_project": "`files` maps paths relative to `path` to their content; none may exist.",
    "execute_command": "Runs with bash in the workspace root; timeout in seconds (default 60).",
    "send_email": "`to` may list several addresses separated by commas.",
    "ask_human": "Use when unsure; `options` are suggested answers.",
}


def _clean_schema(schema: Mapping[str, Any]) -> dict[str, Any]:
    """The pydantic schema without titles and with `X | None` shown as plain X."""
    props: dict[str, Any] = {}
    for name, prop in dict(schema.get("properties", {})).items():
        prop = {k: v for k, v in prop.items() if k != "title"}
        variants = [v for v in prop.pop("anyOf", []) if v.get("type") != "null"]
        if len(variants) == 1:
            prop = {**variants[0], **prop}
        if "default" in prop and prop["default"] is None:
            del prop["default"]  # "absent" already says so; a null default confuses models
        props[name] = prop
    return {
        "type": "object",
        "properties": props,
        "required": list(schema.get("required", [])),
        "additionalProperties": False,
    }


def openai_tools(names: Iterable[str] | None = None) -> list[dict[str, Any]]:
    """The chat-completions `tools` array for the built-ins (all, or the given names)."""
    chosen = list(BUILTIN_SPECS) if names is None else list(names)
    tools = []
    for name in chosen:
        spec = BUILTIN_SPECS.get(name)
        if spec is None:
            raise InvalidInput(f"{name!r} is not a built-in tool")
        description = " ".join(filter(None, (spec.description, _USAGE.get(name))))
        tools.append(
            {
                "type": "function",
                "function": {
                    "name": name,
                    "description": description,
                    "parameters": _clean_schema(spec.schema or {}),
                },
            }
        )
    return tools
