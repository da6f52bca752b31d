"""CLI: `signoff tasks` (add, list, show, claim, done, release, renew) and `signoff mail`
(send, read, ack): the task board and mailboxes of a team of agents (docs/board.md).

Who acts is `--agent NAME` (or $SIGNOFF_AGENT); a claim's token is printed once and proves
ownership to `done`, `release` and `renew` (--token, or $SIGNOFF_TASK_TOKEN). Everything
stored was written by some agent, so it is printed escaped: nothing in it reaches the
terminal as a control sequence, a one-line value (a name, a title) stays on its line, and
a message's text is a block indented under its header, every line of it (those the
terminal would wrap too), so no text can print a line that looks like a header.
"""

from __future__ import annotations

import argparse
import json
import os
from contextlib import closing
from typing import Any

from ..escape import escape_untrusted
from ..exceptions import InvalidInput
from ..times import when
from ._output import console, plain_table, print_json, store_for

STATES = ("open", "claimed", "done")


def _board(args: argparse.Namespace, *, creates: bool = False) -> Any:
    """The board in the store the command names. Only `tasks add` and `mail send` may
    create a store; the rest read or act on what is there, so a mistyped --workspace is
    refused instead of answering from an empty new store."""
    from ..board import Board

    return Board(store_for(args, existing=not creates), owns_store=True)


def _agent(args: argparse.Namespace) -> str:
    agent = args.agent or os.environ.get("SIGNOFF_AGENT")
    if not agent:
        raise InvalidInput("who is acting? give --agent NAME (or set $SIGNOFF_AGENT)")
    return str(agent)


def _token(args: argparse.Namespace) -> str:
    token = args.token or os.environ.get("SIGNOFF_TASK_TOKEN")
    if not token:
        raise InvalidInput(
            "give the claim's token: --token TOKEN (or $SIGNOFF_TASK_TOKEN), as claim printed it"
        )
    return str(token)


def _e(value: object) -> str:
    """A one-line value, escaped: a newline or a tab in it is shown as `\\n`, `\\t`."""
    return escape_untrusted("" if value is None else str(value), newline=False, tab=False)


def _body(text: str) -> Any:
    """A message's text under its header: indented, every line (wrapped here to the
    width, so the terminal never wraps a line back to the first column), escaped."""
    from rich.padding import Padding
    from rich.text import Text

    lines = (escape_untrusted(line, newline=False, tab=False) for line in text.split("\n"))
    return Padding(Text("\n".join(lines), overflow="fold"), (0, 0, 0, 2))


def _say_task(task: Any, headline: str) -> None:
    out = console()
    out.print(f"{headline}: {_e(task.id)} (version {task.version}, {task.state})")
    out.print(f"  title: {_e(task.title)}")
    if task.depends_on:
        out.print(f"  depends on: {', '.join(_e(d) for d in task.depends_on)}")
    if task.owner:
        out.print(f"  {'owner' if task.state == 'claimed' else 'done by'}: {_e(task.owner)}")
    if task.state == "claimed":
        out.print(f"  lease until: {when(task.lease_expires_at)}")
    if task.result is not None:
        out.print(f"  result: {_e(json.dumps(task.result, ensure_ascii=False))}")


# ------------------------------------------------------------------ tasks


def cmd_tasks_add(args: argparse.Namespace) -> int:
    with closing(_board(args, creates=True)) as board:
        agent = args.agent or os.environ.get("SIGNOFF_AGENT")
        task = board.add_task(args.title, id=args.id, depends_on=args.depends_on, agent=agent)
    if args.json:
        print_json(task.to_json())
    else:
        _say_task(task, "Added task")
    return 0


def cmd_tasks_list(args: argparse.Namespace) -> int:
    with closing(_board(args)) as board:
        board.sweep_tasks()  # a lapsed lease shows as open, and is on the record
        tasks = board.list_tasks(state=args.state, limit=args.limit)
    if args.json:
        print_json([t.to_json() for t in tasks])
        return 0
    if not tasks:
        console().print("No tasks" + (f" {args.state}." if args.state else " yet."))
        return 0
    table = plain_table("ID", "STATE", "VERSION", "OWNER", "DEPENDS ON", "TITLE")
    for t in tasks:
        table.add_row(
            _e(t.id),
            t.state,
            str(t.version),
            _e(t.owner or ""),
            ", ".join(_e(d) for d in t.depends_on),
            _e(t.title),
        )
    console().print(table)
    return 0


def cmd_tasks_show(args: argparse.Namespace) -> int:
    with closing(_board(args)) as board:
        task = board.get_task(args.id)
    if args.json:
        print_json(task.to_json())
    else:
        _say_task(task, "Task")
    return 0


def cmd_tasks_claim(args: argparse.Namespace) -> int:
    with closing(_board(args)) as board:
        claim = board.claim_task(
            args.id, agent=_agent(args), version=args.version, lease_seconds=args.lease
        )
    if args.json:
        print_json(claim.task.to_json() | {"token": claim.token})
        return 0
    _say_task(claim.task, "Claimed task")
    console().print(f"  token: {claim.token}  (shown once: done, release and renew need it)")
    return 0


