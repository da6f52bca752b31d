"""Resuming deferred Claude Code sessions once a person decided (`signoff worker`).

With `ask = "defer"` a headless `claude -p` run stops at a call that needs approval (the
hook answered `defer`) and the request waits in the store. When it is decided (or
expires), the worker runs `claude -p --resume SESSION` in the session's directory; Claude
Code fires the hook again for the same call, and the hook answers from the decision (same
request id). The worker follows the store's event feed with its own acknowledged cursor,
so each decision resumes its session once; if the worker dies mid-resume it resumes again,
and the hook refuses to hand an approved call over a second time.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
from collections.abc import Callable, Sequence
from typing import Any

from ..exceptions import InvalidInput, NotFound
from ..kinds import REQUEST_DECIDED, REQUEST_EXPIRED, SESSION_OUTCOME
from ..models import Request
from ..settings import load_settings
from ..store import Store
from .core import HookOptions, hook_options

CONSUMER = "adapters:claude-code:defer"
_SESSION = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
Runner = Callable[..., Any]  # subprocess.run's shape


def resume_command(request: Request, options: HookOptions) -> list[str]:
    """`claude -p --resume SESSION [resume_args...]` for a deferred request."""
    session = request.metadata.get("session_id")
    if not isinstance(session, str) or not _SESSION.match(session):
        raise InvalidInput(
            f"request {request.id}: session id {session!r} is not one signoff resumes "
            "(letters, digits, '.', '_', '-')"
        )
    return [*shlex.split(options.claude), "-p", "--resume", session, *options.resume_args]


def deferred(request: Request) -> bool:
    meta = request.metadata
    return meta.get("client") == "claude-code" and meta.get("ask") == "defer"


def resume(store: Store, request: Request, *, run: Runner = subprocess.run) -> int:
    """Resume the request's session; the exit code goes on the record."""
    meta = request.metadata
    cwd = str(meta.get("cwd") or "")
    workspace = str(meta.get("workspace") or cwd)
    if not os.path.isdir(cwd):
        raise InvalidInput(f"request {request.id}: its session's directory {cwd!r} is gone")
    command = resume_command(request, hook_options(load_settings(workspace)))
    done = run(command, cwd=cwd, stdin=subprocess.DEVNULL, capture_output=True, check=False)
    code = int(done.returncode)
    store.record(
        SESSION_OUTCOME,
        {
            "client": "claude-code",
            "session_id": meta.get("session_id"),
            "outcome": "resumed",
            "request": request.id,
            "state": request.state,
            "command": command,
            "exit": code,
        },
        run_id=f"claude-code-{meta.get('session_id')}",
        request_id=request.id,
    )
    return code


def resume_decided(store: Store, *, run: Runner = subprocess.run, limit: int = 100) -> int:
    """Resume every deferred session whose request was decided or expired since the last
    call; returns how many were resumed."""
    resumed = 0
    events = store.read_events(CONSUMER, limit=limit)
    for event in events:
        if event.kind in (REQUEST_DECIDED, REQUEST_EXPIRED) and event.request_id:
            try:
                request = store.get_request(event.request_id)
            except NotFound:
                request = None
            if request is not None and deferred(request) and request.state != "pending":
                try:
                    resume(store, request, run=run)
                    resumed += 1
                except InvalidInput as exc:
                    store.record(
                        SESSION_OUTCOME,
                        {"client": "claude-code", "outcome": "not_resumed", "why": str(exc)},
                        request_id=request.id,
                    )
        store.ack(CONSUMER, event.seq)
    return resumed


def resume_all(store: Store, *, run: Runner = subprocess.run) -> int:
    """`resume_decided` until the feed is read to its end."""
    total = 0
    while True:
        before = store.read_events(CONSUMER, limit=1)
        if not before:
            return total
        total += resume_decided(store, run=run)


__all__: Sequence[str] = ["CONSUMER", "resume", "resume_all", "resume_command", "resume_decided"]
