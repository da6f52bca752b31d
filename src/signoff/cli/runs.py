"""CLI commands over the durable store: the inbox, decisions, runs, resume, worker."""

from __future__ import annotations

import argparse
import json
from contextlib import closing
from typing import Any

from rich.text import Text

from ..approvals import decide, what_next
from ..channels.render import escape_untrusted, render_request
from ..deciders import Decider, resolve_decider
from ..exceptions import InvalidInput
from ..models import Decision
from ..present import request_json, requests_json, summary, summary_of
from ..review import review_items
from ..runs.worker import resume_run, work
from ..settings import load_settings
from ..store import default_url
from ..times import age
from ._output import console, plain_table, print_json, store_for

_RISK_STYLE = {
    "none": "green",
    "low": "green",
    "medium": "yellow",
    "high": "red",
    "critical": "bold red",
}


def settings_roles(workspace: str) -> dict[str, list[str]]:
    """Roles of local names, from `[approvers]` in the settings (`alice = ["admin"]`)."""
    table = load_settings(workspace).extra.get("approvers", {})
    if not isinstance(table, dict):
        return {}
    return {
        str(name): [r for r in roles if isinstance(r, str)]
        for name, roles in table.items()
        if isinstance(roles, list)
    }


def decider_for(args: argparse.Namespace, *, need_admin: bool = False) -> Decider:
    """Who decides: the OS user, or `--as NAME` with NAME's credentials (see deciders)."""
    url = getattr(args, "db", None) or default_url(getattr(args, "workspace", "."))
    return resolve_decider(
        str(url),
        getattr(args, "actor", None),
        token_file=getattr(args, "token_file", None),
        settings_roles=settings_roles(args.workspace),
        need_admin=need_admin,
    )


# ------------------------------------------------------------------ read commands


def cmd_inbox(args: argparse.Namespace) -> int:

    with closing(store_for(args)) as store:
        store.expire_stale()
        requests = store.list_requests(state=None if args.all else "pending", limit=args.limit)
        if args.json:
            print_json(requests_json(requests, store))
            return 0
        to_review = [i for i in review_items(store) if not i.reverted]
    out = console()
    if to_review:
        out.print(
            f"{len(to_review)} change(s) ran without asking and wait for review: signoff review"
        )
    if not requests:
        out.print("Inbox empty: nothing waits for a decision.")
        return 0
    table = plain_table("id", "risk", "tool", "what", "run", "age", "state")
    for r in requests:
        table.add_row(
            r.id,
            Text(r.verdict.risk, style=_RISK_STYLE[r.verdict.risk]),
            escape_untrusted(r.call.name),
            escape_untrusted(summary(r), newline=False)[:70],
            r.run_id or "-",
            age(r.created_at),
            r.state,
        )
    out.print(table)
    out.print(
        "Decide with: signoff approve ID | reject ID --reason TEXT | edit ID --args JSON "
        "| skip ID | answer ID TEXT"
    )
    return 0


def cmd_show(args: argparse.Namespace) -> int:

    with closing(store_for(args)) as store:
        request = store.get_request(args.id)
        if args.json:
            print_json(request_json(request, store))
            return 0
        outcome = store.get_outcome(request.id)
    out = console()
    out.print(render_request(request))
    out.print(f"state: {request.state}")
    if request.decision:
        d = request.decision
        out.print(
            f"decided: {d.kind} by {escape_untrusted(d.actor)}"
            + (f": {escape_untrusted(d.reason)}" if d.reason else "")
        )
    if outcome:
        out.print(f"outcome: {'ok' if outcome.get('ok') else 'failed'}")
    return 0


def cmd_runs(args: argparse.Namespace) -> int:

    with closing(store_for(args)) as store:
        runs = store.list_runs(status=args.status, limit=args.limit)
    if args.json:
        print_json([r.to_json() for r in runs])
        return 0
    out = console()
    if not runs:
        out.print("No runs.")
        return 0
    table = plain_table("run", "status", "messages", "waiting on", "updated", "note")
    for run in runs:
        table.add_row(
            run.id,
            run.status,
            str(run.message_count),
            ", ".join(run.waiting_on) or "-",
            age(run.updated_at),
            escape_untrusted(run.note or "", newline=False)[:60],
        )
    out.print(table)
    return 0


