"""`signoff hook`, `signoff install`, `signoff uninstall`: signoff in front of a coding
agent (see docs/coding-agents.md). `hook` runs once per tool call: `main` sends it here
before building the full parser, and it imports only what judging needs."""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # not typing's: see signoff/__init__.py

if TYPE_CHECKING:
    import argparse
    from collections.abc import Sequence
    from typing import Any

CLIENTS = ("claude-code", "codex", "gemini", "cursor")
ASK = ("native", "inbox", "defer")


def _hook_parser(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    parser.add_argument("client", choices=CLIENTS, help="the coding agent that runs the hook")
    parser.add_argument(
        "--workspace",
        default=None,
        help="the project (default: $CLAUDE_PROJECT_DIR, else the session's cwd)",
    )
    parser.add_argument("--ask", choices=ASK, default=None, help="override [hooks] ask")
    parser.add_argument(
        "--deadline",
        type=float,
        default=None,
        help="seconds after which the hook blocks the call itself (shorter than the "
        "client's timeout: Codex and Gemini let a call through when a hook times out)",
    )
    return parser


# the hook's options by name, each taking a value (see `plain_hook`)
_HOOK_VALUES = {"--workspace": "workspace", "--ask": "ask", "--deadline": "deadline"}


def plain_hook(argv: Sequence[str]) -> dict[str, Any] | None:
    """The hook's arguments spelt out in full, read without argparse (which, with gettext
    and shutil, is a tenth of the hook's start-up): the client and `--opt value` or
    `--opt=value`, each at most once. Anything else (an abbreviation, `-h`, a value that
    starts with "-", an unknown client or strategy, a repeat, a stray word) returns None
    and argparse reads it, or refuses it. `tests/test_startup.py` holds both readings equal.
    """
    found: dict[str, Any] = {}
    at = 0
    while at < len(argv):
        word = argv[at]
        name, equals, value = word.partition("=")
        if name in _HOOK_VALUES and _HOOK_VALUES[name] not in found:
            if not equals:
                at += 1
                if at == len(argv) or argv[at].startswith("-"):
                    return None
                value = argv[at]
            found[_HOOK_VALUES[name]] = value
        elif not word.startswith("-") and "client" not in found:
            found["client"] = word
        else:
            return None
        at += 1
    if found.get("client") not in CLIENTS or found.get("ask") not in (None, *ASK):
        return None
    if "deadline" in found:
        try:
            found["deadline"] = float(found["deadline"])
        except ValueError:
            return None  # argparse says what is wrong
    return {"workspace": None, "ask": None, "deadline": None} | found


def run_hook(argv: Sequence[str], *, process_ends: bool = False) -> int:
    """The hook itself: every failure, even of its own arguments, blocks (exit 2).
    `process_ends`: `cli.main` ends the process with os._exit once this returns."""
    try:
        return _run_hook(argv, process_ends=process_ends)
    except BaseException as exc:  # whatever escaped: the client's own block, no traceback
        return hook_failed(argv, exc)


def hook_failed(argv: Sequence[str], exc: BaseException) -> int:
    """What a hook that failed outside every judged path answers: its client's block for
    an event it could not read (Cursor: a JSON deny and exit 2; the others: exit 2 with
    the reason on stderr). It imports nothing that could fail in turn."""
    detail = str(exc) if not isinstance(exc, RecursionError) else "input nested too deeply"
    detail = (detail or type(exc).__name__).encode("ascii", "backslashreplace").decode()[:2000]
    reason = "".join(c if c.isprintable() else " " for c in detail)
    reason = f"signoff: the hook failed ({type(exc).__name__}: {reason}); the call is blocked"
    try:
        args = plain_hook(argv)
        client = args["client"] if args else next(iter(argv), "")
        if client == "cursor":
            deny = {"permission": "deny", "user_message": reason, "agent_message": reason}
            import json

            sys.stdout.write(json.dumps(deny) + "\n")
            sys.stdout.flush()
        sys.stderr.write(reason + "\n")
        sys.stderr.flush()
    except BaseException:  # nowhere left to say it: exit 2 still blocks
        pass
    return 2


def _run_hook(argv: Sequence[str], *, process_ends: bool) -> int:
    args = plain_hook(argv)
    if args is None:
        import argparse

        parser = _hook_parser(argparse.ArgumentParser(prog="signoff hook", exit_on_error=False))
        try:
            args = vars(parser.parse_args(list(argv)))
        except (argparse.ArgumentError, SystemExit) as exc:
            sys.stderr.write(f"signoff hook: bad arguments ({exc}); the call is blocked\n")
            return 2
    if args["client"] == "claude-code":
        from ..adapters import claude_code

        return claude_code.main(
            workspace=args["workspace"], ask=args["ask"], process_ends=process_ends
        )
    from ..adapters.shells import main

    return main(
        _shell(args["client"]),
        workspace=args["workspace"],
        ask=args["ask"],
        deadline=args["deadline"],
    )


def _shell(client: str) -> Any:
    if client == "codex":
        from ..adapters import codex

        return codex.SHELL
    if client == "gemini":
        from ..adapters import gemini

        return gemini.SHELL
    from ..adapters import cursor

    return cursor.SHELL


def cmd_install(args: argparse.Namespace) -> int:
    if args.client != "claude-code":
        from ..adapters import install_clients

        report = install_clients.install(
            args.client, args.workspace, ask=args.ask, user=args.user, program=args.program
        )
        for line in report.lines:
            print(line)
        for line in report.warnings:
            sys.stderr.write(f"signoff: warning: {line}\n")
        return 0
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
        db=args.db,
    )
    for line in report.lines:
        print(line)
    for line in report.warnings:
        sys.stderr.write(f"signoff: warning: {line}\n")
    return 0


