"""Pause / durable persist / resume, on the anchors' workload (../shared/bench-anchors).

    .venv/bin/python bench/pause_resume.py [--reps 3] [--ns 20,100,400] [--k 5]

The workload: a deterministic, history-driven fake model asks for one tool call per turn,
`run(cmd="echo step-NNNNN")`, N times, then answers "done"; the tool returns exactly 200
bytes; call i needs approval iff i % K == 0; every decision is approve. At each pause the
driver drops every object (store, runner, agent, model), builds fresh ones, loads the run
from SQLite, approves, and resumes. Every step is durable (WAL, synchronous=FULL).

Each configuration runs in its own fresh process; repetitions are interleaved; figures
are medians. The anchors' figures (LangGraph, OpenAI Agents SDK, Pydantic AI on the same
workload and machine) are printed beside ours, read from ../shared/bench-anchors/results.json.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

TOOL_BYTES = 200
# The anchors' own measurements (same workload and machine), read from their results file.
ANCHOR_RESULTS = Path(__file__).resolve().parents[2] / "shared" / "bench-anchors" / "results.json"


def load_anchors(n: int = 400) -> dict[str, dict[str, float]]:
    """Median figures per framework at `n`, or {} when the anchors' results are absent."""
    if not ANCHOR_RESULTS.exists():
        return {}
    doc = json.loads(ANCHOR_RESULTS.read_text())
    anchors = {}
    for name, by_n in doc["results"].items():
        m = by_n[str(n)]["hitl"]["median"]
        anchors[name] = {
            "cycle_ms": m["cycle_s_median"] * 1e3,
            "resume_ms": m["last_resume_s"] * 1e3,
            "bytes_written": m["logical_bytes_written"],
            "syscall_bytes": m["wchar_bytes"],
            "cold_resume_s": doc["cold_resume"][name]["spawn_to_next_model_call_s_median"],
        }
    return anchors


def wchar() -> int:
    with open("/proc/self/io") as f:
        for line in f:
            if line.startswith("wchar:"):
                return int(line.split()[1])
    return 0


# ----------------------------------------------------------------------- the workload


class Clock:
    """Model entry/exit times per value of c (tool results seen)."""

    def __init__(self) -> None:
        self.enter: dict[int, float] = {}
        self.exit: dict[int, float] = {}
        self.model_calls = 0
        self.tool_runs: list[str] = []


CLOCK = Clock()


def fake_reply(messages: list[dict[str, Any]], n: int) -> dict[str, Any]:
    c = sum(1 for m in messages if m.get("role") == "tool")
    CLOCK.enter.setdefault(c, time.perf_counter())
    CLOCK.model_calls += 1
    if c < n:
        reply = {
            "content": None,
            "tool_calls": [
                {
                    "id": f"call_{c + 1:05d}",
                    "type": "function",
                    "function": {
                        "name": "run",
                        "arguments": json.dumps({"cmd": f"echo step-{c + 1:05d}"}),
                    },
                }
            ],
        }
    else:
        reply = {"content": "done"}
    CLOCK.exit[c] = time.perf_counter()
    return reply


class FakeModel:
    """Stateless and history-driven, like the anchors' fake model: no copies, no record."""

    def __init__(self, n: int) -> None:
        self.n = n

    def complete(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]], *, on_text: Any = None
    ) -> dict[str, Any]:
        return fake_reply(messages, self.n)


def run_tool(cmd: str) -> str:
    CLOCK.tool_runs.append(cmd)
    head = f"$ {cmd}\nexit_code=0\nstdout: "
    return (head + "x" * TOOL_BYTES)[:TOOL_BYTES]


