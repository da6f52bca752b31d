"""The `signoff` command line. Every read command takes `--json`.

`signoff check` is what a coding-agent hook runs, one process per tool call: its path
imports neither rich (unless it explains in a table), the store, nor the other commands'
modules (see `main`)."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, TextIO

from ..escape import escape_untrusted, safe_json
from ..exceptions import InvalidInput, SignoffError
from ..models import ToolCall, Verdict
from ..reviewer_settings import AUTO_WITHOUT_REVIEWER
from ..settings import MODES, load_settings
from ._output import HelpFormatter, print_json

if TYPE_CHECKING:
    from ..policy import Policy

Command = Callable[[argparse.Namespace], int]
_COMMANDS: dict[str, Command] = {}

_EFFECT_STYLE = {"allow": "green", "notify": "cyan", "ask": "yellow", "deny": "bold red"}


# ------------------------------------------------------------------ check


def verdict_json(verdict: Verdict) -> dict[str, Any]:
    """The verdict as `check --json` prints it: the verdict first, as a reader looks for it
    (and as the docs show it), then the risk, the rule and the rest."""
    doc = verdict.to_json()
    return {"verdict": doc.pop("effect"), **doc}


def _policy(args: argparse.Namespace) -> Policy:
    from ..policy import Policy

    workspace = os.path.abspath(args.workspace)
    settings = load_settings(workspace, user=not args.no_user_settings)
    return Policy(settings, workspace=workspace, mode=args.mode, contain=True)


class _Judge:
    """`check`'s verdicts: contained where the policy would run a command contained and
    a sandbox can be made here (see `sandbox.settle`)."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.policy = _policy(args)
        self.cwd = _cwd(args)
        self.note = ""

    def verdict(self, call: ToolCall) -> Verdict:
        if not self.policy.contain:
            return self.policy.evaluate(call, cwd=self.cwd)
        from ..sandbox import settle

        verdict, note = settle(self.policy, call, cwd=self.cwd)
        self.note = self.note or note
        return verdict


def _shell_lines(path: str) -> Iterator[tuple[int, str | None, str | None]]:
    """JSON Lines of commands: each a JSON string or an object with `cmd`."""
    stream = sys.stdin if path == "-" else open(path, encoding="utf-8")  # noqa: SIM115
    with stream:
        for number, line in enumerate(stream, start=1):
            if not line.strip():
                continue
            try:
                item = json.loads(line)
            except ValueError as exc:
                yield number, None, f"line {number}: not JSON ({exc})"
                continue
            command = item.get("cmd") if isinstance(item, dict) else item
            if not isinstance(command, str):
                yield number, None, f'line {number}: expected a JSON string or {{"cmd": ...}}'
                continue
            yield number, command, None


def cmd_check(args: argparse.Namespace) -> int:
    judge = _Judge(args)
    if args.shell_file:
        import gc

        gc.enable()  # a batch makes garbage; `cli.main` paused the collector for one call
        out = sys.stdout
        for number, command, error in _shell_lines(args.shell_file):
            if error is not None:
                out.write(safe_json({"line": number, "error": error}) + "\n")
                continue
            assert command is not None
            verdict = judge.verdict(ToolCall("execute_command", {"command": command}))
            doc = verdict_json(verdict)
            doc["line"] = number
            out.write(safe_json(doc) + "\n")
        return 0
    if args.shell is not None:
        call = ToolCall("execute_command", {"command": args.shell})
    elif args.tool:
        try:
            arguments = json.loads(args.args or "{}")
        except ValueError as exc:
            raise InvalidInput(f"--args is not valid JSON: {exc}") from exc
        call = ToolCall(args.tool, arguments)
    else:
        raise InvalidInput(
            "check needs --tool NAME (with --args JSON), --shell CMD or --shell-file"
        )
    verdict = judge.verdict(call)
    if args.json:
        print_json(verdict_json(verdict))
    else:
        explain(call, verdict, judge.policy)
    if judge.note:
        sys.stderr.write(judge.note + "\n")
    return 0


