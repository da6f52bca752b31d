"""Helpers for the web tests (imported, not a conftest): a real server, a real agent.

`LiveServer` runs uvicorn in a thread on a free port over a real SQLite file.
`build_stats_history` writes a small history for the statistics page.
`make_agent` is the agent factory runs are rebuilt from (`web_helpers:make_agent`), so a
worker (`signoff.runs.worker.work`) resumes them in this process like any other.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import httpx
import uvicorn

from signoff.accounts import Accounts
from signoff.approvals import decide
from signoff.llm import ScriptedModel
from signoff.models import Decision, Request, ToolCall, Verdict
from signoff.policy import Policy
from signoff.runs.agent import Agent, Run
from signoff.runs.runner import Runner
from signoff.settings import Settings
from signoff.store import Store, open_store
from signoff.tools import Registry, spec_from_function
from signoff.web.app import create_app

AGENT_REF = "web_helpers:make_agent"
SENT: list[dict[str, Any]] = []
DAY = 86400.0
# model-written text with markup, for the statistics page
EVIL = "<script>window.__pwned=1</script>"
EVIL_TOOL = '<img src=x onerror="window.__pwned=2">'
ALLOW_RULE = f"send(to={EVIL}'s)"  # a quote too: the shell command must quote it exactly
DENY_RULE = f'Bash(curl "{EVIL}":*)'


def send(to: str, body: str = "", idempotency_key: str | None = None) -> str:
    """Send a message (external)."""
    SENT.append({"to": to, "body": body, "key": idempotency_key})
    return f"sent to {to}"


def lookup(key: str) -> str:
    """Read a value."""
    return f"value of {key}"


def make_agent(metadata: Mapping[str, Any]) -> Agent:
    """Turn 1: the scripted call from metadata; then a final answer quoting the result."""
    reg = Registry()
    reg.add(spec_from_function(send, tier="external", subject_args=("to",)))
    reg.add(spec_from_function(lookup, tier="read"))
    policy = Policy(
        Settings.from_rules(), workspace=Path(metadata.get("workspace", ".")), registry=reg
    )
    first = {
        "content": metadata.get("intent", "I will send it."),
        "tool_calls": [
            {
                "id": "c1",
                "type": "function",
                "function": {
                    "name": metadata.get("tool", "send"),
                    "arguments": json.dumps(metadata["arguments"]),
                },
            }
        ],
    }

    def reply(messages: list[dict[str, Any]]) -> dict[str, Any]:
        if not any(m.get("role") == "assistant" for m in messages):
            return first
        last = [m for m in messages if m.get("role") == "tool"][-1]
        return {"content": f"Finished: {last.get('content')}"}

    return Agent(
        model=ScriptedModel.history_driven(reply),
        tools={"send": send, "lookup": lookup},
        policy=policy,
        approvers=tuple(metadata.get("approvers", ())),
    )


def start_run(store: Store, workspace: Path, arguments: dict[str, Any], **meta: Any) -> Run:
    metadata = {"workspace": str(workspace), "arguments": arguments, **meta}
    agent = make_agent(metadata)
    return Runner(store, agent, agent_ref=AGENT_REF).start(
        [{"role": "user", "content": "please send it"}], metadata=metadata
    )


def _ask(
    store: Store,
    run: str,
    name: str,
    args: dict[str, Any],
    at: float,
    *,
    suggested: str | None = None,
    rule: str | None = None,
) -> Request:
    call = ToolCall(name, args, f"c{at}")
    verdict = Verdict("ask", "high", rule, ("asks",), "external", suggested)
    store.record(
        "verdict", {"call": call.to_json(), "verdict": verdict.to_json()}, run_id=run, now=at
    )
    return store.create_request(
        Request("", call, verdict, run_id=run), now=at, ttl_seconds=10 * DAY
    )


def build_stats_history(store: Store, now: float) -> None:
    """Three days: allowed reads; `send` approved 5 times (an allow suggestion); a curl
    rejected 5 times (a deny suggestion); a skip, an edit-free answer and one pending."""
    t0 = now - 3 * DAY
    for i in range(6):
        call = ToolCall("read_file", {"path": f"f{i}"}, f"r{i}")
        store.record(
            "verdict",
            {
                "call": call.to_json(),
                "verdict": Verdict("allow", "none", None, (), "read").to_json(),
            },
            run_id="run-a",
            now=t0 + i,
        )
    for i in range(5):
        r = _ask(store, "run-a", "send", {"to": EVIL}, t0 + 100 + i, suggested=ALLOW_RULE)
        decide(
            store, r.id, Decision("approve", decided_at=r.created_at + 10 * (i + 1)), actor="alice"
        )
    for i in range(5):
        r = _ask(
            store, "run-b", "bash", {"command": f'curl "{EVIL}"'}, t0 + DAY + i, suggested=DENY_RULE
        )
        decide(
            store, r.id, Decision("reject", reason=EVIL, decided_at=r.created_at + 60), actor="bob"
        )
    skipped = _ask(store, "run-c", EVIL_TOOL, {"x": 1}, now - 3600, rule=f"{EVIL_TOOL}(x=1)")
    decide(store, skipped.id, Decision("skip", decided_at=now - 3000), actor="alice")
    _ask(store, "run-c", "send", {"to": "carol"}, now - 60)


def free_port() -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.bind(("127.0.0.1", 0))
    return sock


class LiveServer:
    """uvicorn in a thread, serving create_app over a SQLite file in `tmp`."""

    def __init__(self, tmp: Path, **options: Any) -> None:
        self.workspace = tmp / "ws"
        self.workspace.mkdir(exist_ok=True)
        self.db = str(tmp / "signoff.db")
        self.store = open_store(self.db)
        self.accounts = Accounts(self.db)
        self.app = create_app(self.db, workspace=self.workspace, settings=Settings(), **options)
        self.sock = free_port()
        self.port = self.sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        config = uvicorn.Config(
            self.app, log_level="warning", lifespan="on", timeout_graceful_shutdown=1
        )
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(
            target=self.server.run, kwargs={"sockets": [self.sock]}, daemon=True
        )

    def __enter__(self) -> LiveServer:
        self.thread.start()
        deadline = time.monotonic() + 10
        while not self.server.started:
            if time.monotonic() > deadline:
                raise RuntimeError("server did not start")
            time.sleep(0.02)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)
        self.sock.close()
        self.store.close()
        self.accounts.close()

    def client(self, token: str | None = None) -> httpx.Client:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        return httpx.Client(base_url=self.url, headers=headers, timeout=10)
