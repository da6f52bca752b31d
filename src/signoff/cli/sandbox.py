"""CLI: `signoff sandbox -- COMMAND` runs a command contained, as the policy would;
`signoff doctor` says whether containment works here and, if not, why.

A coding client runs `signoff sandbox` once per contained command, so `cli.main` sends it
here without building the parser of the other commands.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from ..escape import escape_untrusted
from ._output import HelpFormatter, command, print_json

SANDBOX_HELP = "run a command contained: no network, writes land in the workspace only"
SANDBOX_DESCRIPTION = (
    "Run COMMAND as the policy runs a contained command: no network (its own loopback "
    "only), the workspace writable (its changes land when it ends; signoff's state, git's "
    "hooks and config and the coding clients' settings never change), everything else "
    "read-only, the home folder's credentials hidden, secret-named variables removed, "
    "every process it starts ended with it, processes and memory limited. Exits with "
    "COMMAND's exit code; 125 when no sandbox can be made (COMMAND did not run)."
)
SANDBOX_EXAMPLES = (
    "signoff sandbox -- python -m pytest -q",
    "signoff sandbox --workspace ~/src/app -- bash -c 'make && ./app --selftest'",
)


def _sandbox_parser(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    parser.add_argument(
        "--workspace", default=".", help="the folder the command may change (default: .)"
    )
    parser.add_argument(
        "--cwd", default=None, help="where the command starts (default: here, if inside)"
    )
    parser.add_argument(
        "--home",
        default=None,
        help="a home folder whose credentials to hide too (the user's and $HOME always are)",
    )
    parser.add_argument(
        "--report",
        metavar="FILE",
        default=None,
        help="write the outcome (exit code, changes, what was blocked) as JSON to FILE",
    )
    parser.add_argument(
        "--backup",
        metavar="DIR",
        default=None,
        help="keep what the changes replace or delete in DIR (for a review that can revert)",
    )
    parser.add_argument(
        "argv",
        nargs=argparse.REMAINDER,
        metavar="-- COMMAND [ARGS...]",
        help="the command to run contained, after --",
    )
    return parser


def main_sandbox(words: list[str]) -> int:
    """`signoff sandbox ...` without the rest of the command line's parser."""
    parser = argparse.ArgumentParser(
        prog="signoff sandbox",
        description=SANDBOX_DESCRIPTION,
        epilog="examples:\n" + "\n".join(f"  {e}" for e in SANDBOX_EXAMPLES),
        formatter_class=HelpFormatter,
    )
    return cmd_sandbox(_sandbox_parser(parser).parse_args(words))


def cmd_sandbox(args: argparse.Namespace) -> int:
    from ..exceptions import SignoffError
    from ..sandbox.launch import NOT_STARTED, run

    argv = list(args.argv)
    if argv[:1] == ["--"]:
        argv = argv[1:]
    if not argv:
        sys.stderr.write("signoff sandbox: no command: signoff sandbox -- COMMAND [ARGS...]\n")
        return 2
    try:
        from ..sandbox.denied import denied_paths

        hide = denied_paths(args.workspace)  # a read the policy denies stays denied inside
        outcome = run(
            argv,
            workspace=args.workspace,
            home=args.home,
            cwd=args.cwd,
            backup=args.backup,
            hide=hide,
        )
    except SignoffError as exc:
        sys.stderr.write(
            f"signoff sandbox: {escape_untrusted(str(exc))}; the command did not run\n"
        )
        return NOT_STARTED
    if not outcome.started:
        from ..sandbox.detect import forget

        forget()  # the kept "available" was wrong: the next probe tries again
        sys.stderr.write(
            "signoff sandbox: no sandbox could be made "
            f"({escape_untrusted(outcome.error)}); the command did not run\n"
        )
    elif outcome.blocked:
        sys.stderr.write(blocked_line(outcome.blocked) + "\n")
    if args.report:
        _write_report(args.report, outcome)
    return outcome.exit_code


def blocked_line(blocked: Any) -> str:
    """One line for the agent: what the sandbox stopped, and that a person can run the
    command uncontained."""
    kinds = {
        "write": "a write outside the workspace",
        "network": "a network connection",
        "secret": "a read of hidden credentials",
        "protected": "a change to protected files (not landed)",
        "conflict": "a change to files changed meanwhile (not landed)",
        "special": "a special file (not landed)",
    }
    seen = list(dict.fromkeys(kinds.get(b.kind, b.kind) for b in blocked))
    first = escape_untrusted(blocked[0].detail, newline=False)[:200]
    return (
        f"signoff: the sandbox blocked {', '.join(seen)} ({first}). A person can run the "
        "command uncontained: ask for it and it will be asked."
    )


def _write_report(path: str, outcome: Any) -> None:
    import json

    doc = {
        "exit_code": outcome.exit_code,
        "started": outcome.started,
        "interrupted": outcome.interrupted,
        "changes": [
            {"path": c.path, "action": c.action, "kind": c.kind, "detail": c.detail}
            for c in outcome.changes
        ],
        "blocked": [{"kind": b.kind, "detail": b.detail} for b in outcome.blocked],
        "removed_env": list(outcome.removed_env),
        "error": outcome.error,
        "seconds": round(outcome.seconds, 4),
        "land_seconds": round(outcome.land_seconds, 4),
    }
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(doc, handle, indent=1)


# ---------------------------------------------------------------------- doctor


def cmd_doctor(args: argparse.Namespace) -> int:
    from ..sandbox import probe

    found = probe(refresh=True)
    if args.json:
        print_json(
            {
                "containment": {
                    "available": found.available,
                    "mechanism": found.mechanism,
                    "reason": found.reason,
                }
            }
        )
        return 0 if found.available else 1
    if found.available:
        print(f"containment: available ({found.mechanism})")
        print(
            "  contained commands: no network (own loopback only); writes land in the "
            "workspace only, after the command ends; signoff's state, .git/hooks, "
            ".git/config and the coding clients' settings read-only; the home folder's "
            "credentials hidden; secret-named variables removed; no process outlives the "
            "command; processes and memory limited"
        )
        if os.getuid() == 0:
            print(
                "  note: running as root, the process limit does not hold (the kernel "
                "exempts uid 0 from RLIMIT_NPROC); run the agent as a normal user"
            )
        return 0
    print(f"containment: unavailable: {found.reason}")
    print(
        "  commands that would run contained ask instead, as they do without containment "
        "(nothing runs uncontained)"
    )
    return 1


def register(sub: Any) -> None:
    sandbox = command(
        sub,
        "sandbox",
        help=SANDBOX_HELP,
        description=SANDBOX_DESCRIPTION,
        examples=SANDBOX_EXAMPLES,
    )
    _sandbox_parser(sandbox).set_defaults(func=cmd_sandbox)
    doctor = command(
        sub,
        "doctor",
        help="say whether contained commands can run here, and if not why",
        description="Check that a sandbox can be made here (a trial run) and say what it "
        "contains; exits 1 when it cannot, with the reason.",
        examples=("signoff doctor", "signoff doctor --json"),
    )
    doctor.add_argument("--json", action="store_true", help="print one JSON object")
    doctor.set_defaults(func=cmd_doctor)


__all__ = ["blocked_line", "cmd_doctor", "cmd_sandbox", "main_sandbox", "register"]