def cmd_uninstall(args: argparse.Namespace) -> int:
    if args.client != "claude-code":
        from ..adapters import install_clients

        for line in install_clients.uninstall(args.client, args.workspace, user=args.user).lines:
            print(line)
        return 0
    from ..adapters.install import uninstall

    for line in uninstall(args.workspace, user=args.user).lines:
        print(line)
    return 0


def register(sub: Any) -> None:
    from ._output import command

    hook = command(
        sub,
        "hook",
        help="answer one coding-agent hook event (JSON on stdin, JSON on stdout)",
        description="Judge one tool call a coding agent is about to make and answer in the "
        "client's hook format. The client runs this once per tool call (`signoff install` "
        "writes the command); any failure blocks the call (exit 2).",
        examples=("signoff hook claude-code --ask inbox",),
    )
    _hook_parser(hook)
    hook.set_defaults(func=lambda args: run_hook(sys.argv[2:]))

    install = command(
        sub,
        "install",
        help="put signoff's hooks into a coding agent's settings",
        description="Write signoff's hooks into the client's settings (keeping what is "
        "there, with a backup), set the client to block a call when the hook fails, and "
        "import its permission rules into .signoff/settings.toml.",
        examples=(
            "signoff install claude-code",
            "signoff install claude-code --ask inbox --user",
            "signoff install codex --user",
            "signoff install gemini --ask native",
        ),
    )
    install.add_argument("client", choices=CLIENTS, help="the coding agent")
    install.add_argument(
        "--ask",
        choices=ASK,
        default=None,
        help="how an ask is put to a person: native (the client's dialog), inbox (a "
        "signoff request; the hook waits for the decision), defer (headless runs, resumed "
        "by signoff worker); default: [hooks] ask in the settings, else native; codex and "
        "cursor: inbox only (their hooks cannot ask), gemini: inbox (default) or native",
    )
    install.add_argument(
        "--user",
        action="store_true",
        help="write the user's settings (~/.claude/settings.json, $CODEX_HOME/hooks.json, "
        "~/.gemini/settings.json, ~/.cursor/hooks.json) instead of the project's",
    )
    install.add_argument(
        "--http",
        action="store_true",
        help="the hooks post to a running `signoff serve` instead of starting a process",
    )
    install.add_argument(
        "--url",
        default="http://127.0.0.1:8765/hooks/claude-code",
        help="where `--http` hooks post (default: http://127.0.0.1:8765/hooks/claude-code)",
    )
    install.add_argument(
        "--db",
        default=None,
        help="with --http: the store `signoff serve` reads, where the hook's credential is "
        "made (default: $SIGNOFF_DB, else .signoff/signoff.db in the workspace)",
    )
    install.add_argument(
        "--command",
        default=None,
        help="the hook command to write (default: this signoff, as `python -P -m signoff`)",
    )
    install.add_argument(
        "--claude",
        default="claude",
        help="the client's program, run to check its version (default: claude)",
    )
    install.add_argument(
        "--program",
        default=None,
        help="codex, gemini: the client's program, run to check its version (Codex is also "
        "asked to list and trust the hooks); default: codex, gemini",
    )
    install.add_argument(
        "--no-import",
        action="store_true",
        help="do not import the client's permission rules (default: import them)",
    )
    install.add_argument("--workspace", default=".", help="the project (default: .)")
    install.set_defaults(func=cmd_install)

    uninstall = command(
        sub,
        "uninstall",
        help="remove exactly what install added",
        description="Take out of the client's settings exactly what `signoff install` "
        "added; everything else stays.",
        examples=("signoff uninstall claude-code",),
    )
    uninstall.add_argument("client", choices=CLIENTS, help="the coding agent")
    uninstall.add_argument(
        "--user", action="store_true", help="the user's settings, as installed with --user"
    )
    uninstall.add_argument("--workspace", default=".", help="the project (default: .)")
    uninstall.set_defaults(func=cmd_uninstall)


__all__ = ["plain_hook", "register", "run_hook"]
