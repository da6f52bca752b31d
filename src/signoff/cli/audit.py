"""CLI: `signoff audit` (list, export, verify), `signoff stats`, `signoff grant`."""

from __future__ import annotations

import argparse
import io
import os
import sys
import uuid
from contextlib import closing
from dataclasses import replace
from pathlib import Path
from typing import IO, Any, cast

from ..audit import AuditFilter, describe, export_jsonl, parse_since, read_log
from ..audit import verify_file as verify_exported
from ..audit import verify_store as verify_stored
from ..audit.outcomes import awaiting_in, listed_json
from ..audit.stats import DEFAULT_MIN_COUNT, Stats, load_stats
from ..channels.render import escape_json_text, escape_untrusted
from ..exceptions import InvalidInput, SignoffError
from ..models import GRANT_SCOPES, Grant
from ..rules import parse_rule
from ..runs.nested import descendants
from ..times import when
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
from .runs import add_identity, decider_for


def _since(args: argparse.Namespace) -> float | None:
    return parse_since(args.since) if args.since else None


# ------------------------------------------------------------------ audit


def cmd_audit(args: argparse.Namespace) -> int:

    where = AuditFilter(
        run_id=args.run, since=_since(args), kinds=tuple(args.kind or ()), request_id=args.request
    )
    if args.limit < 0:
        raise InvalidInput(f"--limit {args.limit}: give a number of entries (0: all)")
    if args.children and not args.run:
        raise InvalidInput("--children takes the runs started by the run of --run ID: add it")
    with closing(store_for(args, existing=True)) as store:
        if args.children:
            where = replace(where, also_runs=tuple(descendants(store, args.run)))
        events = read_log(store, where, args.limit or None)
        awaiting = awaiting_in(store, events)
    if args.json:
        print_json(listed_json(events, awaiting))
        return 0
    out = console()
    if not events:
        out.print("No audit entries match.")
        return 0
    table = plain_table("seq", "time", "kind", "run", "request", "actor", "what")
    for e in events:
        table.add_row(
            str(e.seq),
            when(e.ts).removesuffix(" UTC"),
            e.kind,
            e.run_id or "-",
            e.request_id or "-",
            escape_untrusted(e.actor or "-"),
            escape_untrusted(describe(e, awaiting.text_of(e)), newline=False),
        )
    out.print(table)
    count = f"{len(events)} {'entry' if len(events) == 1 else 'entries'}"
    out.print(f"{count}. Verify the chain with: signoff audit verify{store_flags(args)}")
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    with closing(store_for(args, existing=True)) as store:
        if args.output and args.output != "-":
            target = Path(args.output)
            tmp = target.with_name(target.name + ".tmp")
            with open(tmp, "w", encoding="utf-8") as handle:
                count, head = export_jsonl(store, handle)
            os.replace(tmp, target)
        else:  # a terminal may be reading: no raw control or bidi code point reaches it
            count, head = export_jsonl(store, cast(IO[str], _EscapingWriter(sys.stdout)))
    sys.stderr.write(
        f"exported {count} entries; chain head {head}\n"
        f"verify offline: signoff audit verify --file FILE --head {head}\n"
    )
    return 0


class _EscapingWriter(io.TextIOBase):
    """Writes JSON text to `target` with `escape_json_text` applied (same values)."""

    def __init__(self, target: IO[str]) -> None:
        self.target = target

    def write(self, text: str) -> int:
        self.target.write(escape_json_text(text))
        return len(text)


def cmd_verify(args: argparse.Namespace) -> int:

    if args.file:
        report = verify_exported(args.file, head=args.head)
    else:
        with closing(store_for(args, existing=True)) as store:
            report = verify_stored(store)
        if report.ok and args.head and args.head != report.head_hash:
            raise InvalidInput(
                f"the chain verifies, but its head {report.head_hash} is not "
                f"the expected {args.head}"
            )
    if args.json:
        print_json(report.to_json())
    else:
        out = console()
        for line in report.lines():
            out.print(escape_untrusted(line, newline=False))
    return 0 if report.ok else 1


# ------------------------------------------------------------------ stats


def cmd_stats(args: argparse.Namespace) -> int:
    with closing(store_for(args, existing=True)) as store:
        stats = load_stats(store, since=_since(args), min_count=args.min_count)
    if args.json:
        print_json(stats.to_json())
        return 0
    print_stats(stats, args.since, flags=store_flags(args))
    return 0


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value * 100:.0f}%"


