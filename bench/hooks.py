"""Per-call latency of the Claude Code hook: `signoff hook claude-code` as a fresh process
(the way Claude Code runs a command hook) for a `Read`, a `Bash` `git status` and a `Bash`
with a long pipeline, beside a bare `python -c pass` in the same run (round-robin, so a
slow moment of the shared machine does not land on one command only); and the HTTP hook,
`POST /hooks/claude-code` on a running `signoff serve`.

Each call is judged and recorded (a verdict event in the project's SQLite store), as in use.
Bytecode is cached, as for an installed package (PYTHONPYCACHEPREFIX, one warm-up run).
Targets (issue 15): command hook median <= 5x the bare interpreter; HTTP hook median <= 5 ms.

Usage: python bench/hooks.py [--runs 15] [--http-runs 200]
Last line: one JSON object (`command_hook_vs_bare`, `http_hook_ms`, ...).
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

SRC = str(Path(__file__).resolve().parent.parent / "src")
PIPELINE = (
    "git log --oneline -n 200 | grep -v WIP | sed 's/^[0-9a-f]* //' | sort | uniq -c "
    "| sort -rn | head -20 | awk '{print $2}' | tr a-z A-Z | cut -c1-40 | wc -l"
)
CALLS: dict[str, tuple[str, dict[str, Any]]] = {
    "read": ("Read", {"file_path": "{ws}/README.md"}),
    "git_status": ("Bash", {"command": "git status"}),
    "pipeline": ("Bash", {"command": PIPELINE}),
}


def event(ws: str, n: int, tool: str, args: dict[str, Any]) -> str:
    filled = json.loads(json.dumps(args).replace("{ws}", ws))
    return json.dumps(
        {
            "session_id": "bench",
            "tool_use_id": f"toolu_{n}",
            "cwd": ws,
            "permission_mode": "default",
            "hook_event_name": "PreToolUse",
            "tool_name": tool,
            "tool_input": filled,
        }
    )


def timed(argv: list[str], stdin: str, env: dict[str, str], cwd: str) -> float:
    start = time.perf_counter()
    done = subprocess.run(argv, input=stdin, capture_output=True, text=True, env=env, cwd=cwd)
    elapsed = (time.perf_counter() - start) * 1000
    if done.returncode != 0:
        raise SystemExit(f"{argv} failed ({done.returncode}): {done.stderr}")
    return elapsed


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def http_bench(ws: str, env: dict[str, str], runs: int) -> list[float]:
    import httpx

    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "signoff", "serve", "--workspace", ws, "--port", str(port)],
        env={**env, "SIGNOFF_HOOK_TOKEN": "bench-token", "SIGNOFF_LOG_LEVEL": "WARNING"},
        cwd=ws,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        headers = {"Authorization": "Bearer bench-token", "Content-Type": "application/json"}
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", headers=headers) as client:
            deadline = time.monotonic() + 30
            while True:
                try:
                    client.get("/api/health")
                    break
                except httpx.TransportError:
                    if time.monotonic() > deadline:
                        raise SystemExit("signoff serve did not start") from None
                    time.sleep(0.1)
            times = []
            for n in range(runs + 10):
                tool, args = CALLS["git_status"]
                body = event(ws, 10_000 + n, tool, args)
                start = time.perf_counter()
                response = client.post("/hooks/claude-code", content=body)
                elapsed = (time.perf_counter() - start) * 1000
                answer = response.json()["hookSpecificOutput"]["permissionDecision"]
                if answer != "allow":
                    raise SystemExit(f"HTTP hook answered {answer}: {response.text}")
                if n >= 10:  # the first calls warm the server up
                    times.append(elapsed)
            return times
    finally:
        server.terminate()
        server.wait(timeout=10)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--http-runs", type=int, default=200)
    opts = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        ws = os.path.realpath(os.path.join(tmp, "proj"))
        os.makedirs(ws)
        Path(ws, "README.md").write_text("hello\n")
        subprocess.run(["git", "init", "-q", ws], check=True)
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env.update(
            PYTHONPATH=SRC,
            PYTHONPYCACHEPREFIX=os.path.join(tmp, "pycache"),
            HOME=os.path.join(tmp, "home"),
            SIGNOFF_CONFIG_DIR=os.path.join(tmp, "config"),
        )
        env.pop("SIGNOFF_DB", None)
        hook = [sys.executable, "-m", "signoff", "hook", "claude-code"]
        results: dict[str, list[float]] = {"bare": [], **{name: [] for name in CALLS}}
        for warm in range(2):  # bytecode, the store's migrations
            for tool, args in CALLS.values():
                timed(hook, event(ws, warm, tool, args), env, ws)
        n = 100
        for _ in range(opts.runs):
            results["bare"].append(timed([sys.executable, "-c", "pass"], "", env, ws))
            for name, (tool, args) in CALLS.items():
                n += 1
                results[name].append(timed(hook, event(ws, n, tool, args), env, ws))
        http = http_bench(ws, env, opts.http_runs)
    median = {name: statistics.median(times) for name, times in results.items()}
    bare = median["bare"]
    print(f"{'call':<12} {'median ms':>10} {'x bare':>8}")
    for name, value in median.items():
        print(f"{name:<12} {value:>10.1f} {value / bare:>8.2f}")
    http_ms = statistics.median(http)
    print(f"{'http':<12} {http_ms:>10.2f}   (POST /hooks/claude-code, git status)")
    worst = max(median[name] for name in CALLS) / bare
    print(
        json.dumps(
            {
                "bare_ms": round(bare, 1),
                **{f"{name}_ms": round(median[name], 1) for name in CALLS},
                "command_hook_vs_bare": round(worst, 2),
                "command_hook_vs_bare_by_call": {
                    name: round(median[name] / bare, 2) for name in CALLS
                },
                "http_hook_ms": round(http_ms, 2),
                "targets_met": worst <= 5.0 and http_ms <= 5.0,
                "runs": opts.runs,
                "http_runs": opts.http_runs,
                "cpus": os.cpu_count(),
            }
        )
    )


if __name__ == "__main__":
    main()
