"""An importable agent for worker races: `race_agent:build` (the run's metadata names the
file the tool appends to, once per real execution)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from signoff.llm import ScriptedModel
from signoff.policy import Policy
from signoff.runs.agent import Agent
from signoff.settings import Settings
from signoff.tools import Registry, ToolSpec


def reply(messages: list[dict[str, Any]]) -> dict[str, Any]:
    if any(m.get("role") == "tool" for m in messages):
        return {"content": "done"}
    return {
        "content": "paying",
        "tool_calls": [{"id": "c1", "function": {"name": "pay", "arguments": {"amount": 7}}}],
    }


def build(metadata: Mapping[str, Any]) -> Agent:
    effects = str(metadata["effects"])

    def pay(amount: int, idempotency_key: str | None = None) -> str:
        with open(effects, "a") as f:
            f.write(f"{os.getpid()} {idempotency_key} {amount}\n")
            f.flush()
            os.fsync(f.fileno())
        return f"paid {amount}"

    registry = Registry(builtins=False)
    registry.add(ToolSpec("pay", "external", "other"))
    return Agent(
        model=ScriptedModel.history_driven(reply),
        tools={"pay": pay},
        policy=Policy(Settings(), workspace=os.path.dirname(effects), registry=registry),
    )
