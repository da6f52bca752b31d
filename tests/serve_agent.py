"""An agent that a `signoff serve` or `signoff worker` subprocess rebuilds
(`serve_agent:make_agent`, with tests/ on PYTHONPATH): turn 1 asks to `send` (external, so
it asks); each run of `send` appends one line to the file named by the run's metadata, so a
test counts executions across processes; then the model's final text quotes the result."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from signoff.llm import ScriptedModel
from signoff.policy import Policy
from signoff.runs.agent import Agent
from signoff.settings import Settings
from signoff.tools import Registry, spec_from_function

AGENT_REF = "serve_agent:make_agent"


def make_agent(metadata: Mapping[str, Any]) -> Agent:
    log = Path(metadata["log"])

    def send(to: str, idempotency_key: str | None = None) -> str:
        """Send a message (external)."""
        with log.open("a", encoding="utf-8") as out:
            out.write(f"{to} {idempotency_key}\n")
        return f"sent to {to}"

    reg = Registry()
    reg.add(spec_from_function(send, tier="external", subject_args=("to",)))
    policy = Policy(Settings.from_rules(), workspace=log.parent, registry=reg)
    first = {
        "content": f"I will send it to {metadata['to']}.",
        "tool_calls": [
            {
                "id": "c1",
                "type": "function",
                "function": {"name": "send", "arguments": json.dumps({"to": metadata["to"]})},
            }
        ],
    }

    def reply(messages: list[dict[str, Any]]) -> dict[str, Any]:
        if not any(m.get("role") == "assistant" for m in messages):
            return first
        last = [m for m in messages if m.get("role") == "tool"][-1]
        return {"content": f"Done: {last.get('content')}"}

    return Agent(model=ScriptedModel.history_driven(reply), tools={"send": send}, policy=policy)


__all__ = ["AGENT_REF", "make_agent"]