def build(db: str, n: int, k: int) -> tuple[Any, Any]:
    """A fresh store, agent, model and runner: everything a new process would build."""
    from signoff.policy import Policy
    from signoff.runs.agent import Agent
    from signoff.runs.runner import Runner
    from signoff.settings import Settings
    from signoff.store import open_store
    from signoff.tools import Registry, ToolSpec

    registry = Registry(builtins=False)
    registry.add(ToolSpec("run", "read", "other"))
    # i % K == 0 asks: the policy matches every call's command against these rules.
    ask = (
        [f"run(cmd=echo step-*{d})" for d in range(10) if k and d % k == 0]
        if k in (1, 2, 5, 10)
        else []
    )
    if k == 1:
        ask = ["run"]
    policy = Policy(
        Settings.from_rules(ask=ask), workspace=tempfile.gettempdir(), registry=registry
    )
    model = FakeModel(n)
    agent = Agent(
        model=model,
        tools={"run": run_tool},
        policy=policy,
        tool_specs=[{"type": "function", "function": {"name": "run"}}],
    )
    store = open_store(db)
    return store, Runner(store, agent, max_turns=2 * n + 10)


def logical_bytes(db: str) -> int:
    """Bytes of every row written over the run: append-only rows once, each rewritten
    document once per write (run doc per save; request doc per transition)."""
    conn = sqlite3.connect(db)
    total = 0
    total += conn.execute(
        "SELECT COALESCE(SUM(LENGTH(CAST(msg AS BLOB))), 0) FROM signoff_messages"
    ).fetchone()[0]
    total += conn.execute(
        "SELECT COALESCE(SUM(LENGTH(CAST(entry AS BLOB)) + 128), 0) FROM signoff_events"
    ).fetchone()[0]
    for (doc,) in conn.execute("SELECT doc FROM signoff_runs"):
        version = json.loads(doc).get("version", 1)
        total += len(doc.encode() if isinstance(doc, str) else doc) * max(1, version)
    for rid, doc in conn.execute("SELECT id, doc FROM signoff_requests"):
        writes = conn.execute(
            "SELECT COUNT(*) FROM signoff_events WHERE request_id = ?", (rid,)
        ).fetchone()[0]
        total += len(doc.encode() if isinstance(doc, str) else doc) * max(1, writes)
    conn.close()
    return int(total)


def disk_bytes(db: str) -> int:
    return sum(os.path.getsize(p) for p in (db, db + "-wal") if os.path.exists(p))


def one_run(n: int, k: int, mode: str) -> dict[str, Any]:
    from signoff.approvals import decide
    from signoff.models import Decision

    workdir = tempfile.mkdtemp(prefix="signoff-bench-")
    db = os.path.join(workdir, "signoff.db")
    if mode == "bare":
        return bare_run(n)
    w0 = wchar()
    t0 = time.perf_counter()
    store, runner = build(db, n, k)
    run = runner.start(
        [
            {"role": "system", "content": "You are a benchmark agent."},
            {"role": "user", "content": "run the workload"},
        ]
    )
    pauses = 0
    resume_parts: dict[str, float] = {}
    state_at_last_pause = 0
    while run.status == "paused":
        pauses += 1
        state_at_last_pause = disk_bytes(db)
        run_id, waiting = run.id, list(run.waiting_on)
        store.close()
        del store, runner, run  # refcounting frees them now, as a process exit would
        t_build = time.perf_counter()
        store, runner = build(db, n, k)  # fresh objects; load happens in resume
        t_loaded = time.perf_counter()
        for request_id in waiting:
            decide(
                store, request_id, Decision("approve"), actor="bench", policy=runner.agent.policy
            )
        t_approved = time.perf_counter()
        run = runner.resume(run_id)
        resume_parts = {
            "build_ms": (t_loaded - t_build) * 1e3,
            "approve_ms": (t_approved - t_loaded) * 1e3,
            "t_build": t_build,
        }
    total = time.perf_counter() - t0
    store.close()
    syscall = wchar() - w0
    assert run.status == "finished", run
    assert CLOCK.tool_runs == [f"echo step-{i:05d}" for i in range(1, n + 1)], "exactly once"
    assert CLOCK.model_calls == n + 1 + pauses * 0, (CLOCK.model_calls, n)
    gated = {i for i in range(1, n + 1) if k and i % k == 0}
    # cycle for call i: model returned call i (exit at c=i-1) -> next model call entered (c=i)
    steps = {i: (CLOCK.enter[i] - CLOCK.exit[i - 1]) * 1e3 for i in range(1, n + 1)}
    cycles = [steps[i] for i in sorted(gated)]
    ungated = [steps[i] for i in range(1, n + 1) if i not in gated]
    last = max(gated) if gated else None
    resume_ms = (CLOCK.enter[last] - resume_parts["t_build"]) * 1e3 if last else 0.0
    return {
        "n": n,
        "k": k,
        "mode": mode,
        "pauses": pauses,
        "total_wall_s": total,
        "cycle_ms": statistics.median(cycles) if cycles else 0.0,
        "ungated_ms": statistics.median(ungated) if ungated else 0.0,
        "resume_ms": resume_ms,
        "state_at_last_pause": state_at_last_pause,
        "on_disk_at_end": disk_bytes(db),
        "bytes_written": logical_bytes(db),
        "syscall_bytes": syscall,
    }


