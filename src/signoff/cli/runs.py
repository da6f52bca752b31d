"""CLI commands over the durable store: the inbox, decisions, runs, resume, worker."""

from __future__ import annotations

import argparse
import json
import sys
from contextlib import closing
from dataclasses import replace
from typing import Any

from rich.text import Text

from ..approvals import decide, what_next
from ..channels.render import escape_untrusted, is_question, question_parts, render_request
from ..deciders import Decider, resolve_decider
from ..exceptions import InvalidInput
from ..i18n import plural
from ..models import ALWAYS_SCOPES, Decision, Request
from ..present import request_json, requests_json, summary, summary_of
from ..review import review_items
from ..run_state import parent_runs
from ..runs.worker import resume_run, work
from ..settings import load_settings
from ..store import default_url
from ..times import age
from ._output import (
    JSON_HELP,
    add_store_options,
    command,
    console,
    plain_table,
    print_json,
    store_flags,
    store_for,
)

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
    flags = store_flags(args)
    with closing(store_for(args, existing=True)) as store:
        store.expire_stale()
        requests = store.list_requests(state=None if args.all else "pending", limit=args.limit)
        if args.json:
            print_json(requests_json(requests, store))
            return 0
        to_review = [i for i in review_items(store) if not i.reverted]
    out = console()
    if to_review:
        waits = "waits" if len(to_review) == 1 else "wait"
        out.print(
            f"{plural(len(to_review), 'change')} ran without asking and {waits} for review: "
            f"signoff review{flags}"
        )
    if not requests:
        out.print("Inbox empty: nothing waits for a decision.")
        return 0
    table = plain_table("id", "risk", "tool", "what", "run", "age", "state")
    for r in requests:
        # a child run's request: "in run X <- parent Y" (the runs above it, innermost first)
        above = "".join(f" <- {p}" for p in parent_runs(r.metadata))
        table.add_row(
            r.id,
            Text(r.verdict.risk, style=_RISK_STYLE[r.verdict.risk]),
            escape_untrusted(r.call.name),
            escape_untrusted(summary(r), newline=False)[:70],
            escape_untrusted((r.run_id or "-") + above, newline=False),
            age(r.created_at),
            r.state,
        )
    out.print(table)
    out.print("Decide with (ID from the first column):")
    for verb in ("approve ID", "reject ID --reason TEXT", "edit ID --args JSON", "skip ID"):
        out.print(f"  signoff {verb}{flags}")
    out.print(f"  signoff answer ID TEXT{flags}   (a question; a number picks an option)")
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    with closing(store_for(args, existing=True)) as store:
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
    if request.state == "pending":
        out.print(f"Decide with: {_decide_hint(request, store_flags(args))}")
    return 0


def _decide_hint(request: Request, flags: str) -> str:
    """The commands that decide this request (a question is answered, not approved)."""
    rid = request.id
    if is_question(request):
        _, options = question_parts(request)
        pick = f" (or a number, 1 to {len(options)}, for an option)" if options else ""
        return (
            f"signoff answer {rid} TEXT{flags}{pick}, or signoff reject {rid} --reason TEXT{flags}"
        )
    return (
        f"signoff approve {rid}{flags}, or signoff reject {rid} --reason TEXT{flags} "
        "(also: edit --args JSON, skip)"
    )


def cmd_runs(args: argparse.Namespace) -> int:
    with closing(store_for(args, existing=True)) as store:
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
            ", ".join(run.waiting_on + run.waiting_for) or "-",  # requests, child runs
            age(run.updated_at),
            escape_untrusted(run.note or "", newline=False)[:60],
        )
    out.print(table)
    return 0


# ------------------------------------------------------------------ decisions


def _decide(args: argparse.Namespace, decision: Decision) -> int:
    flags = store_flags(args)
    with closing(store_for(args, existing=True)) as store:
        request = store.get_request(args.id)
        decision = _for_question(request, decision, flags)
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
    print(escape_untrusted(what_next(decided, flags=flags)))
    return 0