def _secs(value: float | int | None) -> str:
    if value is None:
        return "-"
    seconds = float(value)
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds / size:.1f}{unit}"
    return f"{seconds:.0f}s"


def print_stats(stats: Stats, since_text: str | None = None, *, flags: str = "") -> None:
    """The statistics as text; `flags` name the store in the commands it suggests."""

    out = console()
    span = f"since {since_text}" if since_text else "all time"
    effects = stats.effects
    out.print(f"Statistics ({span})")
    out.print(
        f"  calls judged      {stats.calls}  (allow {effects.get('allow', 0)}, notify "
        f"{effects.get('notify', 0)}, ask {effects.get('ask', 0)}, deny "
        f"{effects.get('deny', 0)})"
    )
    out.print(f"  asked             {stats.asked} of {stats.calls} calls ({_pct(stats.ask_share)})")
    qpr = stats.questions_per_run
    out.print(
        f"  questions per run mean {qpr.get('mean') if qpr.get('mean') is not None else '-'}"
        f", median {qpr.get('median') if qpr.get('median') is not None else '-'}, "
        f"max {qpr.get('max') if qpr.get('max') is not None else '-'} over {stats.runs} runs"
    )
    ttd = stats.time_to_decision
    out.print(
        f"  time to decision  median {_secs(ttd.get('median'))}, p90 "
        f"{_secs(ttd.get('p90'))} ({ttd.get('count')} decisions)"
    )
    out.print(
        "  decisions         "
        + ", ".join(
            f"{name} {stats.decisions.get(name, 0)} ({_pct(stats.rate(name))})"
            for name in ("approve", "edit", "reject", "skip", "answer")
        )
    )
    out.print(
        f"  expired {stats.expired}, in doubt {stats.in_doubt} "
        f"({stats.in_doubt_unresolved} unresolved), still pending {stats.pending}"
    )
    if stats.outcome_unknown:
        out.print(
            f"  outcome unknown (in doubt) {stats.outcome_unknown} allowed "
            f"{'call' if stats.outcome_unknown == 1 else 'calls'}: the process that ran "
            f"{'it' if stats.outcome_unknown == 1 else 'them'} stopped before recording "
            f"what happened (signoff audit --kind verdict{flags})"
        )
    rv = stats.reviewer
    if rv.reviewed:
        out.print(
            f"  reviewer model    {rv.reviewed} asks: settled {rv.settled}, escalated "
            f"{rv.escalated}; overruled {rv.overruled} (reverted {rv.overruled_allowed} "
            f"it allowed, approved {rv.overruled_escalated} it escalated)"
        )
    for title, rows in (("tool", stats.per_tool), ("rule", stats.per_rule)):
        if not rows:
            continue
        table = plain_table(
            title, "asked", "approve", "edit", "reject", "skip", "answer", "expired"
        )
        for r in rows:
            table.add_row(
                escape_untrusted(r.key, newline=False),
                str(r.asked),
                *(_pct(r.rate(n)) for n in ("approve", "edit", "reject", "skip", "answer")),
                str(r.expired),
            )
        out.print()
        out.print(table)
    out.print()
    if not stats.suggestions:
        out.print(f"No suggestions (a pattern needs {stats.min_count} identical answers).")
        return
    out.print("Suggestions:")
    for s in stats.suggestions:
        out.print(
            f"- {escape_untrusted(s.rule, newline=False)}: "
            f"{escape_untrusted(s.reason, newline=False)}"
        )
        if s.command:
            out.print(f"    {escape_untrusted(s.command + flags, newline=False)}")
        if s.toml:
            out.print("    add under [permissions] deny in .signoff/settings.toml:")
            out.print(f"    {escape_untrusted(s.toml, newline=False)}")


# ------------------------------------------------------------------ grants


