"""A real agent process for crash tests: it kills itself with SIGKILL at a chosen boundary.

    python crash_harness.py DB PHASE BOUNDARY EFFECTS_FILE

PHASE is start | decide | resume; BOUNDARY names where to die (or "none"). The tool
`charge` appends one line to EFFECTS_FILE per real execution (fsync'd), so the test can
count how often the outside world saw the call.
"""

from __future__ import annotations

import os
import signal
import sys
from typing import Any

from signoff.approvals import decide
from signoff.llm import ScriptedModel
from signoff.models import Decision
from signoff.policy import Policy
from signoff.runs.agent import Agent
from signoff.runs.runner import Runner
from signoff.settings import Settings
from signoff.store import open_store
from signoff.tools import Registry, ToolSpec

LEASE = 0.5


def die() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def main(db: str, phase: str, boundary: str, effects: str) -> None:
    store = open_store(db)

    def charge(amount: int, idempotency_key: str | None = None) -> str:
        if boundary == "during_execution" and phase == "resume":
            with open(effects + ".started", "a") as f:
                f.write(f"{idempotency_key}\n")
            die()
        with open(effects, "a") as f:
            f.write(f"{idempotency_key} {amount}\n")
            f.flush()
            os.fsync(f.fileno())
        if boundary == "after_execution" and phase == "resume":
            die()
        return f"charged {amount}"

    def reply(messages: list[dict[str, Any]]) -> dict[str, Any]:
        if any(m.get("role") == "tool" for m in messages):
            return {"content": "done"}
        return {
            "content": "charging",
            "tool_calls": [
                {"id": "c1", "function": {"name": "charge", "arguments": {"amount": 42}}}
            ],
        }

    registry = Registry(builtins=False)
    registry.add(ToolSpec("charge", "external", "other"))
    agent = Agent(
        model=ScriptedModel.history_driven(reply),
        tools={"charge": charge},
        policy=Policy(Settings(), workspace=os.path.dirname(db), registry=registry),
    )
    runner = Runner(store, agent, lease_seconds=LEASE, worker=f"harness-{os.getpid()}")

    if phase == "start":
        if boundary == "after_request":
            # Requests are stored with their turn, in one transaction: die right after it.
            original = store.save_run

            def save_then_die(*args: Any, **kwargs: Any) -> Any:
                saved = original(*args, **kwargs)
                if kwargs.get("requests"):
                    die()
                return saved

            store.save_run = save_then_die  # type: ignore[method-assign]
        run = runner.start([{"role": "user", "content": "charge it"}], run_id="run_crash")
        print(run.status, ",".join(run.waiting_on))
    elif phase == "decide":
        (request,) = store.list_requests(state="pending")
        decide(store, request.id, Decision("approve"), actor="alice", policy=agent.policy)
        if boundary == "after_decision":
            die()
        print("decided", request.id)
    elif phase == "resume":
        if boundary == "after_claim":
            original_claim = store.claim

            def claim_then_die(*args: Any, **kwargs: Any) -> Any:
                original_claim(*args, **kwargs)
                die()

            store.claim = claim_then_die  # type: ignore[method-assign]
        run = runner.resume("run_crash")
        print(run.status, ",".join(run.waiting_on), run.note or "")
    store.close()


if __name__ == "__main__":
    main(*sys.argv[1:5])
