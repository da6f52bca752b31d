"""Built-in workspace tools: read, list, search, write, edit, create, delete, run, fetch, mail.

A `Workspace` implements the built-in tools declared by `tools.BuiltinTools` (their
signatures are their declarations), bound to one root directory::

    ws = Workspace("/path/to/project")
    gate = Gate(policy, previewer=ws.preview)
    gate.execute(call, ws.as_mapping()[call.name])

Every path is resolved (`~`, `..`, symlinks) and must stay inside the root. The policy
already asks before a call leaves the workspace; this is the second line: an approved call
still cannot escape unless the workspace was built with `allow_outside=True`.

File changes keep what they replaced (review after action): `snapshot(call)` before the
call runs, `settle(snapshot)` after it, and `revert(snapshot)` to undo, refused when a file
changed since. `run_recorded(call)` does the first two around the call.
"""

from __future__ import annotations

import codecs
import contextlib
import os
import re
import stat
import time
from collections.abc import Callable, Iterator
from typing import Any

from ..exceptions import InvalidInput, OutsideWorkspace, RevertConflict, ToolError
from ..models import ToolCall
from ..safe_files import read_regular, regular_or_none, unlink_entry, write_regular
from ..targets import check_expected
from ..tools import ALIASES, BUILTIN_SPECS, BuiltinTools, ToolSpec
from . import fetch as http_fetch
from ._text import cut_text, human_size, is_binary
from .command import DEFAULT_TIMEOUT, MAX_OUTPUT_BYTES, run_command
from .fetch import FETCH_TIMEOUT
from .mail import OUTBOX, append_to_outbox, email_fields
from .previews import edit_count, edit_problem, openai_tools, render_preview
from .snapshots import Snapshot, SnapshotEntry, path_state, restore_entry

MAX_READ_BYTES = 256 * 1024
MAX_LIST_ENTRIES = 500
MAX_SEARCH_RESULTS = 200
MAX_SEARCH_FILE_BYTES = 2 * 1024 * 1024
DEFAULT_SENDER = "signoff-agent@localhost"

# Directories that are tooling, not the project: listing or searching them is noise.
IGNORED_DIRS = frozenset({".git", ".venv", "node_modules", "__pycache__"})
SEARCH_SKIP = IGNORED_DIRS | {".signoff", ".mypy_cache", ".pytest_cache", ".ruff_cache", ".tox"}
FILE_WRITE_TOOLS = ("write_file", "edit_file", "create_project", "delete_file")