def cmd_grant_add(args: argparse.Namespace) -> int:
    from ..approvals import grant_project_rule

    rule = parse_rule(args.rule).text  # InvalidInput names what is wrong
    if args.scope in ("run", "session") and not args.run:
        raise InvalidInput(f"a {args.scope} grant needs --run ID")
    written = None
    with closing(store_for(args)) as store:
        actor = decider_for(args, need_admin=True).actor
        if args.scope == "project":
            stored, written = grant_project_rule(store, rule, actor=actor, workspace=args.workspace)
        else:
            grant = Grant(
                rule=rule, scope=args.scope, id=f"grant_{uuid.uuid4().hex[:10]}", created_by=actor
            )
            stored = store.add_grant(grant, run_id=args.run)
    if args.json:
        doc = stored.to_json()
        doc["settings_file"] = str(written) if written else None
        print_json(doc)
        return 0
    out = console()
    where = f" (written to {written})" if written else f" (run {args.run})" if args.run else ""
    out.print(
        escape_untrusted(f"Granted {rule} for the {args.scope}{where}: {stored.id}", newline=False)
    )
    return 0


def cmd_grant_revoke(args: argparse.Namespace) -> int:
    from ..approvals import revoke_grant

    with closing(store_for(args, existing=True)) as store:
        actor = decider_for(args, need_admin=True).actor
        grant = revoke_grant(store, args.id, actor=actor, workspace=args.workspace)
    where = " and removed from .signoff/settings.local.toml" if grant.scope == "project" else ""
    print(
        escape_untrusted(f"Revoked {grant.id} ({grant.rule}, {grant.scope}){where}.", newline=False)
    )
    return 0


def cmd_grant_list(args: argparse.Namespace) -> int:
    with closing(store_for(args, existing=True)) as store:
        grants = store.list_grants(scope=args.scope)
    if args.json:
        print_json([g.to_json() for g in grants])
        return 0
    out = console()
    if not grants:
        out.print("No grants.")
        return 0
    for g in grants:
        out.print(
            escape_untrusted(
                f"{g.id}  {g.scope:8} {g.rule}  by {g.created_by}, {when(g.created_at)}",
                newline=False,
            )
        )
    return 0


# ------------------------------------------------------------------ parser


def _common(parser: argparse.ArgumentParser, *, sub: bool = False) -> None:
    # An action (`audit verify`) takes the options again, after its name; SUPPRESS keeps
    # the value given before it (`audit --db X verify`) unless given again.
    if sub:
        add_store_options(parser, default=argparse.SUPPRESS)
    else:
        add_store_options(parser)


_SINCE = "only entries since: 7d, 12h, 30m, or an ISO date (default: all)"


