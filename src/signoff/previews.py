"""What a reviewer sees of a workspace tool call: before it runs, and after.

Before: `render_preview` turns a call into the text of its request: a unified diff for
`write_file` and `edit_file`, the tree of new files for `create_project`, the whole message
for `send_email`. Nothing is cut silently: every cut says how much was left out.

After: a `Snapshot` keeps what a file change replaced, so a `notify` call (ran without
asking) can be reviewed and reverted. It is plain JSON (`"v": 1`, bytes in base64) so the
store can keep it; `Workspace.revert` refuses when a file changed since the call.
"""

from __future__ import annotations

import base64
import difflib
import hashlib
import json
import os
import stat
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from email.utils import getaddresses
from typing import TYPE_CHECKING, Any

from .exceptions import ConflictError, InvalidInput
from .models import ToolCall, check_version
from .registry import BUILTIN_SPECS, ToolSpec

if TYPE_CHECKING:
    from .tools import Workspace

PREVIEW_CHARS = 60_000  # per preview; the terminal shows fewer lines and says so itself
DELETE_HEAD_LINES = 20
SNAPSHOT_VERSION = 1


def human_size(size: int) -> str:
    if size < 1024:
        return f"{size} B"
    value = float(size)
    for unit in ("KiB", "MiB", "GiB"):
        value /= 1024
        if value < 1024 or unit == "GiB":
            break
    return f"{value:.1f} {unit}"


def cut_text(text: str, limit: int = PREVIEW_CHARS) -> str:
    """`text`, or its first `limit` characters and a note of what was left out."""
    if len(text) <= limit:
        return text
    rest = text[limit:]
    return (
        f"{text[:limit]}\n[... {len(rest)} more characters ({rest.count(chr(10)) + 1} "
        "lines) not shown]"
    )


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
    """The file's text, None if it does not exist; binary files raise."""
    if not os.path.exists(path):
        return None
    with open(path, "rb") as handle:
        data = handle.read()
    if b"\x00" in data[:8192]:
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
    size = os.path.getsize(target)
    with open(target, "rb") as handle:
        data = handle.read(64 * 1024)
    if b"\x00" in data[:8192]:
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


def email_fields(sender: str, to: Any, subject: Any, body: Any, cc: Any) -> dict[str, str]:
    """Checked headers and body of a message, exactly as `send_email` will write them."""
    if isinstance(cc, str):
        cc = [cc]
    for name, value in (("to", to), ("subject", subject), ("body", body)):
        if not isinstance(value, str):
            raise InvalidInput(f"send_email: {name} must be a string")
    if cc is not None and not (isinstance(cc, list) and all(isinstance(c, str) for c in cc)):
        raise InvalidInput("send_email: cc must be a list of addresses")
    for name, value in (("to", to), ("subject", subject), *(("cc", c) for c in cc or ())):
        if "\r" in value or "\n" in value:  # header injection (a hidden Bcc:, say)
            raise InvalidInput(f"send_email: {name} must be one line")
    for name, value in (("to", to), *(("cc", c) for c in cc or ())):
        addresses = getaddresses([value])
        if not addresses or any("@" not in address for _, address in addresses):
            raise InvalidInput(f"send_email: {name} {value!r} is not an email address")
    return {"From": sender, "To": to, "Cc": ", ".join(cc or ()), "Subject": subject, "Body": body}


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


# ---------------------------------------------------------------------- snapshots


def _digest(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def path_state(path: str) -> str | None:
    """A digest of what is at `path` now: file bytes, a link's target, or None if absent."""
    if os.path.islink(path):
        return "link:" + _digest(os.readlink(path).encode("utf-8"))
    if os.path.isdir(path):
        return "directory"
    if not os.path.exists(path):
        return None
    with open(path, "rb") as handle:
        return _digest(handle.read())


@dataclass(frozen=True, slots=True)
class SnapshotEntry:
    """One file: what was there before (None: nothing) and the digest after the call."""

    path: str  # relative to the workspace root
    before: bytes | None
    mode: int | None = None
    link: str | None = None  # the file was a symbolic link to this target
    after: str | None = None
    settled: bool = False

    @classmethod
    def capture(cls, rel: str, target: str) -> SnapshotEntry:
        if os.path.islink(target):
            return cls(rel, None, None, os.readlink(target))
        if not os.path.isfile(target):
            return cls(rel, None)
        with open(target, "rb") as handle:
            data = handle.read()
        return cls(rel, data, stat.S_IMODE(os.stat(target).st_mode))

    def settle_as(self, state: str | None) -> SnapshotEntry:
        return replace(self, after=state, settled=True)

    def to_json(self) -> dict[str, Any]:
        before = None if self.before is None else base64.b64encode(self.before).decode("ascii")
        return {
            "path": self.path,
            "before": before,
            "mode": self.mode,
            "link": self.link,
            "after": self.after,
            "settled": self.settled,
        }

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> SnapshotEntry:
        try:
            before = doc.get("before")
            return cls(
                path=str(doc["path"]),
                before=None if before is None else base64.b64decode(before, validate=True),
                mode=doc.get("mode"),
                link=doc.get("link"),
                after=doc.get("after"),
                settled=bool(doc.get("settled", False)),
            )
        except (KeyError, ValueError, TypeError) as exc:
            raise InvalidInput(f"snapshot entry is not valid: {exc}") from exc


@dataclass(frozen=True, slots=True)
class Snapshot:
    """What one file-changing call replaced, to review and revert it later."""

    tool: str
    root: str
    entries: tuple[SnapshotEntry, ...]
    dirs: tuple[str, ...] = ()  # directories the call created (removed on revert if empty)
    taken_at: float = 0.0

    def with_entries(self, entries: tuple[SnapshotEntry, ...]) -> Snapshot:
        return replace(self, entries=entries)

    def check_revertible(self, current: Callable[[str], str | None]) -> None:
        changed = [e.path for e in self.entries if not e.settled or current(e.path) != e.after]
        if any(not e.settled for e in self.entries):
            raise RevertConflict(
                f"cannot revert {self.tool}: the snapshot was never settled "
                "(the state after the call is unknown)"
            )
        if changed:
            raise RevertConflict(
                f"cannot revert {self.tool}: changed since the call: "
                f"{', '.join(changed)}; nothing was reverted"
            )

    def to_json(self) -> dict[str, Any]:
        return {
            "v": SNAPSHOT_VERSION,
            "tool": self.tool,
            "root": self.root,
            "entries": [e.to_json() for e in self.entries],
            "dirs": list(self.dirs),
            "taken_at": self.taken_at,
        }

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> Snapshot:
        check_version(doc, "snapshot")
        try:
            return cls(
                tool=str(doc["tool"]),
                root=str(doc["root"]),
                entries=tuple(SnapshotEntry.from_json(e) for e in doc["entries"]),
                dirs=tuple(str(d) for d in doc.get("dirs", ())),
                taken_at=float(doc.get("taken_at", 0.0)),
            )
        except (KeyError, TypeError) as exc:
            raise InvalidInput(f"snapshot document is not valid: {exc}") from exc


class RevertConflict(ConflictError):
    """A file changed after the call it would revert: reverting would lose that change."""


def restore_entry(entry: SnapshotEntry, target: str) -> None:
    """Put back what was at `target` before the call (remove what the call created)."""
    if os.path.lexists(target):
        os.unlink(target)
    if entry.link is not None:
        os.symlink(entry.link, target)
    elif entry.before is not None:
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(target, "wb") as handle:
            handle.write(entry.before)
        if entry.mode is not None:
            os.chmod(target, entry.mode)
