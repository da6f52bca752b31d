"""What every command-hook shell shares: stdin JSON in, the client's answer out, every
failure a block, and a deadline of the hook's own.

A client shell (`codex`, `gemini`, `cursor`) is a `Shell`: how to read its hook input into
a `HookCall`, how to write an `Answer` in its JSON, what blocks when something fails, and
which ask strategies it can honour. `main` runs one hook event with it.

Why a deadline of our own: Codex and Gemini CLI let a call through when a hook runs past
its timeout (and Cursor's `failClosed` is documented, not verified here), so the hook
answers "blocked" itself before the client's timeout can pass (`--deadline`, which
install sets shorter than the timeout it writes).
"""

from __future__ import annotations

import json
import os
import sys
import threading
from collections.abc import Callable, Mapping

from ..escape import escape_untrusted
from ..exceptions import InvalidInput
from ..records import record
from .core import Adapter, Answer, Client, HookCall, hook_options, read_hook_input

TYPE_CHECKING = False  # not typing's: see signoff/__init__.py

if TYPE_CHECKING:
    from typing import Any, TextIO

    from .core import HookEvent, Strategy

MAX_REASON = 9000


@record(frozen=True)
class Shell:
    """One client's hook protocol over the adapter core."""

    client: Client
    parse: Callable[[Any], HookCall]
    render: Callable[[HookEvent, Answer], tuple[dict[str, Any] | None, int]]
    blocked: Callable[[HookEvent | None, str], tuple[dict[str, Any] | None, int]]
    event_of: Callable[[Any], HookEvent | None]  # read before the rest: how a failure answers
    strategies: tuple[Strategy, ...]  # the ask strategies this client can honour
    project_env: str | None = None  # the variable naming the project, if the client sets one
    markers: tuple[str, ...] = (".signoff",)  # folders that mark the project's root


def reason_text(text: str) -> str:
    text = escape_untrusted(text)
    return text if len(text) <= MAX_REASON else text[: MAX_REASON - 20] + " [... cut]"


def strategy_for(shell: Shell, asked: str | None, configured: str) -> Strategy:
    """`--ask`, else the settings' `[hooks] ask` where this client can honour it, else
    its first strategy (Codex and Cursor cannot ask from a hook: they wait on the inbox).
    An explicit `--ask` the client cannot honour is an error, never a quiet change."""
    if asked is not None:
        if asked not in shell.strategies:
            raise InvalidInput(
                f"--ask {asked} is not possible with {shell.client.name} "
                f"(it can: {', '.join(shell.strategies)})"
            )
        return asked
    if configured in shell.strategies:
        return configured
    return shell.strategies[0]


def workspace_of(shell: Shell, hc: HookCall, given: str | None, env: Mapping[str, str]) -> str:
    """`--workspace`, else the client's project variable, else the nearest folder above
    the session's cwd holding one of the shell's markers (an agent that `cd`s into a
    subfolder stays under the project's rules), else the cwd."""
    root = given or (env.get(shell.project_env) if shell.project_env else None)
    if root:
        return root
    if not hc.cwd:
        raise InvalidInput(f"no workspace: pass --workspace, or run from {shell.client.name}")
    here = os.path.realpath(hc.cwd)
    while True:
        if any(os.path.isdir(os.path.join(here, m)) for m in shell.markers):
            return here
        parent = os.path.dirname(here)
        if parent == here:
            return hc.cwd
        here = parent


