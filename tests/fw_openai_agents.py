"""An OpenAI Agents SDK agent for the adapter tests: a scripted `Model` subclass (no LLM,
no network), tools that count their runs in a file. As a script
(`python fw_openai_agents.py WORKSPACE DB THREAD STEPS`) it resumes the thread and prints
the outcome as JSON."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

from agents import Agent, function_tool, set_tracing_disabled
from agents.items import ModelResponse
from agents.models.interface import Model
from agents.usage import Usage
from openai.types.responses import (
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseOutputText,
)

from signoff import Settings
from signoff.adapters.openai_agents import Signoff
from signoff.policy import Policy
from signoff.tools import ToolSpec

set_tracing_disabled(True)
RAN = "ran.jsonl"
Steps = list[tuple[str, dict[str, Any]]]


def _outputs(items: Any) -> list[str]:
    if isinstance(items, str):
        return []
    found = []
    for item in items:
        kind = item.get("type") if isinstance(item, dict) else getattr(item, "type", None)
        if kind == "function_call_output":
            output = item.get("output") if isinstance(item, dict) else item.output
            found.append(str(output))
    return found


class ScriptedModel(Model):
    """Calls steps[i] once i tool results are in, then answers with every result it read."""

    def __init__(self, steps: Steps) -> None:
        self.steps = steps

    async def get_response(
        self, system_instructions: Any, input: Any, *args: Any, **kwargs: Any
    ) -> ModelResponse:
        seen = _outputs(input)
        done = len(seen)
        if done < len(self.steps):
            name, args_ = self.steps[done]
            out: list[Any] = [
                ResponseFunctionToolCall(
                    type="function_call",
                    id=f"fc_{done + 1}",
                    call_id=f"call_{done + 1}",
                    name=name,
                    arguments=json.dumps(args_),
                    status="completed",
                )
            ]
        else:
            text = "done: " + json.dumps(seen)
            out = [
                ResponseOutputMessage(
                    type="message",
                    id="msg_final",
                    role="assistant",
                    status="completed",
                    content=[ResponseOutputText(type="output_text", text=text, annotations=[])],
                )
            ]
        return ModelResponse(output=out, usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError


def build(
    workspace: Path, db: str, steps: Steps, *, factory: str | None = None
) -> tuple[Agent[Any], Signoff]:
    log = workspace / RAN

    def note(name: str, **args: Any) -> None:
        with log.open("a") as fh:
            fh.write(json.dumps({"tool": name, **args}) + "\n")

    async def lookup(order: str) -> str:
        """Look an order up."""
        note("lookup", order=order)
        return f"order {order}: paid"

    async def email_customer(to: str, body: str) -> str:
        """Email a customer."""
        note("email_customer", to=to, body=body)
        return f"sent to {to}"

    so = Signoff(
        store=db,
        policy=Policy(
            Settings.from_rules(deny=["email_customer(to=*@competitor.com)"]), workspace=workspace
        ),
        tools=[
            ToolSpec(name="lookup", tier="read"),
            ToolSpec(name="email_customer", tier="external", subject_args=("to",)),
        ],
        factory=factory,
    )
    agent: Agent[Any] = Agent(
        name="support",
        model=ScriptedModel(steps),
        tools=so.guarded([function_tool(lookup), function_tool(email_customer)]),
    )
    return agent, so


def from_env() -> tuple[Path, str, Any]:
    """The workspace, store and steps a worker's factory rebuilds the agent with (set by
    the test in the worker's environment: a factory takes no arguments)."""
    steps = [(n, a) for n, a in json.loads(os.environ["FW_STEPS"])]
    return Path(os.environ["FW_WORKSPACE"]), os.environ["FW_DB"], steps


def factory() -> tuple[Agent[Any], Signoff]:
    """What `signoff worker` rebuilds the thread's agent with: (agent, adapter)."""
    return build(*from_env(), factory="fw_openai_agents:factory")


def ran(workspace: Path) -> list[dict[str, Any]]:
    log = workspace / RAN
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text().splitlines()]


def main() -> None:
    workspace, db, thread = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
    steps = [(n, a) for n, a in json.loads(sys.argv[4])]
    agent, so = build(workspace, db, steps)
    out = asyncio.run(so.resume(agent, thread=thread))
    print(json.dumps({"status": out.status, "output": out.output}))


if __name__ == "__main__":
    main()
