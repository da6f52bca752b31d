"""A Pydantic AI agent for the adapter tests: a scripted model (FunctionModel, no LLM) and
tools that count their runs in a file, so that another process can be checked too.

The model is stateless: it reads how many tool results the conversation holds and plays the
next step of SCRIPT, so a fresh agent in a fresh process goes on where the last one stopped.
Run as a script (`python fw_pydantic_ai.py WORKSPACE DB THREAD [PROMPT]`) it runs or resumes
the thread and prints the outcome as JSON.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

from pydantic_ai import Agent
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.tools import DeferredToolRequests

from signoff import Settings
from signoff.adapters.pydantic_ai import Signoff
from signoff.policy import Policy
from signoff.tools import tool

RAN = "ran.jsonl"


def script_for(steps: list[tuple[str, dict[str, Any]]]) -> FunctionModel:
    """A model that calls steps[i] once i tool results are in, then says "done", and
    reports every tool result it read (the test checks what reached the model)."""

    def reply(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        returns = [
            part
            for message in messages
            if isinstance(message, ModelRequest)
            for part in message.parts
            if isinstance(part, ToolReturnPart)
        ]
        done = len(returns)
        if done < len(steps):
            name, args = steps[done]
            return ModelResponse(parts=[ToolCallPart(name, args, tool_call_id=f"call_{done + 1}")])
        seen = [str(part.content) for part in returns]
        return ModelResponse(parts=[TextPart("done: " + json.dumps(seen))])

    return FunctionModel(reply)


def build(
    workspace: Path,
    db: str,
    steps: list[tuple[str, dict[str, Any]]],
    *,
    factory: str | None = None,
) -> tuple[Agent[None, Any], Signoff]:
    log = workspace / RAN

    def note(name: str, **args: Any) -> None:
        with log.open("a") as fh:
            fh.write(json.dumps({"tool": name, **args}) + "\n")

    @tool(tier="read")
    def lookup(order: str) -> str:
        """Look an order up."""
        note("lookup", order=order)
        return f"order {order}: paid"

    @tool(tier="external", subject_args=("to",))
    def email_customer(to: str, body: str) -> str:
        """Send an email."""
        note("email_customer", to=to, body=body)
        return f"sent to {to}"

    @tool(tier="write")
    def tag(order: str) -> str:
        """Tag an order (reversible)."""
        note("tag", order=order)
        return f"tagged {order}"

    tools = [lookup, email_customer, tag]
    policy = Policy(
        Settings.from_rules(deny=["email_customer(to=*@competitor.com)"], allow=["tag"]),
        workspace=workspace,
    )
    so = Signoff(store=db, policy=policy, tools=tools, factory=factory)
    agent: Agent[None, Any] = Agent(
        script_for(steps),
        tools=tools,
        capabilities=[so],
        output_type=[str, DeferredToolRequests],
    )
    return agent, so


def from_env() -> tuple[Path, str, Any]:
    """The workspace, store and steps a worker's factory rebuilds the agent with (set by
    the test in the worker's environment: a factory takes no arguments)."""
    steps = [(n, a) for n, a in json.loads(os.environ["FW_STEPS"])]
    return Path(os.environ["FW_WORKSPACE"]), os.environ["FW_DB"], steps


def factory() -> tuple[Agent[None, Any], Signoff]:
    """What `signoff worker` rebuilds the thread's agent with: (agent, capability)."""
    return build(*from_env(), factory="fw_pydantic_ai:factory")


def ran(workspace: Path) -> list[dict[str, Any]]:
    log = workspace / RAN
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text().splitlines()]


def main() -> None:
    workspace, db, thread = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
    steps = json.loads(sys.argv[4])
    prompt = sys.argv[5] if len(sys.argv) > 5 else None
    agent, so = build(workspace, db, [(n, a) for n, a in steps])
    outcome = asyncio.run(
        so.run(agent, prompt, thread=thread) if prompt else so.resume(agent, thread=thread)
    )
    print(
        json.dumps(
            {"status": outcome.status, "output": outcome.output, "requests": outcome.requests}
        )
    )


if __name__ == "__main__":
    main()
