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
from typing import TYPE_CHECKING, Any

from ..channels.escape import escape_untrusted, safe_json
from ..exceptions import InvalidInput, SignoffError
from ..models import ToolCall, Verdict
from ..settings import MODES, load_settings
from ._output import console, print_json

if TYPE_CHECKING:
    from rich.console import Console

    from ..policy import Policy

Command = Callable[[argparse.Namespace], int]
_COMMANDS: dict[str, Command] = {}

_EFFECT_STYLE = {"allow": "green", "notify": "cyan", "ask": "yellow", "deny": "bold red"}


# ------------------------------------------------------------------ check


def verdict_json(verdict: Verdict) -> dict[str, Any]:
    doc = verdict.to_json()
    doc["verdict"] = doc.pop("effect")
    return doc


def _policy(args: argparse.Namespace) -> Policy:
    from ..policy import Policy

    workspace = os.path.abspath(args.workspace)
    settings = load_settings(workspace, user=not args.no_user_settings)
    return Policy(settings, workspace=workspace, mode=args.mode)


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
    policy = _policy(args)
    if args.shell_file:
        out = sys.stdout
        for number, command, error in _shell_lines(args.shell_file):
            if error is not None:
                out.write(safe_json({"line": number, "error": error}) + "\n")
                continue
            assert command is not None
            verdict = policy.evaluate(ToolCall("execute_command", {"command": command}))
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
    verdict = policy.evaluate(call)
    if args.json:
        print_json(verdict_json(verdict))
    else:
        explain(call, verdict, policy)
    return 0


_CLASS_ORDER = ("read_only", "reversible_write", "destructive", "network", "privilege", "opaque")


def _class_rank(cls: str) -> int:
    return _CLASS_ORDER.index(cls) if cls in _CLASS_ORDER else len(_CLASS_ORDER)


def explain(call: ToolCall, verdict: Verdict, policy: Policy, out: Console | None = None) -> None:
    from rich.table import Table
    from rich.text import Text

    out = out or console()
    style = _EFFECT_STYLE[verdict.effect]
    head = Text()
    head.append(f"{verdict.effect.upper()}", style=style)
    # A shell command is judged by what it does, not by the shell tool's tier (`ls -la`
    # is not "destructive" because execute_command can be): show its worst class.
    kind = (
        f"class {max((p.cls for p in verdict.parts), key=_class_rank)}"
        if verdict.parts
        else f"tier {verdict.tier}"
    )
    head.append(f"  {escape_untrusted(call.name)}  risk {verdict.risk}  {kind}")
    out.print(head)
    if verdict.parts:
        table = Table(show_header=True, header_style="bold", box=None, pad_edge=False)
        for column in ("command", "class", "effect", "why"):
            table.add_column(column)
        for part in verdict.parts:
            table.add_row(
                escape_untrusted(part.command, newline=False),
                part.cls,
                Text(part.effect, style=_EFFECT_STYLE[part.effect]),
                escape_untrusted("; ".join(part.reasons) or "-"),
            )
        out.print(table)
    out.print(f"rule: {verdict.rule or '(defaults)'}")
    for reason in verdict.reasons:
        out.print(f"  - {escape_untrusted(reason)}")
    if verdict.suggested_rule:
        out.print(f"always-allow would save: {escape_untrusted(verdict.suggested_rule)}")
    out.print(f"mode: {policy.mode}   workspace: {policy.workspace}")


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

    check = sub.add_parser("check", help="explain the verdict for one call or shell command")
    check.add_argument("--tool", help="tool name, e.g. write_file or Bash")
    check.add_argument("--args", help="the call's arguments as a JSON object")
    check.add_argument("--shell", metavar="CMD", help="judge a shell command")
    check.add_argument(
        "--shell-file", metavar="FILE", help="JSON Lines of commands ('-' for stdin)"
    )
    check.add_argument("--workspace", default=".", help="workspace root (default: .)")
    check.add_argument("--mode", choices=MODES, default=None)
    check.add_argument("--no-user-settings", action="store_true", help="ignore ~/.config")
    check.add_argument("--json", action="store_true", help="print one JSON object")
    check.set_defaults(func=cmd_check)
    if only_check:
        return parser
    for register in _registrars():
        register(sub)
    return parser


def _registrars() -> list[Callable[[Any], None]]:
    from . import audit as cli_audit
    from . import chat, demo
    from . import hooks as cli_hooks
    from . import keys as cli_keys
    from . import mcp as cli_mcp
    from . import runs as cli_runs
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


def main(argv: Sequence[str] | None = None) -> int:
    # `check` runs once per tool call in a hook: its parser does not import the modules
    # of the other commands (chat, web, runs, audit, demo), which it never uses
    words = sys.argv[1:] if argv is None else list(argv)
    if words and words[0] == "hook":  # a coding agent's hook: no parser of the rest
        from .hooks import run_hook

        return run_hook(words[1:])
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