# ------------------------------------------------------------------ decisions


def _decide(args: argparse.Namespace, decision: Decision) -> int:
    with closing(store_for(args)) as store:
        decider = decider_for(args)  # after the store exists: its file's owner is known
        actor = decider.actor
        decided = decide(
            store,
            args.id,
            decision,
            actor=actor,
            roles=decider.roles,
            workspace=args.workspace,
        )
    what = escape_untrusted(summary(decided), newline=False)[:100]
    verb = {
        "approve": "Approved",
        "approve_always": "Approved (always)",
        "reject": "Rejected",
        "edit": "Edited",
        "skip": "Skipped",
        "respond": "Answered",
    }[decision.kind]
    name = escape_untrusted(decided.call.name, newline=False)
    print(
        f"{verb} {decided.id} ({name}: {what}) as {escape_untrusted(actor, newline=False)}; "
        f"state {decided.state}."
    )
    if decision.kind == "approve_always" and decided.decision and decided.decision.rule:
        rule = escape_untrusted(decided.decision.rule, newline=False)
        print(f"Saved grant {rule} for the {decision.scope}.")
    print(escape_untrusted(what_next(decided)))
    return 0


def cmd_approve(args: argparse.Namespace) -> int:
    if args.always:
        return _decide(args, Decision("approve_always", scope=args.always, reason=args.reason))
    return _decide(args, Decision("approve", reason=args.reason))


def cmd_reject(args: argparse.Namespace) -> int:
    return _decide(args, Decision("reject", reason=args.reason))


def cmd_edit(args: argparse.Namespace) -> int:
    try:
        arguments = json.loads(args.args)
    except ValueError as exc:
        raise InvalidInput(f"--args is not valid JSON: {exc}") from exc
    if not isinstance(arguments, dict):
        raise InvalidInput("--args must be a JSON object")
    return _decide(args, Decision("edit", arguments=arguments, reason=args.reason))


def cmd_skip(args: argparse.Namespace) -> int:
    return _decide(args, Decision("skip", reason=args.reason))


def cmd_answer(args: argparse.Namespace) -> int:
    return _decide(args, Decision("respond", result=args.text))


def cmd_resolve(args: argparse.Namespace) -> int:
    with closing(store_for(args)) as store:
        actor = decider_for(args).actor
        request = store.resolve_in_doubt(args.id, args.outcome, actor=actor)
    print(f"Resolved {request.id} as {args.outcome}; state {request.state}.")
    return 0


# ------------------------------------------------------------------ runs


def cmd_resume(args: argparse.Namespace) -> int:
    with closing(store_for(args)) as store:
        run = resume_run(store, args.run_id)
    print(f"Run {run.id}: {run.status}.")
    if run.waiting_on:
        print(f"Waiting on: {', '.join(run.waiting_on)} (see `signoff inbox`).")
    if run.note and run.status in ("finished", "needs_attention"):
        print(escape_untrusted(run.note))
    return 0


def cmd_worker(args: argparse.Namespace) -> int:
    from ..adapters.defer import resume_all  # deferred coding-agent sessions, too

    with closing(store_for(args)) as store:
        count = work(store, once=args.once, poll=args.poll, also=resume_all)
    print(f"worker: resumed {count} run(s)")
    return 0


def cmd_review(args: argparse.Namespace) -> int:

    with closing(store_for(args)) as store:
        items = review_items(store)
    if not args.all:
        items = [i for i in items if not i.reverted]
    if args.json:
        print_json(
            [
                {
                    "id": i.id,
                    "seq": i.event.seq,
                    "run_id": i.event.run_id,
                    "call": i.event.data.get("call"),
                    "reverted": i.reverted,
                    "at": i.event.ts,
                }
                for i in items
            ]
        )
        return 0
    out = console()
    if not items:
        out.print("Nothing to review: no change ran without asking.")
        return 0
    table = plain_table("id", "tool", "what", "run", "age", "reverted")
    for item in items:
        table.add_row(
            item.id,
            escape_untrusted(item.call.name, newline=False),
            escape_untrusted(summary_of(item.call), newline=False),
            item.event.run_id or "-",
            age(item.event.ts),
            "yes" if item.reverted else "",
        )
    out.print(table)
    out.print("Undo one with: signoff revert ID")
    return 0