def _for_question(request: Request, decision: Decision, flags: str) -> Decision:
    """A question (ask_human) takes an answer, never an approval (approving it would run
    a tool nobody can run); an answer that is a number picks that option, as in the
    terminal box."""
    _, options = question_parts(request)
    if is_question(request) and decision.kind in ("approve", "approve_always", "edit"):
        pick = f" (or a number, 1 to {len(options)}, to pick an option)" if options else ""
        raise InvalidInput(
            f"{request.id} is a question, not a call to approve: answer it: "
            f"signoff answer {request.id} TEXT{flags}{pick}"
        )
    if decision.kind != "respond" or not is_question(request) or not options:
        return decision
    text = str(decision.result).strip()
    if not text.isdecimal():
        return decision
    number = int(text)
    if not 1 <= number <= len(options):
        raise InvalidInput(
            f"{request.id}: there is no option {number}: pick 1 to {len(options)}, "
            "or give the answer as text"
        )
    return replace(decision, result=options[number - 1])


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
    with closing(store_for(args, existing=True)) as store:
        actor = decider_for(args).actor
        request = store.resolve_in_doubt(args.id, args.outcome, actor=actor)
    print(f"Resolved {request.id} as {args.outcome}; state {request.state}.")
    if request.run_id:
        print(f"Continue its run with: signoff resume {request.run_id}{store_flags(args)}")
    return 0


# ------------------------------------------------------------------ runs


def cmd_resume(args: argparse.Namespace) -> int:
    from .progress import standing, steps

    flags = store_flags(args)
    with closing(store_for(args, existing=True)) as store:
        before = store.get_run(args.run_id)
        seq = store.last_seq()
        run = resume_run(store, args.run_id)
        done = steps(store, run, from_message=before.message_count, after_seq=seq)
        lines = [s.text for s in done] + standing(store, run, flags)
    if not done and run.status == before.status:
        print(f"Nothing ran: run {run.id} was already {run.status}.")
    for line in lines:
        print(line)
    return 0


def _lease_seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not 0.5 <= value <= 86400:  # NaN fails too
        raise argparse.ArgumentTypeError(
            f"{text!r}: give a number of seconds from 0.5 to 86400, e.g. --lease 60"
        )
    return value


def cmd_worker(args: argparse.Namespace) -> int:
    from ..adapters.defer import resume_all  # deferred coding-agent sessions, too
    from ..run_state import Run
    from ..runs.framework_runs import NotResumed, left_alone
    from .progress import one_line

    flags = store_flags(args)
    with closing(store_for(args)) as store:

        def tell(before: Run, after: Run, seq: int) -> None:
            if not args.quiet:
                print(one_line(store, before, after, after_seq=seq, flags=flags), flush=True)

        def refused(run: Run, exc: Exception) -> None:
            if not isinstance(exc, NotResumed):
                raise exc
            sys.stderr.write(f"worker: {run.id} not resumed: {escape_untrusted(str(exc))}\n")

        if not args.quiet:
            how = "until none is ready" if args.once else "until Ctrl-C"
            sys.stderr.write(f"worker: resuming runs as decisions arrive, {how}\n")
            alone = left_alone(store)
            if alone:
                sys.stderr.write(
                    f"worker: left alone: {plural(len(alone), 'paused framework run')} "
                    f"without a factory (first: {alone[0].id}); their own code resumes "
                    "them, or give the adapter factory= (docs/frameworks.md)\n"
                )

        def say(line: str) -> None:  # a lost run, a store outage and its end
            sys.stderr.write(f"{escape_untrusted(line)}\n")
            sys.stderr.flush()

        count = work(
            store,
            once=args.once,
            poll=args.poll,
            on_run=tell,
            also=resume_all,
            on_error=refused,
            report=say,
            lease_seconds=args.lease,
        )
    if not args.quiet:
        print(f"worker: resumed {plural(count, 'run')}")
    return 0


