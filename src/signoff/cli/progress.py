"""What a resumed run did, told to the person who resumed it (`signoff resume`, `signoff
worker`): each call that ran with its outcome, each refusal and why, the model's text, and
where the run stands now, with the command that moves it on (it carries the store's
location, so it works pasted in any directory)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..audit import iter_events
from ..escape import escape_untrusted
from ..models import Request
from ..present import summary_of
from ..run_state import Run
from ..store import Store

_ASKED = {
    "finished": "ran (approved{by})",
    "failed": "failed (approved{by})",
    "rejected": "rejected{by}",
    "skipped": "skipped{by}",
    "answered": "answered{by}",
    "expired": "expired before anyone decided",
    "in_doubt": "in doubt: it may or may not have run",
}


def short(text: str, limit: int = 100) -> str:
    """The first line of `text`, escaped for a terminal and cut to `limit` characters."""
    first = text.strip().splitlines()[0] if text.strip() else ""
    first = escape_untrusted(first, newline=False)
    return first if len(first) <= limit else first[: limit - 1] + "…"


@dataclass(frozen=True)
class Step:
    """One line of the report: the model's text, or one call and how it ended."""

    text: str
    refused: bool = False
    ran: bool = False


def _calls(messages: Sequence[Mapping[str, Any]]) -> dict[str, tuple[str, str]]:
    """The model's calls by id: (tool name, arguments as the model wrote them)."""
    found: dict[str, tuple[str, str]] = {}
    for message in messages:
        for raw in message.get("tool_calls") or ():
            function = raw.get("function") or {}
            found[str(raw.get("id"))] = (
                str(function.get("name") or "?"),
                str(function.get("arguments") or ""),
            )
    return found


def _effects(store: Store, run_id: str, after_seq: int) -> dict[str, str]:
    """The policy's verdict (allow, notify, ask, deny) on each call judged since `after_seq`."""
    effects: dict[str, str] = {}
    for event in iter_events(store, after=after_seq):
        if event.run_id == run_id and event.kind == "verdict":
            call = event.data.get("call") or {}
            verdict = event.data.get("verdict") or {}
            effects[str(call.get("id"))] = str(verdict.get("effect", ""))
    return effects


def _outcome(effect: str | None, request: Request | None) -> tuple[str, bool, bool]:
    """(label, refused, ran) for one call."""
    if request is not None:
        decision = request.decision
        by = f" by {escape_untrusted(decision.actor, newline=False)}" if decision else ""
        if decision is not None and decision.kind == "edit" and request.state == "finished":
            return f"ran edited{by}", False, True
        label = _ASKED.get(request.state, request.state).format(by=by)
        return label, request.state in ("rejected", "expired"), request.state == "finished"
    if effect == "deny":
        return "refused by policy", True, False
    if effect == "notify":
        return "ran (notify), recorded for review", False, True
    if effect == "allow":
        return "ran (allow)", False, True
    return "refused", True, False  # arguments that were not JSON, an unknown tool


def steps(store: Store, run: Run, *, from_message: int, after_seq: int) -> list[Step]:
    """What happened in `run` from message `from_message` on (events after `after_seq`)."""
    messages = store.load_messages(run.id)
    calls = _calls(messages)
    effects = _effects(store, run.id, after_seq)
    requests = {r.call.id: r for r in store.list_requests(run_id=run.id, limit=10_000)}
    found: list[Step] = []
    for message in messages[from_message:]:
        role = message.get("role")
        content = message.get("content")
        if role == "assistant" and isinstance(content, str) and content.strip():
            found.append(Step(said(content)))
        elif role == "tool":
            call_id = str(message.get("tool_call_id"))
            name, arguments = calls.get(call_id, ("?", ""))
            request = requests.get(call_id)
            if request is not None and request.state == "pending":
                continue  # still waiting: said below, with how to decide it
            label, refused, ran = _outcome(effects.get(call_id), request)
            what = _what(name, arguments)
            result = short(content if isinstance(content, str) else json.dumps(content))
            found.append(Step(f"  [{what}] -> {label}: {result}", refused=refused, ran=ran))
    return found


