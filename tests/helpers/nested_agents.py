"""Three importable agents nested in each other, for the nested-run tests:
`nested_agents:boss` delegates to `manager`, which delegates to `clerk`, which asks to
`charge` 42 (an external call: a person decides). SCRIPTED models (no LLM): each agent
passes the task down and, once its tool result is in, answers with its own name and that
result, so the test can see an answer travel up exactly once.

The run's metadata: `effects` (a file that gets one line per real charge, fsync'd) and,
optionally, `deny_charge` (the clerk's settings deny the charge)."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import Any

from signoff.llm import ScriptedModel
from signoff.policy import Policy
from signoff.runs.agent import Agent
from signoff.runs.nested import Delegate
from signoff.settings import Settings
from signoff.tools import Registry, ToolSpec

DELEGATE = Delegate(
    {
        "manager": "nested_agents:manager",
        "clerk": "nested_agents:clerk",
    }
)


def script(me: str, call: tuple[str, dict[str, Any]]) -> Callable[[list[Any]], dict[str, Any]]:
    def reply(messages: list[dict[str, Any]]) -> dict[str, Any]:
        results = [m for m in messages if m.get("role") == "tool"]
        if results:
            return {"content": f"{me}: {results[-1]['content']}"}
        name, arguments = call
        return {
            "content": f"{me} passes it on",
            "tool_calls": [
                {"id": f"{me}_call", "function": {"name": name, "arguments": arguments}}
            ],
        }

    return reply


def _policy(workspace: str, *specs: ToolSpec, deny: tuple[str, ...] = ()) -> Policy:
    registry = Registry(builtins=False)
    for spec in specs:
        registry.add(spec)
    return Policy(Settings.from_rules(deny=list(deny)), workspace=workspace, registry=registry)


def _workspace(metadata: Mapping[str, Any]) -> str:
    return os.path.dirname(str(metadata["effects"]))


def boss(metadata: Mapping[str, Any]) -> Agent:
    return Agent(
        model=ScriptedModel.history_driven(
            script("boss", ("delegate", {"agent": "manager", "task": "get 42 charged"}))
        ),
        tools={"delegate": DELEGATE},
        policy=_policy(_workspace(metadata), DELEGATE.spec()),
        tool_specs=[DELEGATE.function()],
    )


def manager(metadata: Mapping[str, Any]) -> Agent:
    return Agent(
        model=ScriptedModel.history_driven(
            script("manager", ("delegate", {"agent": "clerk", "task": "charge 42"}))
        ),
        tools={"delegate": DELEGATE},
        policy=_policy(_workspace(metadata), DELEGATE.spec()),
        tool_specs=[DELEGATE.function()],
    )


def clerk(metadata: Mapping[str, Any]) -> Agent:
    effects = str(metadata["effects"])

    def charge(amount: int, idempotency_key: str | None = None) -> str:
        with open(effects, "a") as f:
            f.write(f"{idempotency_key} {amount}\n")
            f.flush()
            os.fsync(f.fileno())
        return f"charged {amount}"

    deny = ("charge",) if metadata.get("deny_charge") else ()
    return Agent(
        model=ScriptedModel.history_driven(script("clerk", ("charge", {"amount": 42}))),
        tools={"charge": charge},
        policy=_policy(_workspace(metadata), ToolSpec("charge", "external", "other"), deny=deny),
    )


def looping_boss(metadata: Mapping[str, Any]) -> Agent:
    """A boss whose only agent is a boss like itself: it would delegate forever."""
    loop = Delegate({"boss": "nested_agents:looping_boss"})
    return Agent(
        model=ScriptedModel.history_driven(
            script("boss", ("delegate", {"agent": "boss", "task": "again"}))
        ),
        tools={"delegate": loop},
        policy=_policy(_workspace(metadata), loop.spec()),
        tool_specs=[loop.function()],
    )