class Workspace(BuiltinTools):
    """The built-in tools bound to one root directory."""

    def __init__(
        self,
        root: str | os.PathLike[str],
        *,
        allow_outside: bool = False,
        sender: str = DEFAULT_SENDER,
        max_output: int = MAX_OUTPUT_BYTES,
        fetch_timeout: float = FETCH_TIMEOUT,
        hidden: Callable[[str], bool] | None = None,
    ) -> None:
        self.root = os.path.realpath(os.path.expanduser(os.fspath(root)))
        # Paths a tree walk (search_code) skips: the policy's denied and protected paths.
        self.hidden = hidden or (lambda path: False)
        if not os.path.isdir(self.root):
            raise InvalidInput(f"workspace root {self.root} is not a directory")
        self.allow_outside = allow_outside
        self.sender = sender
        self.max_output = max_output
        self.fetch_timeout = fetch_timeout

    # ------------------------------------------------------------------ paths

    def resolve(self, raw: str | None, *, follow: bool = True) -> str:
        """The real path of `raw` (relative to the root); outside the root is refused.

        `follow=False` keeps a final symlink itself (deleting a link removes the link).
        """
        if raw is not None and not isinstance(raw, str):
            raise InvalidInput(f"path must be a string, got {type(raw).__name__}")
        text = os.path.expanduser(raw) if raw else "."
        # realpath, not normpath first: `link/..` must mean what the OS will open.
        joined = os.path.join(self.root, text)
        head, name = os.path.split(joined.rstrip(os.sep))
        if follow or name in ("", ".", ".."):
            path = os.path.realpath(joined)
        else:
            path = os.path.join(os.path.realpath(head), name)
        if not self.allow_outside and not self.contains(path):
            raise OutsideWorkspace(
                f"{raw!r} resolves to {path}, outside the workspace {self.root}; refused"
            )
        if raw is not None:
            # The executor's judged target for this path, if it set one (see targets).
            followed = path if follow else os.path.realpath(joined)
            check_expected(raw, followed, tool="workspace")
        return path

    def contains(self, path: str) -> bool:
        return path == self.root or path.startswith(self.root.rstrip(os.sep) + os.sep)

    def rel(self, path: str) -> str:
        return os.path.relpath(path, self.root) if self.contains(path) else path

    def _existing_file(self, raw: str) -> str:
        path = self.resolve(raw)
        if os.path.isdir(path):
            raise InvalidInput(f"{raw} is a directory, not a file (use list_dir)")
        if not os.path.exists(path):
            raise InvalidInput(f"{raw}: no such file in the workspace")
        return path

    # ------------------------------------------------------------------ read tools

    def read_file(self, path: str, *, idempotency_key: str | None = None) -> str:
        """The file's text, cut at `MAX_READ_BYTES` with a note; binary files are described."""
        target = self._existing_file(path)
        data, size = read_regular(target, raw=path, tool="read_file", limit=MAX_READ_BYTES)
        truncated = size > len(data)
        if is_binary(data):
            return f"{path}: binary file, {human_size(size)}; not shown"
        try:
            text = codecs.getincrementaldecoder("utf-8")().decode(data, final=not truncated)
        except UnicodeDecodeError:
            return f"{path}: binary or non-UTF-8 file, {human_size(size)}; not shown"
        if truncated:
            text += (
                f"\n[... truncated: showed the first {human_size(len(data))} of "
                f"{human_size(size)}; {size - len(data)} bytes not shown]"
            )
        return text

    def list_dir(self, path: str | None = None, *, idempotency_key: str | None = None) -> str:
        """Sorted entries, directories with a trailing `/`; tooling directories skipped."""
        target = self.resolve(path)
        if not os.path.isdir(target):
            raise InvalidInput(
                f"{path}: not a directory"
                if os.path.exists(target)
                else f"{path}: no such directory in the workspace"
            )
        entries, skipped = [], []
        with os.scandir(target) as scan:
            for entry in scan:
                if entry.name in IGNORED_DIRS and entry.is_dir():
                    skipped.append(entry.name + "/")
                    continue
                entries.append(entry.name + "/" if entry.is_dir() else entry.name)
        entries.sort(key=lambda name: (name.lower(), name))
        lines = entries[:MAX_LIST_ENTRIES]
        if len(entries) > MAX_LIST_ENTRIES:
            lines.append(f"[... {len(entries) - MAX_LIST_ENTRIES} more entries not shown]")
        if not entries:
            lines.append("(empty directory)")
        if skipped:
            lines.append(f"(not listed: {', '.join(sorted(skipped))})")
        return "\n".join(lines)

    def search_code(
        self, pattern: str, path: str | None = None, *, idempotency_key: str | None = None
    ) -> str:
        """`file:line:text` for each matching line; a bad regex is searched literally."""
        if not isinstance(pattern, str) or not pattern:
            raise InvalidInput("search_code: pattern must be a non-empty string")
        notes: list[str] = []
        try:
            regex = re.compile(pattern)
        except re.error as exc:
            regex = re.compile(re.escape(pattern))
            notes.append(f"(not a valid regular expression ({exc}); searched as literal text)")
        target = self.resolve(path)
        if not os.path.exists(target):
            raise InvalidInput(f"{path}: no such file or directory in the workspace")
        results: list[str] = []
        skipped: list[str] = []
        for file in self._walk(target):
            kind = regular_or_none(file)
            if kind is not None:  # a FIFO would block the search for ever: never opened
                skipped.append(f"{self.rel(file)} ({kind})")
                continue
            for number, line in _matching_lines(file, regex):
                shown = line if len(line) <= 300 else line[:300] + f"[... {len(line) - 300} chars]"
                results.append(f"{self.rel(file)}:{number}:{shown}")
                if len(results) >= MAX_SEARCH_RESULTS:
                    notes.append(
                        f"(stopped after {MAX_SEARCH_RESULTS} matches; there may be "
                        "more: narrow the pattern or the path)"
                    )
                    return "\n".join(results + notes)
        if not results:
            results.append(f"no matches for {pattern!r}")
        if skipped:
            notes.append(
                f"(not searched, not regular files: {', '.join(skipped[:20])}"
                + (f" and {len(skipped) - 20} more)" if len(skipped) > 20 else ")")
            )
        return "\n".join(results + notes)

    def _walk(self, target: str) -> Iterator[str]:
        if not os.path.isdir(target):
            if not self.hidden(target):
                yield target
            return
        for folder, dirs, files in os.walk(target):  # symlinked directories are not entered
            dirs[:] = sorted(
                d for d in dirs if d not in SEARCH_SKIP and not self.hidden(os.path.join(folder, d))
            )
            for name in sorted(files):
                file = os.path.join(folder, name)
                real = os.path.realpath(file)
                if self.hidden(file) or self.hidden(real):
                    continue  # denied or signoff's own: skipped, never returned
                # A symlinked file may point outside the root: check where it really goes.
                if self.allow_outside or self.contains(real):
                    yield file

    # ------------------------------------------------------------------ file changes

    def write_file(self, path: str, content: str, *, idempotency_key: str | None = None) -> str:
        """Write the whole file (created with its directories if needed)."""
        if not isinstance(content, str):
            raise InvalidInput("write_file: content must be a string")
        target = self.resolve(path)
        if os.path.isdir(target):
            raise InvalidInput(f"{path} is a directory; write_file writes files")
        data = content.encode("utf-8")
        existed = write_regular(target, data, raw=path, tool="write_file")
        verb = "overwrote" if existed else "created"
        return f"{verb} {self.rel(target)} ({human_size(len(data))})"

    def edit_file(
        self, path: str, old: str, new: str, *, idempotency_key: str | None = None
    ) -> str:
        """Replace the one occurrence of `old` with `new`; zero or several is an error."""
        if not isinstance(new, str):
            raise InvalidInput("edit_file: new must be a string")
        target = self._existing_file(path)
        text = self._text_of(target, path)
        count = edit_count(text, old)
        if count != 1:
            raise InvalidInput(edit_problem(path, old, count))
        write_regular(target, text.replace(old, new, 1).encode("utf-8"), raw=path, tool="edit_file")
        return f"edited {self.rel(target)}: replaced 1 occurrence"

    def _text_of(self, target: str, raw: str) -> str:
        data, _ = read_regular(target, raw=raw, tool="edit_file")
        if is_binary(data):
            raise InvalidInput(f"{raw} is a binary file; edit_file edits text")
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InvalidInput(f"{raw} is not UTF-8 text ({exc})") from exc

    def project_files(self, path: Any, files: Any) -> list[tuple[str, str, str]]:
        """(relative name, resolved path, content) of each file `create_project` would write."""
        if not isinstance(files, dict) or not files:
            raise InvalidInput("create_project: files must be a non-empty object {path: content}")
        base = self.resolve(path)
        out = []
        for name, content in files.items():
            if not isinstance(name, str) or not name or os.path.isabs(name):
                raise InvalidInput(f"create_project: {name!r} must be a relative file path")
            if not isinstance(content, str):
                raise InvalidInput(f"create_project: content of {name!r} must be a string")
            target = self.resolve(os.path.join(path, name))  # as judged: see targets
            if not target.startswith(base.rstrip(os.sep) + os.sep):
                raise OutsideWorkspace(f"create_project: {name!r} leaves the project {path}")
            out.append((name, target, content))
        return out

    def create_project(
        self, path: str, files: dict[str, str], *, idempotency_key: str | None = None
    ) -> str:
        """Create new files under `path`; refused, before writing anything, if any exists."""
        planned = self.project_files(path, files)
        existing = [name for name, target, _ in planned if os.path.lexists(target)]
        if existing:
            raise InvalidInput(
                f"create_project: already exists, nothing written: {', '.join(sorted(existing))}"
            )
        total = 0
        for name, target, content in planned:
            data = content.encode("utf-8")
            # exclusive: never overwrite a file created meanwhile, never through a link
            write_regular(target, data, raw=name, tool="create_project", exclusive=True)
            total += len(data)
        return (
            f"created {len(planned)} files under {self.rel(self.resolve(path))}/ "
            f"({human_size(total)})"
        )

    def delete_file(self, path: str, *, idempotency_key: str | None = None) -> str:
        """Delete one file (a symlink itself, not its target); directories are refused."""
        target = self.resolve(path, follow=False)
        if os.path.isdir(target) and not os.path.islink(target):
            raise InvalidInput(f"{path} is a directory; delete_file deletes single files only")
        if not os.path.lexists(target):
            raise InvalidInput(f"{path}: no such file in the workspace")
        size = unlink_entry(target, tool="delete_file")
        return f"deleted {self.rel(target)} ({human_size(size)})"

    # ------------------------------------------------------------------ shell

    def execute_command(
        self,
        command: str,
        timeout: float | None = DEFAULT_TIMEOUT,
        *,
        idempotency_key: str | None = None,
    ) -> str:
        """Run `bash -c command` in the root; exit code and output (head and tail kept)."""
        if not isinstance(command, str) or not command.strip():
            raise InvalidInput("execute_command: command must be a non-empty string")
        try:
            limit = DEFAULT_TIMEOUT if timeout is None else float(timeout)
        except (TypeError, ValueError):
            limit = -1.0
        if not limit > 0:
            raise InvalidInput(f"execute_command: timeout must be positive, got {timeout!r}")
        return run_command(
            command, self.root, limit, max_output=self.max_output, idempotency_key=idempotency_key
        )

    # ------------------------------------------------------------------ outside world

    def fetch_url(self, url: str, *, idempotency_key: str | None = None) -> str:
        """HTTP(S) GET: status, content type and text (cut at `MAX_FETCH_BYTES`, noted)."""
        return http_fetch.fetch_url(url, self.fetch_timeout)

    def send_email(
        self,
        to: str,
        subject: str,
        body: str,
        cc: list[str] | None = None,
        *,
        idempotency_key: str | None = None,
    ) -> str:
        """Append the message to the local outbox (`.signoff/outbox.mbox`); no mail server.

        With an idempotency key, a second call with the same key sends nothing again.
        """
        fields = email_fields(self.sender, to, subject, body, cc)
        return append_to_outbox(self.root, fields, idempotency_key)

    def ask_human(
        self,
        question: str,
        options: list[str] | None = None,
        *,
        idempotency_key: str | None = None,
    ) -> str:
        """Never runs: the person's answer (a `respond` decision) is the tool's result."""
        raise InvalidInput(
            "ask_human is answered by a person through the gate (a `respond` decision); "
            "it cannot be executed directly"
        )

    # ------------------------------------------------------------------ wiring

    def as_mapping(
        self, *, on_snapshot: Callable[[ToolCall, Snapshot], None] | None = None
    ) -> dict[str, Callable[..., str]]:
        """Tool name -> callable, for a gate or an agent loop.

        With `on_snapshot`, each file change reports what it replaced (to keep for review
        and `revert`), even when the tool fails halfway.
        """
        tools: dict[str, Callable[..., str]] = {n: getattr(self, n) for n in BUILTIN_SPECS}
        if on_snapshot is not None:
            for name in FILE_WRITE_TOOLS:
                tools[name] = self._recording(name, on_snapshot)
        return tools

    def _recording(
        self, name: str, sink: Callable[[ToolCall, Snapshot], None]
    ) -> Callable[..., str]:
        def run(*, idempotency_key: str | None = None, **arguments: Any) -> str:
            call = ToolCall(name, arguments)
            return self._run_recorded(call, idempotency_key, sink)[0]

        run.__name__ = name
        return run

    def openai_tools(self, names: list[str] | None = None) -> list[dict[str, Any]]:
        return openai_tools(names)

    def preview(self, call: ToolCall, spec: ToolSpec) -> str:
        """What a reviewer sees for `call`: a diff, a tree, the full message. A gate previewer."""
        return render_preview(self, canonical_call(call), spec)

    # ------------------------------------------------------------------ review after action

    def snapshot(self, call: ToolCall) -> Snapshot | None:
        """The state a file-changing call is about to replace; None for other tools."""
        call = canonical_call(call)
        if call.name not in FILE_WRITE_TOOLS:
            return None
        args = call.arguments
        try:
            if call.name == "create_project":
                targets = [t for _, t, _ in self.project_files(args.get("path"), args.get("files"))]
            else:
                targets = [self.resolve(args.get("path"), follow=call.name != "delete_file")]
        except InvalidInput:
            return None  # the call itself will fail the same way, changing nothing
        entries, dirs = [], set()
        for target in targets:
            entries.append(SnapshotEntry.capture(self.rel(target), target))
            parent = os.path.dirname(target)
            while parent != self.root and self.contains(parent) and not os.path.exists(parent):
                dirs.add(self.rel(parent))
                parent = os.path.dirname(parent)
        return Snapshot(call.name, self.root, tuple(entries), tuple(sorted(dirs)), time.time())

    def settle(self, snapshot: Snapshot) -> Snapshot:
        """The snapshot with the digest of what each file holds now, after the call ran."""
        after = tuple(e.settle_as(path_state(self._entry_path(e.path))) for e in snapshot.entries)
        return snapshot.with_entries(after)

    def run_recorded(
        self, call: ToolCall, idempotency_key: str | None = None
    ) -> tuple[str, Snapshot | None]:
        """Run the call and return its result with the settled snapshot (None if no files)."""
        return self._run_recorded(call, idempotency_key, None)

    def _run_recorded(
        self,
        call: ToolCall,
        idempotency_key: str | None,
        sink: Callable[[ToolCall, Snapshot], None] | None,
    ) -> tuple[str, Snapshot | None]:
        call = canonical_call(call)
        fn = getattr(self, call.name) if call.name in BUILTIN_SPECS else None
        if fn is None:
            raise InvalidInput(f"{call.name!r} is not a built-in workspace tool")
        before = self.snapshot(call)
        settled = None
        try:
            result: str = fn(**call.arguments, idempotency_key=idempotency_key)
        finally:
            if before is not None:
                settled = self.settle(before)
                if sink is not None:
                    sink(call, settled)
        return result, settled

    def revert(self, snapshot: Snapshot) -> str:
        """Put back what the call replaced; refused if any file changed since it ran."""
        snapshot.check_revertible(lambda rel: path_state(self._entry_path(rel)))
        for entry in snapshot.entries:
            restore_entry(entry, self._entry_path(entry.path))
        for rel in sorted(snapshot.dirs, key=len, reverse=True):
            with contextlib.suppress(OSError):  # only if empty: new files there stay
                os.rmdir(self._entry_path(rel))
        return f"reverted {snapshot.tool}: " + ", ".join(e.path for e in snapshot.entries)

    def _entry_path(self, rel: str) -> str:
        # Re-check on the way back in: a stored snapshot is input like any other.
        return self.resolve(rel, follow=False)


# ---------------------------------------------------------------------- helpers


def canonical_call(call: ToolCall) -> ToolCall:
    """An alias call (`Write`, `Bash`, ...) as the built-in call it stands for."""
    alias = ALIASES.get(call.name)
    if alias is None:
        return call
    target, argmap = alias
    return ToolCall(target, {argmap.get(k, k): v for k, v in call.arguments.items()}, call.id)


def _matching_lines(file: str, regex: re.Pattern[str]) -> Iterator[tuple[int, str]]:
    try:
        if os.path.getsize(file) > MAX_SEARCH_FILE_BYTES:
            return
        fd = os.open(file, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        with os.fdopen(fd, "rb") as handle:
            if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
                return  # swapped for a FIFO or device since the walk looked
            data = handle.read()
    except OSError:
        return
    if is_binary(data):
        return
    for number, line in enumerate(data.decode("utf-8", "replace").splitlines(), 1):
        if regex.search(line):
            yield number, line


__all__ = [
    "FILE_WRITE_TOOLS",
    "OUTBOX",
    "OutsideWorkspace",
    "RevertConflict",
    "Snapshot",
    "SnapshotEntry",
    "ToolError",
    "Workspace",
    "canonical_call",
    "cut_text",
    "openai_tools",
]
