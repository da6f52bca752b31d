"""A real agent process for the crash test of a turn of allowed calls: it kills itself
with SIGKILL inside one of them.

    python crash_turn_harness.py DB PHASE BOUNDARY EFFECTS_FILE

One turn holds CALLS calls of the notify-tier tool `append` (it runs without asking).
PHASE is start | resume. BOUNDARY is `before:N` (die as call N starts, before its effect),
`after:N` (die after call N's effect, before it returns) or `none`. Each real execution
appends a line `call N` to EFFECTS_FILE (fsync'd), so the test counts what the outside
world saw.
"""

from __future__ import annotations

import os
import signal
import sys
from typing import Any

from signoff.llm import ScriptedModel
from signoff.policy import Policy
from signoff.runs.agent import Agent
from signoff.runs.runner import Runner
from signoff.settings import Settings
from signoff.store import open_store
from signoff.tools import Registry, ToolSpec

CALLS = 3


def main(db: str, phase: str, boundary: str, effects: str) -> None:
    store = open_store(db)

    def append(n: int, idempotency_key: str | None = None) -> str:
        if phase == "start" and boundary == f"before:{n}":
            os.kill(os.getpid(), signal.SIGKILL)
        with open(effects, "a") as f:
            f.write(f"call {n}\n")
            f.flush()
            os.fsync(f.fileno())
        if phase == "start" and boundary == f"after:{n}":
            os.kill(os.getpid(), signal.SIGKILL)
        return f"appended {n}"

    def reply(messages: list[dict[str, Any]]) -> dict[str, Any]:
        if any(m.get("role") == "tool" for m in messages):
            return {"content": "done"}
        calls = [
            {"id": f"c{n}", "function": {"name": "append", "arguments": {"n": n}}}
            for n in range(1, CALLS + 1)
        ]
        return {"content": "appending", "tool_calls": calls}

    registry = Registry(builtins=False)
    registry.add(ToolSpec("append", "write", "other"))  # write tier: notify, never asks
    agent = Agent(
        model=ScriptedModel.history_driven(reply),
        tools={"append": append},
        policy=Policy(Settings(), workspace=os.path.dirname(db), registry=registry),
    )
    runner = Runner(store, agent, lease_seconds=0.5, worker=f"harness-{os.getpid()}")
    if phase == "start":
        run = runner.start([{"role": "user", "content": "append"}], run_id="run_turn")
    else:
        run = runner.resume("run_turn")
    print(run.status)
    store.close()


if __name__ == "__main__":
    main(*sys.argv[1:5])