def bare_run(n: int) -> dict[str, Any]:
    """No signoff at all: the same model and tool in a plain in-memory loop."""
    t0 = time.perf_counter()
    messages: list[dict[str, Any]] = [{"role": "user", "content": "run the workload"}]
    while True:
        reply = fake_reply(messages, n)
        messages.append(reply)
        if not reply.get("tool_calls"):
            break
        for call in reply["tool_calls"]:
            cmd = json.loads(call["function"]["arguments"])["cmd"]
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": run_tool(cmd)})
    return {"n": n, "mode": "bare", "total_wall_s": time.perf_counter() - t0}


# ----------------------------------------------------------------------- cold resume


def cold_pause(db: str) -> None:
    """Child 1: start N=20, K=5; it pauses at call 5; exit."""
    store, runner = build(db, 20, 5)
    run = runner.start([{"role": "user", "content": "run the workload"}])
    assert run.status == "paused"
    print(json.dumps({"run_id": run.id, "waiting": run.waiting_on}))
    store.close()


def cold_resume(db: str, run_id: str, request_id: str) -> None:
    """Child 2: import, build, load, approve, continue; report when the model is entered."""
    from signoff.approvals import decide
    from signoff.models import Decision

    store, runner = build(db, 20, 5)
    decide(store, request_id, Decision("approve"), actor="bench", policy=runner.agent.policy)
    original = runner.agent.model.complete

    def first_call(*args: Any, **kwargs: Any) -> Any:
        print(json.dumps({"model_entered": time.time()}), flush=True)
        os._exit(0)  # measured: spawn -> next model call entered
        return original(*args, **kwargs)

    runner.agent.model.complete = first_call  # type: ignore[method-assign]
    runner.resume(run_id)


