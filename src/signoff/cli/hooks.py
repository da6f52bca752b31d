"""`signoff hook`, `signoff install`, `signoff uninstall`: signoff in front of a coding
agent (see docs/coding-agents.md). `hook` runs once per tool call: `main` sends it here
before building the full parser, and it imports only what judging needs."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any

CLIENTS = ("claude-code",)
ASK = ("native", "inbox", "defer")


def _hook_parser(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    parser.add_argument("client", choices=CLIENTS)
    parser.add_argument(
        "--workspace",
        default=None,
        help="the project (default: $CLAUDE_PROJECT_DIR, else the session's cwd)",
    )
    parser.add_argument("--ask", choices=ASK, default=None, help="override [hooks] ask")
    return parser


def run_hook(argv: Sequence[str]) -> int:
    """The hook itself: every failure, even of its own arguments, blocks (exit 2)."""
    parser = _hook_parser(argparse.ArgumentParser(prog="signoff hook", exit_on_error=False))
    try:
        args = parser.parse_args(list(argv))
    except (argparse.ArgumentError, SystemExit) as exc:
        sys.stderr.write(f"signoff hook: bad arguments ({exc}); the call is blocked\n")
        return 2
    from ..adapters import claude_code

    return claude_code.main(workspace=args.workspace, ask=args.ask)


def cmd_install(args: argparse.Namespace) -> int:
    from ..adapters.install import install

    report = install(
        args.workspace,
        ask=args.ask,
        user=args.user,
        http=args.http,
        url=args.url,
        command=args.command,
        claude=args.claude,
        import_rules=not args.no_import,
    )
    for line in report.lines:
        print(line)
    for line in report.warnings:
        sys.stderr.write(f"signoff: warning: {line}\n")
    return 0


def cmd_uninstall(args: argparse.Namespace) -> int:
    from ..adapters.install import uninstall

    for line in uninstall(args.workspace, user=args.user).lines:
        print(line)
    return 0


def register(sub: Any) -> None:
    hook = sub.add_parser(
        "hook", help="answer one coding-agent hook event (JSON on stdin, JSON on stdout)"
    )
    _hook_parser(hook)
    hook.set_defaults(func=lambda args: run_hook(sys.argv[2:]))

    install = sub.add_parser("install", help="put signoff's hooks into a coding agent's settings")
    install.add_argument("client", choices=CLIENTS)
    install.add_argument("--ask", choices=ASK, default=None, help="how an ask is put to a person")
    install.add_argument("--user", action="store_true", help="~/.claude/settings.json")
    install.add_argument("--http", action="store_true", help="hooks post to `signoff serve`")
    install.add_argument("--url", default="http://127.0.0.1:8765/hooks/claude-code")
    install.add_argument("--command", default=None, help="the hook command (default: this signoff)")
    install.add_argument("--claude", default="claude", help="the client, to check its version")
    install.add_argument("--no-import", action="store_true", help="do not import its rules")
    install.add_argument("--workspace", default=".", help="the project (default: .)")
    install.set_defaults(func=cmd_install)

    uninstall = sub.add_parser("uninstall", help="remove exactly what install added")
    uninstall.add_argument("client", choices=CLIENTS)
    uninstall.add_argument("--user", action="store_true")
    uninstall.add_argument("--workspace", default=".")
    uninstall.set_defaults(func=cmd_uninstall)


__all__ = ["register", "run_hook"]
