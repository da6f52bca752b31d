"""An importable agent whose one approved call takes a while: `slow_agent:build`. The run's
metadata names the file the tool writes to (`start PID KEY` as it begins, `done PID KEY`
when it ends) and how long it takes (`seconds`), for the lease tests of `signoff worker`."""

from __future__ import annotations

import os
import time
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


def _line(path: str, text: str) -> None:
    with open(path, "a") as f:
        f.write(text + "\n")
        f.flush()
        os.fsync(f.fileno())


def build(metadata: Mapping[str, Any]) -> Agent:
    effects = str(metadata["effects"])
    seconds = float(metadata.get("seconds", 0.0))

    def pay(amount: int, idempotency_key: str | None = None) -> str:
        _line(effects, f"start {os.getpid()} {idempotency_key}")
        time.sleep(seconds)
        _line(effects, f"done {os.getpid()} {idempotency_key}")
        return f"paid {amount}"

    registry = Registry(builtins=False)
    registry.add(ToolSpec("pay", "external", "other"))
    return Agent(
        model=ScriptedModel.history_driven(reply),
        tools={"pay": pay},
        policy=Policy(Settings(), workspace=os.path.dirname(effects), registry=registry),
    )