def cmd_revert(args: argparse.Namespace) -> int:
    from ..review import parse_review_id, revert

    with closing(store_for(args)) as store:
        message = revert(store, parse_review_id(args.id), actor=decider_for(args).actor)
    print(escape_untrusted(message))
    return 0


def cmd_migrate(args: argparse.Namespace) -> int:
    with closing(store_for(args)) as store:
        applied = store.migrate()
    print(f"migrations applied: {applied or 'none (up to date)'}")
    return 0


def add_identity(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--as",
        dest="actor",
        metavar="NAME",
        help="decide as NAME: needs NAME's token (--token-file or $SIGNOFF_TOKEN, or a "
        "prompt on a terminal), or the store's local admin (default: you, the OS user)",
    )
    parser.add_argument(
        "--token-file", metavar="FILE", help="a file holding the --as account's token"
    )


def register(sub: Any) -> None:
    def add(name: str, func: Any, help: str) -> argparse.ArgumentParser:
        parser: argparse.ArgumentParser = sub.add_parser(name, help=help)
        parser.add_argument(
            "--db",
            default=None,
            help="store URL (default: $SIGNOFF_DB, else .signoff/signoff.db in the workspace)",
        )
        parser.add_argument("--workspace", default=".", help="workspace root (default: .)")
        parser.set_defaults(func=func)
        return parser

    p = add("inbox", cmd_inbox, "requests waiting for a decision, newest first")
    p.add_argument("--json", action="store_true")
    p.add_argument("--all", action="store_true", help="every request, not just pending ones")
    p.add_argument("--limit", type=int, default=100)
    p = add("show", cmd_show, "one request in full")
    p.add_argument("id")
    p.add_argument("--json", action="store_true")
    for name, func, help in (
        ("approve", cmd_approve, "approve a request"),
        ("reject", cmd_reject, "reject a request (a reason is required)"),
        ("edit", cmd_edit, "approve with new arguments (validated and judged again)"),
        ("skip", cmd_skip, "skip a request"),
        ("answer", cmd_answer, "answer an ask_human question"),
    ):
        p = add(name, func, help)
        p.add_argument("id")
        add_identity(p)
        if name == "answer":
            p.add_argument("text")
        else:
            p.add_argument("--reason", required=name == "reject", default=None)
        if name == "approve":
            p.add_argument(
                "--always",
                choices=("run", "project"),
                help="also remember a grant for the run or the project",
            )
        if name == "edit":
            p.add_argument("--args", required=True, help="the new arguments as a JSON object")
    p = add("resolve", cmd_resolve, "settle a call in doubt: done, failed or retry")
    p.add_argument("id")
    p.add_argument("outcome", choices=("done", "failed", "retry"))
    add_identity(p)
    p = add("runs", cmd_runs, "list runs")
    p.add_argument("--json", action="store_true")
    p.add_argument("--status", default=None)
    p.add_argument("--limit", type=int, default=50)
    p = add("resume", cmd_resume, "continue a paused run in this process")
    p.add_argument("run_id")
    p = add("worker", cmd_worker, "resume every run that is ready, as decisions arrive")
    p.add_argument("--once", action="store_true", help="stop when no run is ready")
    p.add_argument("--poll", type=float, default=1.0)
    p = add("review", cmd_review, "changes that ran without asking, to review after")
    p.add_argument("--json", action="store_true")
    p.add_argument("--all", action="store_true", help="include reverted ones")
    p = add(
        "revert", cmd_revert, "undo a change that ran without asking (refused if changed since)"
    )
    p.add_argument("id", help="a review item id, like rev_12")
    add_identity(p)
    add("migrate", cmd_migrate, "apply the store's schema migrations")


__all__ = ["add_identity", "decider_for", "register"]