def answer(
    shell: Shell,
    doc: Any,
    *,
    workspace: str | None = None,
    ask: str | None = None,
    env: Mapping[str, str] | None = None,
) -> tuple[dict[str, Any] | None, int, str]:
    """One hook event: (JSON answer or None, exit code, message for stderr). Never raises;
    every failure blocks."""
    event = None
    try:
        event = shell.event_of(doc)
        hc = shell.parse(doc)
        event = hc.event
        root = workspace_of(shell, hc, workspace, os.environ if env is None else env)
        from ..settings import load_settings

        settings = load_settings(root)
        configured = hook_options(settings)
        options = hook_options(settings, ask=strategy_for(shell, ask, configured.ask))
        adapter = Adapter(shell.client, root, settings=settings, options=options)
        try:
            result = adapter.handle(hc)
        finally:
            adapter.close()
        out, code = shell.render(hc.event, result)
        message = reason_text(result.reason) if code != 0 else ""
        return out, code, message
    except BaseException as exc:  # fail closed on everything, even exits
        if isinstance(exc, KeyboardInterrupt):
            reason = "signoff: interrupted; the call is blocked"
        else:
            detail = str(exc) or type(exc).__name__
            if isinstance(exc, RecursionError):  # a value nested deeper than the stack
                detail = "its input is nested too deeply"
            reason = f"signoff could not judge this call, so it is blocked: {detail}"
        out, code = shell.blocked(event, reason_text(reason))
        return out, code, reason_text(reason)


class _Once:
    """Exactly one answer leaves the process: the judged one or the deadline's. It goes
    to the real stdout even while judging sends every other output to stderr."""

    def __init__(self, stdout: TextIO, stderr: TextIO) -> None:
        self.lock = threading.Lock()
        self.done = False
        self.stdout, self.stderr = stdout, stderr
        self.fd: int | None = None
        if stdout is sys.stdout:
            try:
                stdout.flush()
                self.fd = os.dup(stdout.fileno())
            except (OSError, ValueError):
                self.fd = None

    def emit(self, out: dict[str, Any] | None, message: str) -> bool:
        with self.lock:
            if self.done:
                return False
            self.done = True
            if out is not None:
                text = json.dumps(out) + "\n"  # ASCII: whatever the hook's locale
                if self.fd is not None:
                    os.write(self.fd, text.encode("ascii"))
                else:
                    self.stdout.write(text)
                    self.stdout.flush()
            if message:
                self.stderr.write(message + "\n")
                self.stderr.flush()
            return True


def main(
    shell: Shell,
    *,
    workspace: str | None = None,
    ask: str | None = None,
    deadline: float | None = None,
    stdin: TextIO | None = None,
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
) -> int:
    """`signoff hook <client>`: stdin JSON -> stdout JSON; the exit code blocks where
    the client reads it so. With `deadline`, an answer still not given by then is a block
    (the process ends at once: a hung store or a wait that overran never lets it through)."""
    stdin, stdout, stderr = stdin or sys.stdin, stdout or sys.stdout, stderr or sys.stderr
    once = _Once(stdout, stderr)
    event: list[HookEvent | None] = [None]
    if deadline is not None:

        def expire() -> None:
            reason = (
                f"signoff: no answer within the hook's deadline of {deadline:g} s; "
                "the call is blocked"
            )
            out, code = shell.blocked(event[0], reason)
            if once.emit(out, reason):
                os._exit(code)

        timer = threading.Timer(deadline, expire)
        timer.daemon = True
        timer.start()
    try:
        doc = read_hook_input(stdin)
    except (ValueError, OSError) as exc:
        reason = f"signoff: {reason_text(str(exc))}; the call is blocked"
        out, code = shell.blocked(None, reason)
        once.emit(out, reason)
        return code
    try:
        event[0] = shell.event_of(doc)
    except BaseException:
        event[0] = None
    from .claude_code import _stdout_aside

    # a stray print or a child's output must never reach the client's stdout first
    with _stdout_aside(stdout):
        out, code, message = answer(shell, doc, workspace=workspace, ask=ask)
    if not once.emit(out, message):  # the deadline answered first and is ending us
        threading.Event().wait()
    return code


def text_field(doc: Mapping[str, Any], event: str, key: str, *, required: bool) -> str:
    value = doc.get(key)
    if value is None and not required:
        return ""
    if not isinstance(value, str) or (required and not value):
        raise InvalidInput(f"{event}: {key} must be a non-empty string")
    return value


def object_field(doc: Mapping[str, Any], event: str, key: str) -> dict[str, Any]:
    value = doc.get(key)
    if not isinstance(value, Mapping):
        raise InvalidInput(f"{event}: {key} must be a JSON object")
    return dict(value)


__all__ = ["Shell", "answer", "main", "reason_text", "strategy_for", "workspace_of"]