def _cwd(args: argparse.Namespace) -> str | None:
    """`--cwd`, made absolute from where `signoff check` runs."""
    return os.path.abspath(args.cwd) if args.cwd else None


_CLASS_ORDER = ("read_only", "reversible_write", "destructive", "network", "privilege", "opaque")


def _class_rank(cls: str) -> int:
    return _CLASS_ORDER.index(cls) if cls in _CLASS_ORDER else len(_CLASS_ORDER)


def explain(call: ToolCall, verdict: Verdict, policy: Policy, out: TextIO | None = None) -> None:
    """The verdict for a person: a head line, one row per part of a shell command, the rule
    and the reasons. Plain text (coloured on a terminal) without rich: a hook runs `check`
    once per tool call, and rich would be most of its start-up."""
    out = out or sys.stdout
    paint = _painter(out)
    # A shell command is judged by what it does, not by the shell tool's tier (`ls -la`
    # is not "destructive" because execute_command can be): show its worst class.
    kind = (
        f"class {max((p.cls for p in verdict.parts), key=_class_rank)}"
        if verdict.parts
        else f"tier {verdict.tier}"
    )
    lines = [
        f"{paint(verdict.effect.upper(), _EFFECT_STYLE[verdict.effect])}"
        f"  {escape_untrusted(call.name, newline=False)}  risk {verdict.risk}  {kind}"
    ]
    if verdict.parts:
        rows = [
            [
                escape_untrusted(part.command, newline=False),
                part.cls,
                part.effect,
                escape_untrusted("; ".join(part.reasons) or "-", newline=False),
            ]
            for part in verdict.parts
        ]
        lines += _table(["command", "class", "effect", "why"], rows, paint)
    lines.append(f"rule: {verdict.rule or '(defaults)'}")
    lines += [f"  - {escape_untrusted(reason)}" for reason in verdict.reasons]
    if verdict.suggested_rule:
        lines.append(f"always-allow would save: {escape_untrusted(verdict.suggested_rule)}")
    lines.append(f"mode: {policy.mode}   workspace: {escape_untrusted(policy.workspace)}")
    if policy.mode == "auto":
        lines.append(_who_settles(call, verdict, policy))
    out.write("\n".join(lines) + "\n")


def _who_settles(call: ToolCall, verdict: Verdict, policy: Policy) -> str:
    """In auto mode: whether the reviewer model would settle this ask, or a person."""
    reviewer = policy.settings.reviewer
    if reviewer is None:
        return AUTO_WITHOUT_REVIEWER
    model = escape_untrusted(reviewer.model, newline=False)
    if verdict.effect != "ask":
        return f"auto mode: in a run, the reviewer model {model} settles this if it asks"
    from ..reviewer_remit import remit_problem  # auto mode with a reviewer only

    outside = remit_problem(policy, call, verdict)
    if outside is None:
        return f"auto mode: in a run, the reviewer model {model} settles this"
    return (
        f"auto mode: a person decides this, not the reviewer model {model}: "
        f"{escape_untrusted(outside, newline=False)}"
    )


_ANSI = {"green": "32", "cyan": "36", "yellow": "33", "bold red": "1;31", "bold": "1"}


def _painter(out: TextIO) -> Callable[[str, str], str]:
    """Colour for a terminal that wants it (not with NO_COLOR or TERM=dumb), else none."""
    isatty = getattr(out, "isatty", None)
    wants = (
        isatty is not None
        and isatty()
        and "NO_COLOR" not in os.environ
        and os.environ.get("TERM") != "dumb"
    )
    if not wants:
        return lambda text, style: text
    return lambda text, style: f"\x1b[{_ANSI[style]}m{text}\x1b[0m"


