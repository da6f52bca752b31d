"""The HTTP hook under load: `POST /hooks/claude-code` on a running `signoff serve` (SQLite
store in a temporary project), from 1, 8, 32 and 128 clients at once, each with its own
connection, each sending `git status` PreToolUse events (allowed, judged and recorded)
back to back, once all are connected. Per client count: calls/s, median and p99 latency.

The clients are one asyncio process beside the server, on the same machine: on a small
machine they take CPU from it, so read the figures against each other (one run, one
machine), not as the server's capacity alone.

`--token account` authenticates with an account's API token (an accounts read per call)
instead of `$SIGNOFF_HOOK_TOKEN` (a comparison in memory).

Usage: python bench/http_hook_load.py [--clients 1,8,32,128] [--calls 2000] [--token env]
Last line: one JSON object (`by_clients`: {N: {calls_per_s, p50_ms, p99_ms}}, ...).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SRC = str(Path(__file__).resolve().parent.parent / "src")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def event(ws: str, client: int, n: int) -> bytes:
    return json.dumps(
        {
            "session_id": f"bench-{client}",
            "tool_use_id": f"toolu_{client}_{n}",
            "cwd": ws,
            "permission_mode": "default",
            "hook_event_name": "PreToolUse",
            "tool_name": "Bash",
            "tool_input": {"command": "git status"},
        }
    ).encode()


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def load(url: str, token: str, ws: str, clients: int, calls: int) -> dict[str, float]:
    import httpx

    per_client = max(1, calls // clients)
    times: list[float] = []
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    ready = 0
    go = asyncio.Event()
    started = [0.0]

    async def one(k: int) -> None:
        nonlocal ready
        limits = httpx.Limits(max_connections=1)
        async with httpx.AsyncClient(base_url=url, headers=headers, limits=limits) as client:
            await client.post("/hooks/claude-code", content=event(ws, k, -1), timeout=60)
            ready += 1  # connected and warm: the timed part starts when all are
            if ready == clients:
                started[0] = time.perf_counter()
                go.set()
            await go.wait()
            for n in range(per_client):
                start = time.perf_counter()
                answer = await client.post(
                    "/hooks/claude-code", content=event(ws, k, n), timeout=60
                )
                times.append((time.perf_counter() - start) * 1000)
                decision = answer.json()["hookSpecificOutput"]["permissionDecision"]
                if decision != "allow":
                    raise SystemExit(f"the hook answered {decision}: {answer.text}")

    await asyncio.gather(*(one(k) for k in range(clients)))
    elapsed = time.perf_counter() - started[0]
    return {
        "calls_per_s": round(len(times) / elapsed, 1),
        "p50_ms": round(statistics.median(times), 2),
        "p99_ms": round(pct(times, 0.99), 2),
        "calls": len(times),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", default="1,8,32,128")
    parser.add_argument("--calls", type=int, default=2000, help="per client count, in all")
    parser.add_argument("--token", choices=("env", "account"), default="env")
    opts = parser.parse_args()
    counts = [int(c) for c in opts.clients.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        ws = os.path.realpath(os.path.join(tmp, "proj"))
        os.makedirs(ws)
        subprocess.run(["git", "init", "-q", ws], check=True)
        env = {k: v for k, v in os.environ.items() if k not in ("SIGNOFF_DB",)}
        env.update(
            PYTHONPATH=SRC,
            HOME=os.path.join(tmp, "home"),
            SIGNOFF_CONFIG_DIR=os.path.join(tmp, "config"),
            SIGNOFF_HOOK_TOKEN="bench-token",
            SIGNOFF_LOG_LEVEL="WARNING",
        )
        token = "bench-token"
        if opts.token == "account":
            made = subprocess.run(
                [sys.executable, "-m", "signoff", "users", "add", "laptop", "--role", "viewer"],
                env=env,
                cwd=ws,
                capture_output=True,
                text=True,
                check=True,
            )
            token = made.stdout.splitlines()[1].strip()
        port = free_port()
        server = subprocess.Popen(
            [sys.executable, "-m", "signoff", "serve", "--workspace", ws, "--port", str(port)],
            env=env,
            cwd=ws,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        url = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 30
            while True:
                try:
                    with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                        break
                except OSError:
                    if time.monotonic() > deadline or server.poll() is not None:
                        raise SystemExit("signoff serve did not start") from None
                    time.sleep(0.1)
            asyncio.run(load(url, token, ws, 4, 200))  # warm-up
            results = {n: asyncio.run(load(url, token, ws, n, opts.calls)) for n in counts}
        finally:
            server.terminate()
            server.wait(timeout=30)
    print(f"{'clients':>8} {'calls/s':>9} {'p50 ms':>9} {'p99 ms':>9}")
    for n, r in results.items():
        print(f"{n:>8} {r['calls_per_s']:>9.1f} {r['p50_ms']:>9.2f} {r['p99_ms']:>9.2f}")
    print(
        json.dumps(
            {
                "by_clients": results,
                "token": opts.token,
                "calls": opts.calls,
                "cpus": os.cpu_count(),
            }
        )
    )


if __name__ == "__main__":
    main()