def cmd_tasks_done(args: argparse.Namespace) -> int:
    result = None
    if args.result is not None:
        try:
            result = json.loads(args.result)
        except ValueError as exc:
            raise InvalidInput(f"--result is not JSON: {exc}") from None
    with closing(_board(args)) as board:
        task = board.complete_task(
            args.id, agent=_agent(args), token=_token(args), result=result, version=args.version
        )
    if args.json:
        print_json(task.to_json())
    else:
        _say_task(task, "Completed task")
    return 0


def cmd_tasks_release(args: argparse.Namespace) -> int:
    with closing(_board(args)) as board:
        task = board.release_task(
            args.id, agent=_agent(args), token=_token(args), version=args.version
        )
    if args.json:
        print_json(task.to_json())
    else:
        _say_task(task, "Released task")
    return 0


def cmd_tasks_renew(args: argparse.Namespace) -> int:
    with closing(_board(args)) as board:
        task = board.renew_task(
            args.id, agent=_agent(args), token=_token(args), lease_seconds=args.lease
        )
    if args.json:
        print_json(task.to_json())
    else:
        _say_task(task, "Renewed the lease on task")
    return 0


# ------------------------------------------------------------------ mail


def cmd_mail_send(args: argparse.Namespace) -> int:
    if (args.to is None) == (not args.all):
        raise InvalidInput("say who the message is for: --to NAME, or --all for every agent")
    with closing(_board(args, creates=True)) as board:
        mail = board.send(_agent(args), args.body, to=args.to)
    if args.json:
        print_json(mail.to_json())
    else:
        console().print(f"Sent message {mail.seq} to {_e(mail.to) if mail.to else 'everyone'}.")
    return 0


def cmd_mail_read(args: argparse.Namespace) -> int:
    with closing(_board(args)) as board:
        batch = board.read(_agent(args), limit=args.limit)
    if args.json:
        print_json(batch.to_json())
        return 0
    out = console()
    if not batch.messages:
        out.print("No new messages.")
        return 0
    for m in batch.messages:
        to = "everyone" if m.to is None else _e(m.to)
        out.print(f"[{m.seq}] {when(m.sent_at)} from {_e(m.sender)} to {to}:")
        out.print(_body(m.body), soft_wrap=False)
    out.print(
        f"Acknowledge with: signoff mail ack --agent {_e(batch.agent)} --through {batch.through}"
        " (until then, read returns these again)"
    )
    return 0


def cmd_mail_ack(args: argparse.Namespace) -> int:
    with closing(_board(args)) as board:
        agent = _agent(args)
        position = board.ack(agent, args.through)
    if args.json:
        print_json({"agent": agent, "position": position})
    else:
        console().print(f"{_e(agent)}'s mailbox is read through message {position}.")
    return 0


# ------------------------------------------------------------------ parsers

FORMAT = argparse.RawDescriptionHelpFormatter


def _common(p: argparse.ArgumentParser, *, agent: str | None) -> None:
    p.add_argument(
        "--db",
        default=None,
        help="store URL (default: $SIGNOFF_DB, else .signoff/signoff.db in the workspace), "
        "e.g. postgresql://team@db/signoff",
    )
    p.add_argument(
        "--workspace", default=".", help="workspace root (default: .), e.g. --workspace ~/proj"
    )
    p.add_argument("--json", action="store_true", help="print one JSON object, e.g. for jq")
    if agent is not None:
        p.add_argument("--agent", metavar="NAME", help=agent)


def _version(p: argparse.ArgumentParser, *, required: bool, help: str) -> None:
    p.add_argument("--version", type=int, required=required, metavar="N", help=help)


def _owner(p: argparse.ArgumentParser) -> None:
    p.add_argument("id", help="the task's id, e.g. design")
    p.add_argument(
        "--token",
        help="the token claim printed (or $SIGNOFF_TASK_TOKEN), e.g. --token Vq3…",
    )


def _sub(actions: Any, name: str, func: Any, help: str, example: str) -> argparse.ArgumentParser:
    p: argparse.ArgumentParser = actions.add_parser(
        name, help=help, description=help, epilog=f"example:\n  {example}", formatter_class=FORMAT
    )
    p.set_defaults(func=func)
    return p


AGENT = "who is acting (default: $SIGNOFF_AGENT), e.g. --agent writer-1"