def _width(text: str) -> int:
    """Terminal columns of (escaped, so printable) text: East Asian wide characters take 2."""
    if text.isascii():
        return len(text)
    import unicodedata

    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def _table(header: list[str], rows: list[list[str]], paint: Callable[[str, str], str]) -> list[str]:
    """Columns two spaces apart, left-aligned; the header bold, each effect in its colour
    (column 3). Long cells are not folded: the terminal wraps them, nothing is cut."""
    widths = [max(_width(row[i]) for row in [header, *rows]) for i in range(len(header))]

    def line(cells: list[str], styles: list[str | None]) -> str:
        out = []
        for cell, width, style in zip(cells, widths, styles, strict=True):
            pad = " " * (width - _width(cell))
            out.append((paint(cell, style) if style else cell) + pad)
        return "  ".join(out).rstrip()

    lines = [line(header, ["bold"] * len(header))]
    lines += [line(row, [None, None, _EFFECT_STYLE[row[2]], None]) for row in rows]
    return lines


# ------------------------------------------------------------------ parser


class _Version(argparse.Action):
    """`--version`, read from the package metadata only when asked for."""

    def __init__(
        self, option_strings: Sequence[str], dest: str = argparse.SUPPRESS, **_: Any
    ) -> None:
        super().__init__(
            option_strings,
            dest,
            nargs=0,
            default=argparse.SUPPRESS,
            help="show signoff's version and exit",
        )

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        from .. import __version__

        sys.stdout.write(f"signoff {__version__}\n")
        parser.exit()


def build_parser(*, only_check: bool = False) -> argparse.ArgumentParser:
    """The whole command line; with `only_check`, `check` alone (see `main`)."""
    parser = argparse.ArgumentParser(
        prog="signoff",
        description="A human in the loop of AI agents' tool calls.",
    )
    parser.add_argument("--version", action=_Version)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    check = sub.add_parser(
        "check",
        help="explain the verdict for one call or shell command",
        description="Judge one tool call or shell command with the workspace's policy, "
        "without running it: the verdict, its risk, the rule and the reasons. A hook runs "
        "it once per call.",
        epilog="examples:\n  signoff check --shell 'git push --force'\n"
        '  signoff check --tool write_file --args \'{"path": "src/app.py"}\' --json',
        formatter_class=HelpFormatter,
    )
    check.add_argument("--tool", help="tool name, e.g. write_file or Bash")
    check.add_argument(
        "--args", metavar="JSON", help="the call's arguments as a JSON object (default: {})"
    )
    check.add_argument("--shell", metavar="CMD", help="judge a shell command")
    check.add_argument(
        "--shell-file",
        metavar="FILE",
        help="judge many commands: JSON Lines, a string or {\"cmd\": …} a line ('-' for "
        "stdin); prints one JSON verdict a line",
    )
    check.add_argument(
        "--workspace",
        default=".",
        help="the project whose settings and boundaries apply (default: .)",
    )
    check.add_argument(
        "--cwd",
        metavar="DIR",
        default=None,
        help="judge as run in this directory, as a coding agent's shell after a cd (its "
        "relative paths mean paths there; outside the workspace asks; default: the "
        "workspace root)",
    )
    check.add_argument(
        "--mode",
        choices=MODES,
        default=None,
        help="judge as in this mode: accept-edits lets workspace file writes run, plan "
        "denies every write, auto turns asks into allows (default: the settings' mode, "
        "else default)",
    )
    check.add_argument(
        "--no-user-settings",
        action="store_true",
        help="ignore ~/.config/signoff/settings.toml (default: read it)",
    )
    check.add_argument("--json", action="store_true", help="print one JSON object")
    check.set_defaults(func=cmd_check)
    if only_check:
        return parser
    for register in _registrars():
        register(sub)
    return parser


def _registrars() -> list[Callable[[Any], None]]:
    from . import audit as cli_audit
    from . import board as cli_board
    from . import chat, demo
    from . import hooks as cli_hooks
    from . import keys as cli_keys
    from . import mcp as cli_mcp
    from . import runs as cli_runs
    from . import sandbox as cli_sandbox
    from . import serve as cli_web

    return [
        demo.register,
        cli_runs.register,
        chat.register,
        cli_mcp.register,
        cli_web.register,
        cli_audit.register,
        cli_keys.register,
        cli_hooks.register,
        cli_board.register,
        cli_sandbox.register,
    ]