def said(text: str) -> str:
    """The model's text, every line of it indented under `model: `: a line the model
    wrote can never pass for one of signoff's own ("Run run_…: finished.")."""
    lines = escape_untrusted(text.strip()).splitlines() or [""]
    return "\n".join(["model: " + lines[0], *("       " + line for line in lines[1:])])


def _what(name: str, arguments: str) -> str:
    try:
        parsed = json.loads(arguments) if arguments else {}
    except ValueError:
        parsed = None
    if isinstance(parsed, dict):
        from ..models import ToolCall

        shown = summary_of(ToolCall(name, parsed))
    else:
        shown = arguments
    return f"{escape_untrusted(name, newline=False)} {short(shown, 80)}".strip()


def standing(store: Store, run: Run, flags: str) -> list[str]:
    """Where the run stands, and the command that moves it on."""
    if run.status == "finished":
        return [f"Run {run.id}: finished."]
    waiting = _waiting_deep(store, run) if run.status == "paused" else []
    if waiting:
        lines = [f"Run {run.id}: paused, waiting on a decision:"]
        for request_id, path in waiting:
            request = store.get_request(request_id)
            what = _what(request.call.name, json.dumps(dict(request.call.arguments)))
            inside = f"  (in run {' <- '.join(path)})" if len(path) > 1 else ""
            lines.append(f"  {request_id}  {what}{inside}")
        first = waiting[0][0]
        question = store.get_request(first).call.name == "ask_human"
        verb = f"answer {first} TEXT" if question else f"approve {first}"
        lines += [
            "Decide it, then resume the run:",
            f"  signoff show {first}{flags}",
            f"  signoff {verb}{flags}",
            f"  signoff reject {first} --reason TEXT{flags}",
            f"  signoff resume {run.id}{flags}",
        ]
        return lines
    lines = [f"Run {run.id}: {run.status}."]
    if run.note:  # may quote an error's text: indented, it cannot pass for a line of ours
        lines += [f"  {line}" for line in escape_untrusted(run.note).splitlines()]
    if run.status == "needs_attention":
        lines.append(
            f"See: signoff audit --run {run.id}{flags}; settle a call in doubt with: "
            f"signoff resolve ID done|failed|retry{flags}; then: signoff resume {run.id}{flags}"
        )
    return lines


def _waiting_deep(store: Store, run: Run, depth: int = 0) -> list[tuple[str, list[str]]]:
    """Every request the run waits on, its child runs' included (a question deep inside a
    nested run holds up every run above it), each with the runs it is in, innermost first."""
    found = [(request_id, [run.id]) for request_id in run.waiting_on]
    if depth < 32:
        for child_id in run.waiting_for:
            child = store.get_run(child_id)
            if child.status == "paused":
                found += [
                    (r, [*path, run.id]) for r, path in _waiting_deep(store, child, depth + 1)
                ]
    return found


def one_line(store: Store, before: Run, after: Run, *, after_seq: int, flags: str) -> str:
    """The worker's line for one run it picked up: what ran, what was refused, where now."""
    done = steps(store, after, from_message=before.message_count, after_seq=after_seq)
    ran = sum(s.ran for s in done)
    refused = sum(s.refused for s in done)
    counts = f"{ran} call{'' if ran == 1 else 's'} ran, {refused} refused"
    if after.status == "paused" and after.waiting_on:
        first = after.waiting_on[0]
        where = f"paused on {first}: signoff show {first}{flags}"
    elif after.status == "needs_attention":
        where = f"needs attention: signoff audit --run {after.id}{flags}"
    else:
        where = after.status
    return f"worker: {after.id}: {counts}; {where}"


__all__ = ["Step", "one_line", "said", "short", "standing", "steps"]
