"""What saving each allowed call's result as it completes costs a turn (SQLite, durable).

    .venv/bin/python bench/turn_saves.py [--calls 1,10,50] [--rounds 7]

One turn of N calls of a `write`-tier tool (notify: it runs without asking, and its result
is saved as it completes, so that after a crash only the call in flight runs again), then
the model answers. The tool itself does nothing, so the figure is the driver's: the turn's
wall time, and the number of run saves, median of several fresh stores. A `read`-tier
tool's result is not saved on its own (repeating a read is harmless): its row is the
baseline.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from signoff.llm import ScriptedModel
from signoff.policy import Policy
from signoff.runs.agent import Agent
from signoff.runs.runner import Runner
from signoff.settings import Settings
from signoff.store import open_store
from signoff.tools import Registry, ToolSpec


def one_turn(calls: int, tier: str) -> tuple[float, int]:
    """(seconds for the whole run, run saves) with a fresh SQLite store."""
    with tempfile.TemporaryDirectory() as folder:
        store = open_store(str(Path(folder) / "signoff.db"))
        saves = 0
        original = store.save_run

        def counting(*args, **kwargs):  # type: ignore[no-untyped-def]
            nonlocal saves
            saves += 1
            return original(*args, **kwargs)

        store.save_run = counting  # type: ignore[method-assign]
        registry = Registry(builtins=False)
        registry.add(ToolSpec("step", tier, "other"))  # type: ignore[arg-type]
        turn = [
            {"id": f"c{i}", "function": {"name": "step", "arguments": {"i": i}}}
            for i in range(calls)
        ]
        agent = Agent(
            model=ScriptedModel([{"content": "go", "tool_calls": turn}, {"content": "done"}]),
            tools={"step": lambda i: "ok"},
            policy=Policy(Settings(), workspace=folder, registry=registry),
        )
        start = time.perf_counter()
        Runner(store, agent).start([{"role": "user", "content": "go"}])
        elapsed = time.perf_counter() - start
        store.close()
        return elapsed, saves


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", default="1,10,50")
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    print(f"{'calls':>5} {'tier':>6} {'turn ms':>9} {'saves':>6} {'ms/call':>8}")
    for calls in (int(c) for c in args.calls.split(",")):
        for tier in ("read", "write"):
            one_turn(calls, tier)  # warm up imports and the grammar
            runs = [one_turn(calls, tier) for _ in range(args.rounds)]
            ms = statistics.median(r[0] for r in runs) * 1000
            print(f"{calls:>5} {tier:>6} {ms:>9.1f} {runs[0][1]:>6} {ms / calls:>8.2f}")


if __name__ == "__main__":
    main()
