"""The terminal channel: an aligned approval box and a small keyboard dialog.

Fail closed at every turn: end of input, no terminal, Ctrl-C, five unreadable answers in
a row, or an endless stream of answers that never decide, all end in a rejection. Nothing
but an explicit `y`, a confirmed `a`, a validated and confirmed edit or an answer to a
question lets a call through.

Ctrl-C rejects the call in front of the person and asks whether the agent may go on; a
second Ctrl-C there, or the stop key (`q`, `/q` at a question) at any box, raises
`StopRequested`: the agent stops and the request is left undecided (a durable run stays
paused, nothing is lost). A press counts whenever it lands while the box is open, drawn or
read (see `ctrl_c`).

Editing opens $VISUAL or $EDITOR on the arguments, pretty-printed, when both ends are a
terminal; otherwise the JSON is typed at a prompt, ending with a blank line.

A key counts only once its box is on the screen: whatever was typed ahead is dropped right
after each box is drawn (see `keyboard.LineSource`), and Enter alone never decides.

Decision reasons written here go to the model and the audit log, so they stay English
("no reviewer available"); what the reviewer reads on screen follows `lang`.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import tempfile
import threading
import time
import unicodedata
from dataclasses import replace
from typing import Any, TextIO

from rich.console import Console
from rich.text import Text

from ..deciders import os_user
from ..exceptions import InvalidInput
from ..i18n import Lang, resolve_lang, t
from ..models import Decision, Request
from . import Prompt, StopRequested
from .keyboard import LineSource
from .render import (
    DEFAULT_WIDTH,
    MAX_BOX_WIDTH,
    build_box,
    cut,
    escape_untrusted,
    is_question,
    question_parts,
    render_request,
)

TYPE_CHECKING = False  # not typing's: see signoff/__init__.py

if TYPE_CHECKING:
    from ..models import DecisionKind, GrantScope

NO_REVIEWER = "no reviewer available"
UNREADABLE_REASON = "five unreadable answers in a row"
TOO_MANY_REASON = "too many answers without a decision"
INTERRUPTED_REASON = "interrupted by the reviewer (Ctrl-C)"

MAX_STRIKES = 5  # unreadable answers in a row before we reject
MAX_READS = 200  # lines read in one decision: bounds any input stream, however odd
MAX_EDIT_CHARS = 1_000_000

_YES = frozenset({"y", "yes", "是", "批准"})
_ALWAYS = frozenset({"a", "always", "总是"})
_REJECT = frozenset({"n", "no", "否", "拒绝"})
_SKIP = frozenset({"s", "skip", "跳过"})
_EDIT = frozenset({"e", "edit", "修改"})
_HELP = frozenset({"?", "h", "help", "帮助"})
_STOP = frozenset({"q", "quit", "stop", "停止"})

# One terminal per process: prompts from several threads are shown one at a time.
_TERMINAL_LOCK = threading.RLock()


class _NoReviewer(Exception):
    """End of input, a closed stream, or no terminal."""


class _GiveUp(Exception):
    """Too many unreadable answers, or too many lines without a decision."""

    def __init__(self, reason: str, message_key: str) -> None:
        super().__init__(reason)
        self.reason = reason
        self.message_key = message_key


def _current_user() -> str:
    """The OS user by uid, as the CLI records deciders ($USER is not consulted)."""
    try:
        return os_user()
    except Exception:  # no uid to name on an odd platform
        return "local"


def _isatty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):
        return False


def _normalise(answer: str) -> str:
    # NFKC folds full-width letters from a Chinese IME ("ｙ", "？") into ASCII.
    return unicodedata.normalize("NFKC", answer).strip().lower()


def _refuse_constant(token: str) -> Any:
    raise ValueError(f"{token} is not allowed in JSON")


class TerminalChannel:
    """Ask a person at a terminal; implements the `Channel` protocol.

    `input`/`output` default to stdin/stdout. With the default stdin, a stdin that is not
    a terminal means "no reviewer" (a pipe must never approve); injected streams are used
    as given. `width` fixes the box width when output is not a terminal.
    """

    def __init__(
        self,
        input: TextIO | None = None,
        output: TextIO | None = None,
        lang: str | None = None,
        actor: str | None = None,
        *,
        width: int | None = None,
        require_tty: bool | None = None,
    ) -> None:
        self._input = input
        self._output = output
        self.lang: Lang = resolve_lang(lang)
        self.actor = actor or _current_user()
        self.width = width
        self.require_tty = (input is None) if require_tty is None else require_tty

    def _console(self) -> Console:
        out = self._output if self._output is not None else sys.stdout
        tty = _isatty(out)
        return Console(
            file=out,
            # A fixed width off a terminal keeps captured output stable; on one, rich measures.
            width=self.width or (None if tty else DEFAULT_WIDTH),
            force_terminal=tty,
            color_system="auto" if tty else None,
            highlight=False,
            markup=False,
            emoji=False,
            soft_wrap=False,
        )

    def decide(self, prompt: Prompt) -> Decision:
        with _TERMINAL_LOCK:
            stream = self._input if self._input is not None else sys.stdin
            return _Dialog(self, prompt, self._console(), stream).run()


class _Dialog:
    """One decision: the box, then the menu until something is decided."""

    def __init__(
        self, channel: TerminalChannel, prompt: Prompt, console: Console, stream: TextIO | None
    ) -> None:
        self.channel = channel
        self.prompt = prompt
        self.console = console
        self.stream = stream
        self.lines = LineSource(stream) if stream is not None else None
        self.lang = channel.lang
        self.strikes = 0
        self.reads = 0

    # ------------------------------------------------------------------ plumbing

    def say(self, key: str, style: str = "", **values: object) -> None:
        self.console.print(Text(t(key, self.lang, **values), style=style))

    def read(self, label: str = "> ") -> str:
        """One line without its line ending; end of input raises `_NoReviewer`."""
        if self.lines is None:
            raise _NoReviewer
        self.console.print(Text(label, style="bold"), end="")
        self.console.file.flush()
        try:
            line = self.lines.readline()
        except (OSError, ValueError, UnicodeDecodeError) as exc:
            raise _NoReviewer from exc
        if line == "":
            raise _NoReviewer
        self.reads += 1
        if self.reads > MAX_READS:
            raise _GiveUp(TOO_MANY_REASON, "too_many_lines")
        return line.rstrip("\r\n")

    def strike(self, key: str, **values: object) -> None:
        """An answer we cannot use; five in a row reject the call."""
        self.strikes += 1
        if self.strikes >= MAX_STRIKES:
            raise _GiveUp(UNREADABLE_REASON, "too_many_unreadable")
        message = t(key, self.lang, **values)
        left = t("tries_left", self.lang, left=MAX_STRIKES - self.strikes)
        self.console.print(Text(f"{message} {left}", style="yellow"))

    def decision(self, kind: DecisionKind, **fields: Any) -> Decision:
        decided = Decision(kind=kind, actor=self.channel.actor, decided_at=time.time(), **fields)
        self.say(f"decided_{kind}", style="bold")
        return decided

    def auto_reject(self, reason: str, message_key: str) -> Decision:
        self.say(message_key, style="bold red")
        return Decision(kind="reject", actor="signoff", reason=reason, decided_at=time.time())

    # ------------------------------------------------------------------ flow

    def show(self, request: Request) -> None:
        """Draw a box; only keys typed after it is on the screen can answer it."""
        self.console.print()
        width = min(self.console.width, MAX_BOX_WIDTH)
        self.console.print(build_box(request, self.lang, width=width))
        self.console.file.flush()
        if self.lines is not None:
            self.lines.discard_typed_ahead()

    def run(self) -> Decision:
        if self.lines is None:
            return self.dialog()
        with self.lines.catching_ctrl_c():
            return self.dialog()

    def dialog(self) -> Decision:
        request = self.prompt.request
        try:
            self.show(request)  # a Ctrl-C while the box is drawn rejects the call too
            if self.channel.require_tty and not _isatty(self.stream):
                return self.auto_reject(NO_REVIEWER, "no_reviewer")
            return self.question() if is_question(request) else self.menu()
        except _NoReviewer:
            return self.auto_reject(NO_REVIEWER, "no_reviewer")
        except _GiveUp as give_up:
            return self.auto_reject(give_up.reason, give_up.message_key)
        except StopRequested:
            raise
        except KeyboardInterrupt:
            self.console.print()
            self.say("interrupted", style="bold red")
            self.go_on_or_stop()
            return Decision(
                kind="reject",
                actor=self.channel.actor,
                reason=INTERRUPTED_REASON,
                decided_at=time.time(),
            )

    def go_on_or_stop(self) -> None:
        """After a Ctrl-C: a second one (or the stop key) stops the agent; Enter lets it go
        on without the call. End of input lets it go on too: the call is rejected anyway."""
        try:
            answer = _normalise(self.read(t("interrupted_prompt", self.lang)))
        except KeyboardInterrupt:
            self.console.print()
            raise self.stop() from None
        except (_NoReviewer, _GiveUp):
            return
        if answer in _STOP:
            raise self.stop()

    def stop(self) -> StopRequested:
        self.say("stopping", style="bold red")
        return StopRequested("the reviewer stopped the agent")

    def menu(self) -> Decision:
        while True:
            self.say("menu", style="bold")
            raw = self.read()
            answer = _normalise(raw)
            if answer == "":
                # Enter alone decides nothing: it may be a key meant for something else.
                self.say("enter_decides_nothing", style="yellow")
                continue
            if answer in _YES:
                return self.decision("approve")
            if answer in _STOP:
                raise self.stop()
            if answer in _HELP:
                self.strikes = 0
                self.say("help")
                continue
            if answer in _ALWAYS:
                self.strikes = 0
                decided = self.always()
            elif answer in _REJECT:
                self.strikes = 0
                return self.reject()
            elif answer in _SKIP:
                return self.decision("skip")
            elif answer in _EDIT:
                self.strikes = 0
                decided = self.edit()
                if decided is None:
                    # Back to the original call: show it again, so a key meant for the
                    # edited call's box cannot approve the original one unseen.
                    self.show(self.prompt.request)
            else:
                shown, _ = cut(escape_untrusted(raw, newline=False, tab=False), 40, self.lang)
                self.strike("unreadable", answer=repr(shown))
                continue
            if decided is not None:
                return decided

    def always(self) -> Decision | None:
        rule = self.prompt.always_rule or self.prompt.request.verdict.suggested_rule
        if not rule:
            self.say("always_none", style="yellow")
            return None
        shown = escape_untrusted(rule, newline=False, tab=False)
        scopes = self.prompt.scopes
        if len(scopes) == 1:
            (scope,) = scopes
            self.say("always_show", style="bold", rule=shown, scope=t(f"scope_{scope}", self.lang))
            if _normalise(self.read(t("always_confirm", self.lang))) in _YES:
                return self.decision("approve_always", scope=scope, rule=rule)
            self.say("cancelled")
            return None
        self.say("always_rule", style="bold", rule=shown)
        for number, scope in enumerate(scopes, 1):
            self.console.print(Text(f"  [{number}] {t(f'scope_{scope}', self.lang)}"))
        answer = _normalise(self.read(t("always_pick", self.lang, n=len(scopes))))
        chosen = self.scope_named(answer, scopes)
        if chosen is not None:
            return self.decision("approve_always", scope=chosen, rule=rule)
        self.say("cancelled")
        return None

    @staticmethod
    def scope_named(answer: str, scopes: tuple[GrantScope, ...]) -> GrantScope | None:
        """The scope a person picked by its number or its name; None for anything else."""
        if answer.isdigit() and 1 <= int(answer) <= len(scopes):
            return scopes[int(answer) - 1]
        return next((scope for scope in scopes if answer == scope), None)

    def reject(self) -> Decision:
        while True:
            reason = self.read(t("reason_prompt", self.lang)).strip()
            if reason:
                return self.decision("reject", reason=reason)
            self.strike("reason_required")

    def edit(self) -> Decision | None:
        current = json.dumps(dict(self.prompt.request.call.arguments), indent=2, ensure_ascii=False)
        editor = self.editor()
        if editor is not None:
            used, decided = self.edit_in(editor, current)
            if used:
                return decided
        self.say("edit_intro")
        self.console.print(Text(escape_untrusted(current).expandtabs(4), style="cyan"))
        schema = self.prompt.schema or {}
        properties = schema.get("properties")
        if isinstance(properties, dict) and properties:
            required = set(schema.get("required") or ())
            fields = ", ".join(f"{name}{'*' if name in required else ''}" for name in properties)
            self.say("edit_schema", style="dim", fields=escape_untrusted(fields, newline=False))
        while True:
            self.say("edit_prompt")
            text = self.read_json_block()
            if text is None:
                self.say("cancelled")
                return None
            problem = self.check_edit(text)
            if isinstance(problem, str):
                self.console.print(Text(problem, style="red"))
                self.say("edit_retry", style="dim")
                continue
            return self.confirm_edit(problem)

    def editor(self) -> list[str] | None:
        """$VISUAL or $EDITOR as a command, when the person is at a terminal both ways."""
        if self.lines is None or not self.lines.is_terminal or not _isatty(self.console.file):
            return None
        for name in ("VISUAL", "EDITOR"):
            value = os.environ.get(name, "").strip()
            if value:
                try:
                    words = shlex.split(value)
                except ValueError:
                    continue
                if words:
                    return words
        return None

    def edit_in(self, editor: list[str], current: str) -> tuple[bool, Decision | None]:
        """Edit in the person's editor; the result is judged and shown before a `y`.
        (False, None) when the editor cannot run: the caller falls back to the prompt."""
        text = current + "\n"
        while True:
            edited = self.run_editor(editor, text)
            if edited is None:
                return False, None
            if not edited.strip():
                self.say("cancelled")
                return True, None
            problem = self.check_edit(edited)
            if isinstance(problem, str):
                self.console.print(Text(problem, style="red"))
                again = _normalise(self.read(t("edit_again", self.lang)))
                if again in _EDIT:
                    text = edited
                    continue
                self.say("cancelled")
                return True, None
            if problem == dict(self.prompt.request.call.arguments):
                self.say("edit_unchanged")
                return True, None
            return True, self.confirm_edit(problem)

    def run_editor(self, editor: list[str], text: str) -> str | None:
        """What the file holds after the editor exits; None if the editor failed."""
        fd, path = tempfile.mkstemp(prefix="signoff-edit-", suffix=".json")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(text)
            self.say("edit_opening", style="dim", editor=shlex.join(editor))
            self.console.file.flush()
            try:
                done = subprocess.run([*editor, path], check=False)
            except OSError as exc:
                self.say("edit_no_editor", style="yellow", error=escape_untrusted(str(exc)))
                return None
            if done.returncode != 0:
                self.say("edit_no_editor", style="yellow", error=f"exit status {done.returncode}")
                return None
            with open(path, encoding="utf-8", errors="replace") as handle:
                edited = handle.read(MAX_EDIT_CHARS + 1)
            if len(edited) > MAX_EDIT_CHARS:
                self.say("edit_too_long", style="red")
                return ""
            return edited
        finally:
            os.unlink(path)

    def confirm_edit(self, arguments: dict[str, Any]) -> Decision | None:
        """Show the edited call as it will run, judged again, and ask for an explicit y."""
        try:
            edited = self.edited_request(arguments)
        except Exception as exc:  # a judge that fails must not approve anything
            message = escape_untrusted(str(exc) or type(exc).__name__, newline=False)
            self.console.print(Text(t("edit_invalid", self.lang, error=message), style="red"))
            self.say("cancelled")
            return None
        self.say("edit_new_box", style="bold")
        self.show(edited)
        if edited.verdict.effect == "deny":  # a deny wins: nothing to confirm
            reason = escape_untrusted(edited.verdict.reason or "denied", newline=False)
            self.console.print(Text(t("edit_invalid", self.lang, error=reason), style="red"))
            self.say("cancelled")
            return None
        if _normalise(self.read(t("edit_confirm", self.lang))) in _YES:
            try:
                return self.decision("edit", arguments=arguments)
            except InvalidInput as exc:
                message = escape_untrusted(str(exc), newline=False)
                self.console.print(Text(t("edit_invalid", self.lang, error=message), style="red"))
        self.say("cancelled")
        return None

    def edited_request(self, arguments: dict[str, Any]) -> Request:
        if self.prompt.judge_edit is not None:
            return self.prompt.judge_edit(arguments)
        request = self.prompt.request
        return replace(request, call=request.call.with_arguments(arguments))

    def check_edit(self, text: str) -> dict[str, Any] | str:
        """The edited arguments, or the message that says why they are refused."""
        try:
            arguments = json.loads(text, parse_constant=_refuse_constant)
        except ValueError as exc:
            return t("edit_bad_json", self.lang, error=escape_untrusted(str(exc), newline=False))
        if not isinstance(arguments, dict):
            return t("edit_not_object", self.lang)
        try:
            error = self.prompt.validate_edit(arguments)
        except Exception as exc:  # a validator that crashes must not approve anything
            error = str(exc) or type(exc).__name__
        if error:
            return t("edit_invalid", self.lang, error=escape_untrusted(error, newline=False))
        return arguments

    def read_json_block(self) -> str | None:
        """Lines until a blank line, as the prompt says; None if the first is blank.

        The block ends at the blank line and nowhere else, so that blank line is read here
        and cannot fall through to answer the next box."""
        lines: list[str] = []
        size = 0
        while True:
            line = self.read("json> " if not lines else "    > ")
            if not line.strip():
                return "\n".join(lines) if lines else None
            lines.append(line)
            size += len(line) + 1
            if size > MAX_EDIT_CHARS:
                self.say("edit_too_long", style="red")
                lines, size = [], 0

    def question(self) -> Decision:
        _, options = question_parts(self.prompt.request)
        pick = t("menu_ask_pick", self.lang) if options else ""
        while True:
            self.say("menu_ask", style="bold", pick=pick)
            raw = self.read()
            answer = raw.strip()
            command = _normalise(raw)
            if command in ("/s", "/skip"):
                return self.decision("skip")
            if command in ("/q", "/stop"):
                raise self.stop()
            if command in ("/n", "/reject"):
                self.strikes = 0
                return self.reject()
            if command in ("/?", "?", "/h", "/help"):
                self.strikes = 0
                self.say("help_ask")
                continue
            if not answer:
                self.strike("empty_answer")
                continue
            if options and command.isdigit():
                number = int(command)
                if not 1 <= number <= len(options):
                    self.strike("bad_option", n=number, max=len(options))
                    continue
                return self.decision("respond", result=options[number - 1])
            return self.decision("respond", result=answer)


__all__ = [
    "INTERRUPTED_REASON",
    "NO_REVIEWER",
    "UNREADABLE_REASON",
    "TerminalChannel",
    "escape_untrusted",
    "render_request",
]