def register(sub: Any) -> None:
    audit = command(
        sub,
        "audit",
        help="the audit log: list it, export it, verify its hash chain",
        description="List the audit log: every verdict, request, decision and outcome, "
        "oldest first. `export` writes it as JSON Lines; `verify` checks its hash chain.",
        examples=(
            "signoff audit --run run_1a2b3c4d5e6f",
            "signoff audit --kind request. --since 1d",
            "signoff audit verify",
        ),
    )
    _common(audit)
    audit.add_argument("--run", metavar="ID", help="only this run's entries (default: all)")
    audit.add_argument(
        "--children",
        action="store_true",
        help="with --run: also the entries of the runs it started with delegate, at any "
        "depth (default: that run's own)",
    )
    audit.add_argument("--request", metavar="ID", help="only this request's entries (default: all)")
    audit.add_argument("--since", help=_SINCE)
    audit.add_argument(
        "--kind",
        action="append",
        help="only this kind of entry, e.g. verdict or request.decided; repeatable; "
        "'request.' or 'run.' take every kind under it (default: all)",
    )
    audit.add_argument(
        "--limit",
        type=int,
        default=0,
        metavar="N",
        help="only the last N entries (default: 0, all)",
    )
    audit.add_argument("--json", action="store_true", help="print a JSON array")
    audit.set_defaults(func=cmd_audit)
    actions = audit.add_subparsers(dest="audit_command", metavar="ACTION")
    export = command(
        actions,
        "export",
        help="write the whole log as JSON Lines",
        description="Write the whole audit log as JSON Lines, with its chain head on "
        "stderr, to keep or to verify elsewhere.",
        examples=("signoff audit export -o audit.jsonl",),
    )
    _common(export, sub=True)
    export.add_argument(
        "--output", "-o", metavar="FILE", help="file to write (default: standard output)"
    )
    export.set_defaults(func=cmd_export)
    verify = command(
        actions,
        "verify",
        help="check the hash chain; name the first bad entry",
        description="Check the audit log's hash chain and signatures: an entry changed, "
        "removed or added afterwards is found and named. Prints the chain head to keep.",
        examples=(
            "signoff audit verify",
            "signoff audit verify --file audit.jsonl --head 4f1c…",
        ),
    )
    _common(verify, sub=True)
    verify.add_argument(
        "--file",
        help="verify an exported JSON Lines file instead, offline (default: the store)",
    )
    verify.add_argument(
        "--head",
        metavar="HASH",
        help="the chain-head hash you expect, from an earlier verify (default: no check)",
    )
    verify.add_argument("--json", action="store_true", help=JSON_HELP)
    verify.set_defaults(func=cmd_verify)

    stats = command(
        sub,
        "stats",
        help="decision statistics and suggested rules",
        description="How often calls ask, how people decide and how fast, per tool and "
        "rule; and rules to add where people always answer the same.",
        examples=("signoff stats --since 7d",),
    )
    _common(stats)
    stats.add_argument(
        "--since", help="only calls since: 7d, 12h, 30m, or an ISO date (default: all)"
    )
    stats.add_argument(
        "--min-count",
        type=int,
        default=DEFAULT_MIN_COUNT,
        metavar="N",
        help=f"identical answers before a rule is suggested (default: {DEFAULT_MIN_COUNT})",
    )
    stats.add_argument("--json", action="store_true", help=JSON_HELP)
    stats.set_defaults(func=cmd_stats)

    grant = command(
        sub,
        "grant",
        help="remember approvals: add, list or revoke grants",
        description="Grants are remembered approvals: calls a grant's rule allows stop "
        "asking. Add, list or revoke them.",
        examples=(
            "signoff grant add 'execute_command(npm test:*)'",
            "signoff grant list",
            "signoff grant revoke grant_1a2b3c4d5e",
        ),
    )
    grant_actions = grant.add_subparsers(dest="grant_command", metavar="ACTION", required=True)
    add = command(
        grant_actions,
        "add",
        help="add an allow rule as a grant",
        description="Allow calls that match a rule without asking, for the project or for "
        "one run. Needs an admin (or the store's local user).",
        examples=("signoff grant add 'execute_command(npm run test:*)'",),
    )
    _common(add)
    add.add_argument("rule", help="an allow rule, e.g. 'execute_command(npm run test:*)'")
    add.add_argument(
        "--scope",
        choices=[s for s in GRANT_SCOPES if s != "pattern"],
        default="project",
        help="project (the default: also written to .signoff/settings.local.toml) "
        "or run/session (needs --run)",
    )
    add.add_argument(
        "--run", metavar="ID", help="the run a run or session grant belongs to (default: none)"
    )
    add_identity(add)
    add.add_argument("--json", action="store_true", help="print the grant as JSON")
    add.set_defaults(func=cmd_grant_add)
    lst = command(
        grant_actions,
        "list",
        help="grants not revoked, newest first",
        description="List the grants that are not revoked, newest first.",
        examples=("signoff grant list --scope project",),
    )
    _common(lst)
    lst.add_argument(
        "--scope", choices=GRANT_SCOPES, help="only grants of this scope (default: all)"
    )
    lst.add_argument("--json", action="store_true", help=JSON_HELP)
    lst.set_defaults(func=cmd_grant_list)
    revoke = command(
        grant_actions,
        "revoke",
        help="revoke a grant (a project grant also leaves settings.local.toml)",
        description="Revoke a grant: matching calls ask again. A project grant's rule also "
        "leaves .signoff/settings.local.toml.",
        examples=("signoff grant revoke grant_1a2b3c4d5e",),
    )
    _common(revoke)
    revoke.add_argument("id", help="the grant's id (grant_…, from signoff grant list)")
    add_identity(revoke)
    revoke.set_defaults(func=cmd_grant_revoke)


def main(argv: list[str]) -> int:
    """Run one of these commands without the rest of the CLI (tests, docs)."""
    parser = argparse.ArgumentParser(prog="signoff")
    register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(argv)
    try:
        return int(args.func(args))
    except SignoffError as exc:
        sys.stderr.write(f"signoff: {escape_untrusted(str(exc))}\n")
        return 2


__all__ = ["cmd_audit", "cmd_export", "cmd_stats", "cmd_verify", "main", "print_stats", "register"]
