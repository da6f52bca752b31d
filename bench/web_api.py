"""The web API under load: list and decide latency, decisions per second, and the time from
a decision (HTTP POST returned) to the waiting agent having resumed and finished its run.

A real uvicorn server (in a thread) over SQLite and PostgreSQL; a real httpx client with a
Bearer token; a `signoff.runs.worker.work` worker in another thread waiting on the events feed
(PostgreSQL: LISTEN/NOTIFY; SQLite: polling).

Usage: python bench/web_api.py [--requests 200] [--resumes 10] [--pg postgresql://…]
Last line: one JSON object (`decide_per_s`, `decide_p99_ms`, `decision_to_resume_s`, ...).
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import tempfile
import threading
import time
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import httpx
import uvicorn

from signoff.accounts import Accounts
from signoff.cli.serve import listen
from signoff.llm import ScriptedModel
from signoff.models import Request, ToolCall, Verdict
from signoff.policy import Policy
from signoff.runs.agent import Agent
from signoff.runs.runner import Runner
from signoff.runs.worker import work
from signoff.settings import Settings
from signoff.store import open_store
from signoff.tools import Registry, ToolSpec
from signoff.web.app import create_app

PG_DEFAULT = os.environ.get("SIGNOFF_BENCH_PG", "postgresql://postgres@127.0.0.1:5432/test")


def make_agent(metadata: Mapping[str, Any]) -> Agent:
    reg = Registry()
    reg.add(ToolSpec("send", "external"))
    first = {
        "content": "",
        "tool_calls": [
            {
                "id": "c1",
                "type": "function",
                "function": {"name": "send", "arguments": json.dumps({"to": "x"})},
            }
        ],
    }

    def reply(messages: list[dict[str, Any]]) -> dict[str, Any]:
        done = any(m.get("role") == "assistant" for m in messages)
        return {"content": "done"} if done else first

    return Agent(
        model=ScriptedModel.history_driven(reply),
        tools={"send": lambda to: f"sent {to}"},
        policy=Policy(Settings.from_rules(), workspace=Path("."), registry=reg),
    )


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000


def bench(url: str, n: int, resumes: int) -> dict[str, Any]:
    store = open_store(url)
    accounts = Accounts(url)
    token = accounts.add(f"bench{uuid.uuid4().hex[:6]}", "admin")
    app = create_app(url, workspace=".", settings=Settings(), store=store, accounts=accounts)
    sock = listen("127.0.0.1", 0)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", timeout_graceful_shutdown=1))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.01)
    base = f"http://127.0.0.1:{sock.getsockname()[1]}"
    verdict = Verdict("ask", "high", None, ("bench",), "external")
    ids = [
        store.create_request(
            Request(
                id="", call=ToolCall("send", {"to": f"u{i}"}, "c"), verdict=verdict, run_id=None
            )
        ).id
        for i in range(n)
    ]
    # TCP_NODELAY: httpcore writes headers and body separately (Nagle + delayed ACK = 40 ms)
    transport = httpx.HTTPTransport(socket_options=[(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)])
    client = httpx.Client(
        base_url=base, headers={"Authorization": f"Bearer {token}"}, transport=transport
    )
    list_times, decide_times = [], []
    for _ in range(min(50, n)):
        t0 = time.perf_counter()
        client.get("/api/requests?limit=50").raise_for_status()
        list_times.append(time.perf_counter() - t0)
    start = time.perf_counter()
    for rid in ids:
        t0 = time.perf_counter()
        client.post(f"/api/requests/{rid}/decide", json={"kind": "approve"}).raise_for_status()
        decide_times.append(time.perf_counter() - t0)
    elapsed = time.perf_counter() - start

    stop = threading.Event()
    worker_store = open_store(url)
    worker = threading.Thread(
        target=work, args=(worker_store,), kwargs={"poll": 5.0, "stop": stop.is_set}, daemon=True
    )
    worker.start()
    resume_times = []
    runner = Runner(store, make_agent({}), agent_ref="__main__:make_agent")
    for _ in range(resumes):
        run = runner.start([{"role": "user", "content": "go"}])
        rid = run.waiting_on[0]
        client.post(f"/api/requests/{rid}/decide", json={"kind": "approve"}).raise_for_status()
        t0 = time.perf_counter()
        while store.get_run(run.id).status != "finished":
            time.sleep(0.002)
        resume_times.append(time.perf_counter() - t0)
    stop.set()
    store.record("bench.stop", {})  # wake the worker
    worker.join(timeout=10)
    worker_store.close()
    client.close()
    server.should_exit = True
    thread.join(timeout=10)
    store.close()
    accounts.close()
    return {
        "decide_per_s": round(n / elapsed, 1),
        "decide_p50_ms": round(pct(decide_times, 0.5), 2),
        "decide_p99_ms": round(pct(decide_times, 0.99), 2),
        "list_p50_ms": round(pct(list_times, 0.5), 2),
        "list_p99_ms": round(pct(list_times, 0.99), 2),
        "decision_to_resume_s": round(statistics.median(resume_times), 4),
        "decision_to_resume_max_s": round(max(resume_times), 4),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--resumes", type=int, default=10)
    parser.add_argument("--pg", default=PG_DEFAULT)
    args = parser.parse_args()
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        results["sqlite"] = bench(str(Path(tmp) / "bench.db"), args.requests, args.resumes)
        print("sqlite", results["sqlite"])
    schema = f"bench_web_{uuid.uuid4().hex[:8]}"
    try:
        import psycopg

        with psycopg.connect(args.pg, autocommit=True) as conn:
            conn.execute(f"CREATE SCHEMA {schema}")
        sep = "&" if "?" in args.pg else "?"
        results["postgres"] = bench(
            f"{args.pg}{sep}options=-csearch_path%3D{schema}", args.requests, args.resumes
        )
        print("postgres", results["postgres"])
    except Exception as exc:
        print(f"postgres skipped: {exc}")
    finally:
        try:
            import psycopg

            with psycopg.connect(args.pg, autocommit=True) as conn:
                conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
        except Exception:
            pass
    main_backend = results.get("postgres") or results["sqlite"]
    print(
        json.dumps(
            {
                **main_backend,
                "backend": "postgres" if "postgres" in results else "sqlite",
                "sqlite": results["sqlite"],
                "postgres": results.get("postgres"),
            }
        )
    )


if __name__ == "__main__":
    main()