def register(sub: Any) -> None:
    tasks: argparse.ArgumentParser = sub.add_parser(
        "tasks",
        help="the task board: tasks with dependencies, claimed by one agent at a time",
        description="The task board (docs/board.md).",
        epilog="example:\n  signoff tasks add 'Write the tests' --id tests --depends-on design",
        formatter_class=FORMAT,
    )
    actions = tasks.add_subparsers(dest="tasks_command", metavar="ACTION", required=True)

    p = _sub(
        actions, "add", cmd_tasks_add, "add an open task", "signoff tasks add 'Design' --id design"
    )
    p.add_argument("title", help="what is to be done, e.g. 'Write the tests'")
    p.add_argument("--id", help="the task's id (default: a new one), e.g. --id tests")
    p.add_argument(
        "--depends-on",
        action="append",
        default=[],
        metavar="ID",
        help="a task that must be done before this one can be claimed (repeat for more; "
        "default: none), e.g. --depends-on design",
    )
    _common(p, agent="who adds it, for the record (default: $SIGNOFF_AGENT), e.g. --agent lead")

    p = _sub(
        actions,
        "list",
        cmd_tasks_list,
        "list tasks (lapsed leases freed first)",
        "signoff tasks list --state open --json",
    )
    p.add_argument("--state", choices=STATES, help="only tasks in this state, e.g. --state open")
    p.add_argument(
        "--limit", type=int, default=1000, help="at most this many (default: 1000), e.g. --limit 50"
    )
    _common(p, agent=None)

    p = _sub(actions, "show", cmd_tasks_show, "one task in full", "signoff tasks show design")
    p.add_argument("id", help="the task's id, e.g. design")
    _common(p, agent=None)

    p = _sub(
        actions,
        "claim",
        cmd_tasks_claim,
        "take a task at the version you read; prints its token once",
        "signoff tasks claim design --agent writer-1 --version 1",
    )
    p.add_argument("id", help="the task's id, e.g. design")
    _version(p, required=True, help="the version you read (list or show), e.g. --version 1")
    p.add_argument(
        "--lease",
        type=float,
        default=300.0,
        metavar="SECONDS",
        help="free the task if not done or renewed within this (default: 300), e.g. --lease 600",
    )
    _common(p, agent=AGENT)

    p = _sub(
        actions,
        "done",
        cmd_tasks_done,
        "report your claimed task done",
        "signoff tasks done design --agent writer-1 --token TOKEN --result '{\"pr\": 12}'",
    )
    _owner(p)
    p.add_argument("--result", metavar="JSON", help="what came of it, e.g. --result '{\"pr\": 12}'")
    _version(p, required=False, help="refuse if the task is not at this version, e.g. 2")
    _common(p, agent=AGENT)

    p = _sub(
        actions,
        "release",
        cmd_tasks_release,
        "give your claimed task back (open again)",
        "signoff tasks release design --agent writer-1 --token TOKEN",
    )
    _owner(p)
    _version(p, required=False, help="refuse if the task is not at this version, e.g. 2")
    _common(p, agent=AGENT)

    p = _sub(
        actions,
        "renew",
        cmd_tasks_renew,
        "extend the lease on your claimed task",
        "signoff tasks renew design --agent writer-1 --token TOKEN --lease 600",
    )
    _owner(p)
    p.add_argument(
        "--lease",
        type=float,
        default=None,
        metavar="SECONDS",
        help="from now (default: as claimed), e.g. --lease 600",
    )
    _common(p, agent=AGENT)

    mail: argparse.ArgumentParser = sub.add_parser(
        "mail",
        help="mailboxes: messages to one agent or all, read until acknowledged",
        description="Mailboxes (docs/board.md).",
        epilog="example:\n  signoff mail send 'design is done' --agent writer-1 --to reviewer",
        formatter_class=FORMAT,
    )
    verbs = mail.add_subparsers(dest="mail_command", metavar="ACTION", required=True)
    p = _sub(
        verbs,
        "send",
        cmd_mail_send,
        "send a message to one agent (--to) or to all (--all)",
        "signoff mail send 'design is done' --agent writer-1 --all",
    )
    p.add_argument("body", help="the message, e.g. 'design is done'")
    p.add_argument("--to", metavar="NAME", help="the one agent it is for, e.g. --to reviewer")
    p.add_argument("--all", action="store_true", help="for every other agent, e.g. --all")
    _common(p, agent="who sends it (default: $SIGNOFF_AGENT), e.g. --agent writer-1")

    p = _sub(
        verbs,
        "read",
        cmd_mail_read,
        "your unacknowledged messages (the same ones until you ack)",
        "signoff mail read --agent reviewer --json",
    )
    p.add_argument(
        "--limit", type=int, default=100, help="at most this many (default: 100), e.g. --limit 10"
    )
    _common(p, agent="whose mailbox (default: $SIGNOFF_AGENT), e.g. --agent reviewer")

    p = _sub(
        verbs,
        "ack",
        cmd_mail_ack,
        "acknowledge your messages through a batch's last one",
        "signoff mail ack --agent reviewer --through 7",
    )
    p.add_argument(
        "--through",
        type=int,
        required=True,
        metavar="SEQ",
        help="the batch's `through` (read prints it), e.g. --through 7",
    )
    _common(p, agent="whose mailbox (default: $SIGNOFF_AGENT), e.g. --agent reviewer")


__all__ = ["register"]