def cmd_review(args: argparse.Namespace) -> int:
    flags = store_flags(args)
    with closing(store_for(args, existing=True)) as store:
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
                    **(
                        {"contained": True, "changes": i.event.data.get("changes", [])}
                        if i.event.data.get("contained")
                        else {}
                    ),
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
    if any(not i.reverted for i in items):
        out.print(f"Undo one with: signoff revert ID{flags}")
    return 0


def cmd_revert(args: argparse.Namespace) -> int:
    from ..review import parse_review_id, revert

    with closing(store_for(args, existing=True)) as store:
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
    def add(
        name: str, func: Any, help: str, description: str, *examples: str
    ) -> argparse.ArgumentParser:
        parser = command(sub, name, help=help, description=description, examples=examples)
        add_store_options(parser)
        parser.set_defaults(func=func)
        return parser

    p = add(
        "inbox",
        cmd_inbox,
        "requests waiting for a decision, newest first",
        "List the requests that wait for a person's decision, newest first, with the "
        "commands that decide them.",
        "signoff inbox",
        "signoff inbox --workspace ~/src/app --all --limit 20",
    )
    p.add_argument("--json", action="store_true", help=JSON_HELP)
    p.add_argument(
        "--all", action="store_true", help="every request, decided ones too (default: pending)"
    )
    p.add_argument(
        "--limit", type=int, default=100, metavar="N", help="show at most N (default: 100)"
    )
    p = add(
        "show",
        cmd_show,
        "one request in full",
        "Show one request as the approval box does: the call, its risk and why, the preview "
        "of what it would do, and any decision and outcome.",
        "signoff show req_1a2b3c4d5e6f7a8b",
    )
    p.add_argument("id", help="the request's id (req_…, from signoff inbox)")
    p.add_argument("--json", action="store_true", help=JSON_HELP)
    decisions = (
        (
            "approve",
            cmd_approve,
            "approve a request",
            "Approve a request: the call runs, exactly as shown, when its run resumes.",
            "signoff approve req_1a2b3c4d5e6f7a8b --always project",
        ),
        (
            "reject",
            cmd_reject,
            "reject a request (a reason is required)",
            "Reject a request: the call does not run, and the model is told your reason.",
            "signoff reject req_1a2b3c4d5e6f7a8b --reason 'not on main: use a branch'",
        ),
        (
            "edit",
            cmd_edit,
            "approve with new arguments (validated and judged again)",
            "Approve the call with arguments you give instead: they are checked against the "
            "tool's schema and judged again by the policy (a deny still wins).",
            'signoff edit req_1a2b3c4d5e6f7a8b --args \'{"command": "rm -rf build/"}\'',
        ),
        (
            "skip",
            cmd_skip,
            "skip a request",
            "Skip a request: the call does not run, and the model is told to continue "
            "without it (with your reason, if you give one).",
            "signoff skip req_1a2b3c4d5e6f7a8b",
        ),
        (
            "answer",
            cmd_answer,
            "answer an ask_human question",
            "Answer a question the agent asked (ask_human): your text becomes the tool's "
            "result. When the question offers options, a number picks that option.",
            "signoff answer req_1a2b3c4d5e6f7a8b 2",
        ),
    )
    for name, func, help, description, example in decisions:
        p = add(name, func, help, description, example)
        p.add_argument("id", help="the request's id (req_…, from signoff inbox)")
        add_identity(p)
        if name == "answer":
            p.add_argument(
                "text", help="the answer; a number N picks option N when the question has options"
            )
        else:
            told = name in ("reject", "skip")  # approvals and edits are not explained to it
            p.add_argument(
                "--reason",
                required=name == "reject",
                default=None,
                help=("why: told to the model and kept" if told else "why: kept")
                + " with the decision in the audit log"
                + (" (required)" if name == "reject" else " (default: none)"),
            )
        if name == "approve":
            p.add_argument(
                "--always",
                choices=ALWAYS_SCOPES,
                help="also remember a grant so that calls like this one stop asking: for this "
                "run, or for the project (written to .signoff/settings.local.toml); "
                "default: approve this call only",
            )
        if name == "edit":
            p.add_argument(
                "--args",
                required=True,
                metavar="JSON",
                help="the new arguments, as one JSON object (required)",
            )
    p = add(
        "resolve",
        cmd_resolve,
        "settle a call in doubt: done, failed or retry",
        "A call is in doubt when the process running it stopped before recording its outcome: "
        "it may or may not have happened. Check for yourself, then record what happened.",
        "signoff resolve req_1a2b3c4d5e6f7a8b done",
    )
    p.add_argument("id", help="the request's id (req_…, state in_doubt)")
    p.add_argument(
        "outcome",
        choices=("done", "failed", "retry"),
        help="done: it happened; failed: it did not; retry: run it again when the run resumes",
    )
    add_identity(p)
    p = add(
        "runs",
        cmd_runs,
        "list runs",
        "List the agent runs in the store, most recently updated first.",
        "signoff runs --status paused",
    )
    p.add_argument("--json", action="store_true", help=JSON_HELP)
    p.add_argument(
        "--status",
        default=None,
        choices=("running", "paused", "finished", "failed", "needs_attention"),
        help="only runs with this status (default: all)",
    )
    p.add_argument(
        "--limit", type=int, default=50, metavar="N", help="show at most N (default: 50)"
    )
    p = add(
        "resume",
        cmd_resume,
        "continue a paused run in this process",
        "Continue a paused run here, after its requests were decided: shows each call that "
        "ran or was refused, the model's text, and where the run stands.",
        "signoff resume run_1a2b3c4d5e6f",
    )
    p.add_argument("run_id", help="the run's id (run_…, from signoff runs)")
    p = add(
        "worker",
        cmd_worker,
        "resume every run that is ready, as decisions arrive",
        "Resume every run whose requests are decided, as decisions arrive, until Ctrl-C: "
        "one line per run it picks up. Any number of workers may share a store. A "
        "framework's run (Pydantic AI, LangGraph, OpenAI Agents SDK) is resumed when its "
        "adapter names a factory; the others are left to their own code.",
        "signoff worker --once",
    )
    p.add_argument("--once", action="store_true", help="stop when no run is ready")
    p.add_argument(
        "--poll",
        type=float,
        default=1.0,
        metavar="SECONDS",
        help="longest wait between looks for ready runs, in seconds (default: 1.0; a "
        "decision usually wakes the worker at once)",
    )
    p.add_argument(
        "--lease",
        type=_lease_seconds,
        default=300.0,
        metavar="SECONDS",
        help="how long a run (and an approved call) stays this worker's without a sign of "
        "life: renewed every third of it while the worker drives the run; after a crash, "
        "another worker takes the run and a call cut off goes in doubt once it lapses "
        "(default: 300)",
    )
    p.add_argument(
        "--quiet",
        "-q",
        action="store_true",
        help="print no line per run (default: one line per run); a store outage, and a run "
        "taken over by another worker, are still said",
    )
    p = add(
        "review",
        cmd_review,
        "changes that ran without asking, to review after",
        "List the changes that ran without asking (notify: reversible work in the "
        "workspace), to look at afterwards and undo with signoff revert.",
        "signoff review --all",
    )
    p.add_argument("--json", action="store_true", help=JSON_HELP)
    p.add_argument("--all", action="store_true", help="include reverted ones (default: not)")
    p = add(
        "revert",
        cmd_revert,
        "undo a change that ran without asking (refused if changed since)",
        "Undo one change from signoff review: the file goes back to what it was before; "
        "refused if the file changed since.",
        "signoff revert rev_12",
    )
    p.add_argument("id", help="a review item id, like rev_12 (from signoff review)")
    add_identity(p)
    add(
        "migrate",
        cmd_migrate,
        "create the store, or apply its schema migrations",
        "Create the store if it does not exist, and bring its schema up to date.",
        "signoff migrate --db postgresql://signoff@db.internal/signoff",
    )


__all__ = ["add_identity", "decider_for", "register"]