def _log_to_stderr() -> None:
    """Warnings of long-running commands (webhook retries, claims) on stderr; more with
    SIGNOFF_LOG_LEVEL=INFO or DEBUG."""
    import logging

    level = os.environ.get("SIGNOFF_LOG_LEVEL", "WARNING").upper()
    # signoff's own loggers only: a library's retries (psycopg's pool) are already told
    # to the user as one clear error when they fail.
    logger = logging.getLogger("signoff")
    if not logger.handlers:
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("signoff %(levelname)s %(name)s: %(message)s"))
        logger.addHandler(handler)
        logger.propagate = False
    logger.setLevel(level if level in logging.getLevelNamesMapping() else "WARNING")


def _is_check(argv: Sequence[str]) -> bool:
    """Whether the command is `check`: its first word (no option comes before a command)."""
    return bool(argv) and argv[0] == "check"


# `check`'s options by name: those that take a value, and the flags (see `_plain_check`)
_CHECK_VALUES = {
    "--tool": "tool",
    "--args": "args",
    "--shell": "shell",
    "--shell-file": "shell_file",
    "--workspace": "workspace",
    "--cwd": "cwd",
    "--mode": "mode",
}
_CHECK_FLAGS = {"--no-user-settings": "no_user_settings", "--json": "json"}


def _plain_check(words: Sequence[str]) -> argparse.Namespace | None:
    """`check` with its own options spelt out in full, read without building the parser
    (with gettext's file lookups and shutil, ~3 ms of the hook's fresh process).

    Only the plain forms: `--opt value`, `--opt=value` and the flags, each at most once.
    Anything else (an abbreviation, `-h`, a value that starts with "-", an unknown mode, a
    repeated option, a word that is no option) returns None and argparse parses it, or
    refuses it with its usual message. `tests/test_startup.py` holds both readings equal.
    """
    if words[:1] != ["check"]:
        return None
    found: dict[str, Any] = {}
    at = 1
    while at < len(words):
        name, equals, value = words[at].partition("=")
        if name in _CHECK_FLAGS and not equals and _CHECK_FLAGS[name] not in found:
            found[_CHECK_FLAGS[name]] = True
        elif name in _CHECK_VALUES and _CHECK_VALUES[name] not in found:
            if not equals:
                at += 1
                if at == len(words) or words[at].startswith("-"):
                    return None
                value = words[at]
            found[_CHECK_VALUES[name]] = value
        else:
            return None
        at += 1
    if found.get("mode") not in (None, *MODES):
        return None
    defaults = dict.fromkeys(_CHECK_VALUES.values()) | dict.fromkeys(_CHECK_FLAGS.values(), False)
    return argparse.Namespace(
        command="check", **(defaults | {"workspace": "."} | found), func=cmd_check
    )


def main(argv: Sequence[str] | None = None) -> int:
    # `check` runs once per tool call in a hook: its parser does not import the modules
    # of the other commands (chat, web, runs, audit, demo), which it never uses
    words = sys.argv[1:] if argv is None else list(argv)
    if words and words[0] == "hook":  # a coding agent's hook: no parser of the rest
        from .hooks import run_hook

        return run_hook(words[1:])
    args = _plain_check(words)
    if args is None:
        parser = build_parser(only_check=_is_check(words))
        args = parser.parse_args(argv)
        if not getattr(args, "func", None):
            parser.print_help()
            return 0
    if not _is_check(words):  # a hook's `check` logs nothing: no need to load logging
        _log_to_stderr()
    try:
        return int(args.func(args))
    except SignoffError as exc:
        sys.stderr.write(f"signoff: {escape_untrusted(str(exc))}\n")
        return 2
    except OSError as exc:
        if exc.filename is None:
            raise  # not about a file the user named: a bug to see whole
        sys.stderr.write(f"signoff: {exc.filename}: {exc.strerror or exc}\n")
        return 2
    except KeyboardInterrupt:
        sys.stderr.write("signoff: interrupted\n")
        return 130


__all__ = ["build_parser", "explain", "main", "verdict_json"]