def measure_cold() -> dict[str, float]:
    workdir = tempfile.mkdtemp(prefix="signoff-cold-")
    db = os.path.join(workdir, "signoff.db")
    me = [sys.executable, __file__]
    paused = json.loads(
        subprocess.run([*me, "--cold-pause", db], capture_output=True, text=True, check=True)
        .stdout.strip()
        .splitlines()[-1]
    )
    start = time.time()
    out = subprocess.run(
        [*me, "--cold-resume", db, paused["run_id"], paused["waiting"][0]],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    entered = json.loads(out.strip().splitlines()[-1])["model_entered"]
    t = time.time()
    subprocess.run(
        [sys.executable, "-c", "import signoff.runs.runner, signoff.store.sqlite"], check=True
    )
    return {"cold_resume_s": entered - start, "import_only_s": time.time() - t}


# ----------------------------------------------------------------------- driver


def child(n: int, k: int, mode: str) -> None:
    print(json.dumps(one_run(n, k, mode)))


def spawn(n: int, k: int, mode: str) -> dict[str, Any]:
    out = subprocess.run(
        [sys.executable, __file__, "--child", str(n), str(k), mode],
        capture_output=True,
        text=True,
        check=False,
    )
    if out.returncode != 0:
        raise SystemExit(f"child {n} {k} {mode} failed:\n{out.stderr}")
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def mib(x: float) -> str:
    return f"{x / 2**20:.2f} MiB" if x >= 2**20 else f"{x / 1024:.0f} KiB"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--ns", default="20,100,400")
    parser.add_argument("--k", type=int, default=5)
    args = parser.parse_args()
    ns = [int(x) for x in args.ns.split(",")]
    configs = [(n, args.k, mode) for n in ns for mode in ("hitl", "hitl_never", "bare")]
    results: dict[tuple[int, str], list[dict[str, Any]]] = {}
    for _ in range(args.reps):  # interleaved, shuffled rounds
        order = configs[:]
        random.shuffle(order)
        for n, k, mode in order:
            results.setdefault((n, mode), []).append(
                spawn(n, 0 if mode == "hitl_never" else k, mode)
            )

    def med(n: int, mode: str, key: str) -> float:
        return float(statistics.median(r[key] for r in results[(n, mode)]))

    print(f"signoff, SQLite, K={args.k}, medians of {args.reps} fresh-process runs")
    print(
        f"{'N':>4} {'pauses':>6} {'wall s':>8} {'cycle ms':>9} {'ungated ms':>10} "
        f"{'resume ms':>9} {'state@pause':>12} {'on disk':>10} {'written':>10} "
        f"{'syscall':>10} {'never/bare':>10}"
    )
    for n in ns:
        never_ratio = med(n, "hitl_never", "total_wall_s") / med(n, "bare", "total_wall_s")
        print(
            f"{n:>4} {int(med(n, 'hitl', 'pauses')):>6} {med(n, 'hitl', 'total_wall_s'):>8.3f} "
            f"{med(n, 'hitl', 'cycle_ms'):>9.2f} {med(n, 'hitl', 'ungated_ms'):>10.2f} "
            f"{med(n, 'hitl', 'resume_ms'):>9.2f} "
            f"{mib(med(n, 'hitl', 'state_at_last_pause')):>12} "
            f"{mib(med(n, 'hitl', 'on_disk_at_end')):>10} "
            f"{mib(med(n, 'hitl', 'bytes_written')):>10} "
            f"{mib(med(n, 'hitl', 'syscall_bytes')):>10} {never_ratio:>10.2f}"
        )
    cold = measure_cold()
    print(
        f"cold resume (spawn -> next model call): {cold['cold_resume_s']:.3f} s; "
        f"import only: {cold['import_only_s']:.3f} s"
    )
    anchors = load_anchors()
    print(f"\nanchors at N=400 ({ANCHOR_RESULTS if anchors else 'results file not found'}):")
    print(
        f"{'framework':<14} {'cycle ms':>9} {'resume ms':>9} {'written':>11} {'syscall':>11} "
        f"{'cold s':>7}"
    )
    for name, a in anchors.items():
        print(
            f"{name:<14} {a['cycle_ms']:>9.1f} {a['resume_ms']:>9.1f} "
            f"{mib(a['bytes_written']):>11} {mib(a['syscall_bytes']):>11} "
            f"{a['cold_resume_s']:>7.2f}"
        )
    top = max(ns)
    print(
        json.dumps(
            {
                f"n{top}_bytes_written": med(top, "hitl", "bytes_written"),
                f"n{top}_syscall_bytes": med(top, "hitl", "syscall_bytes"),
                f"n{top}_cycle_ms": round(med(top, "hitl", "cycle_ms"), 3),
                f"n{top}_resume_ms": round(med(top, "hitl", "resume_ms"), 3),
                f"n{top}_ungated_ms": round(med(top, "hitl", "ungated_ms"), 3),
                f"n{top}_total_wall_s": round(med(top, "hitl", "total_wall_s"), 3),
                f"n{top}_never_vs_bare": round(
                    med(top, "hitl_never", "total_wall_s") / med(top, "bare", "total_wall_s"), 2
                ),
                "cold_resume_s": round(cold["cold_resume_s"], 3),
                "import_only_s": round(cold["import_only_s"], 3),
            }
        )
    )


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child(int(sys.argv[2]), int(sys.argv[3]), sys.argv[4])
    elif len(sys.argv) > 1 and sys.argv[1] == "--cold-pause":
        cold_pause(sys.argv[2])
    elif len(sys.argv) > 1 and sys.argv[1] == "--cold-resume":
        cold_resume(sys.argv[2], sys.argv[3], sys.argv[4])
    else:
        main()
