"""Where a request's run stands, for its page: what happened after the decision (the call's
result, what the model said and did next) and whether the run is still moving, so the page
keeps refreshing until it is not."""

from __future__ import annotations

import json
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from ..exceptions import NotFound
from ..models import Request
from ..run_state import Run
from .core import Context


@dataclass(frozen=True)
class Step:
    """One message after the decided call: the model's text and calls, or a tool result."""

    role: str
    text: str
    calls: tuple[str, ...] = ()


@dataclass(frozen=True)
class RunView:
    run: Run
    situation: str  # a key of strings.WEB: run_finished, run_resuming, run_waiting, ...
    moving: bool  # the page polls until this is False
    after: tuple[Step, ...] = ()
    waiting: tuple[tuple[str, str], ...] = ()  # (id, tool) of the requests it waits on
    resume_hint: str = ""
    worker_hint: str = ""
    note: str = ""


def _arguments(call: Mapping[str, Any]) -> Any:
    raw = (call.get("function") or {}).get("arguments")
    try:
        return json.loads(raw) if isinstance(raw, str) else raw
    except ValueError:
        return raw


def result_index(r: Request, messages: Sequence[Mapping[str, Any]]) -> int | None:
    """The index of this call's tool result. Call ids repeat across turns (scripted models
    reuse them), so the result is the one whose call has this request's arguments."""
    original = r.metadata.get("original_call")
    wanted = [dict(r.call.arguments)]
    if isinstance(original, dict) and isinstance(original.get("arguments"), dict):
        wanted.append(original["arguments"])
    found: list[int] = []
    for i, m in enumerate(messages):
        if m.get("role") != "tool" or m.get("tool_call_id") != r.call.id:
            continue
        found.append(i)
        for prev in reversed(messages[:i]):
            if prev.get("role") != "assistant":
                continue
            calls = [c for c in prev.get("tool_calls") or [] if c.get("id") == r.call.id]
            if calls:
                if _arguments(calls[0]) in wanted:
                    return i
                break
    return found[-1] if found else None


def steps_after(index: int, messages: Sequence[Mapping[str, Any]]) -> tuple[Step, ...]:
    out: list[Step] = []
    for m in messages[index + 1 :]:
        content = m.get("content")
        text = content if isinstance(content, str) else ""
        calls = tuple(
            str((c.get("function") or {}).get("name", "")) for c in m.get("tool_calls") or []
        )
        if text or calls:
            out.append(Step(str(m.get("role", "")), text, calls))
    return tuple(out)


def store_flag(url: str, workspace: Path) -> str:
    """The option that names this store in a pasted command (a password is left out)."""
    if Path(url) == workspace / ".signoff" / "signoff.db":
        return f"--workspace {shlex.quote(str(workspace))}"
    if "://" in url:
        parts = urlsplit(url)
        if parts.password:
            host = parts.hostname or ""
            netloc = f"{parts.username}:…@{host}" + (f":{parts.port}" if parts.port else "")
            url = urlunsplit(parts._replace(netloc=netloc))
    return f"--db {shlex.quote(url)}"


def _tool_of(ctx: Context, request_id: str) -> str:
    try:
        return ctx.store.get_request(request_id).call.name
    except NotFound:
        return ""


def run_view(ctx: Context, r: Request, messages: Sequence[Mapping[str, Any]]) -> RunView | None:
    if not r.run_id:
        return None
    try:
        run = ctx.store.get_run(r.run_id)
    except NotFound:
        return None
    index = result_index(r, messages) if r.state != "pending" else None
    after = steps_after(index, messages) if index is not None else ()
    waiting = tuple((x, _tool_of(ctx, x)) for x in run.waiting_on if x != r.id)
    decided = r.state != "pending"
    flag = store_flag(ctx.store_url, ctx.workspace)
    if run.status == "finished":
        situation, moving = "run_finished", False
    elif run.status in ("failed", "needs_attention"):
        situation, moving = f"run_{run.status}", False
    elif run.status == "running":
        situation, moving = "run_running", True
    elif not decided:
        situation, moving = "run_paused_here", False
    elif waiting:
        situation, moving = "run_waiting", False
    elif ctx.worker and run.id in ctx.worker_failures:
        situation, moving = "run_cannot_resume", False
    elif ctx.worker:
        situation, moving = "run_resuming", True
    else:
        situation, moving = "run_ready", False
    if situation == "run_cannot_resume":
        note = ctx.worker_failures.get(run.id, "")
    else:  # a finished run's note is its final answer, already under "what happened next"
        note = (run.note or "") if run.status != "finished" else ""
    return RunView(
        run=run,
        situation=situation,
        moving=moving,
        after=after,
        waiting=waiting,
        resume_hint=f"signoff resume {run.id} {flag}",
        worker_hint=f"signoff worker {flag}",
        note=note,
    )


__all__ = ["RunView", "Step", "run_view", "store_flag"]
