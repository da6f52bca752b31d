"""A LangChain v1 agent for the adapter tests: a scripted chat model (no LLM), tools that
count their runs in a file, and a SqliteSaver checkpointer on a file, so that a fresh graph
in a fresh process resumes the thread. As a script
(`python fw_langgraph.py WORKSPACE DB THREAD STEPS`) it resumes the thread once decided and
prints the outcome as JSON."""

from __future__ import annotations

import json
import os
import sqlite3
import sys
from pathlib import Path
from typing import Any

from langchain.agents import create_agent
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import tool as lc_tool
from langgraph.checkpoint.sqlite import SqliteSaver

from signoff import Settings
from signoff.adapters.langgraph import SignoffMiddleware, hitl_middleware, resume_decided
from signoff.policy import Policy
from signoff.tools import ToolSpec

RAN = "ran.jsonl"
Steps = list[tuple[str, dict[str, Any]]]


class ScriptedChat(BaseChatModel):
    """Calls steps[i] once i tool results are in, then answers with every result it read."""

    steps: list[Any]

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def bind_tools(self, tools: Any, **kwargs: Any) -> ScriptedChat:
        return self

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kw: Any
    ) -> ChatResult:
        results = [m for m in messages if isinstance(m, ToolMessage)]
        done = len(results)
        if done < len(self.steps):
            name, args = self.steps[done]
            if name == "!raise":  # the model fails here (an API error, say)
                raise RuntimeError(args["message"])
            call = {"name": name, "args": args, "id": f"call_{done + 1}", "type": "tool_call"}
            message = AIMessage(content="", tool_calls=[call])
        else:
            message = AIMessage(content="done: " + json.dumps([str(m.content) for m in results]))
        return ChatResult(generations=[ChatGeneration(message=message)])


def tools_for(workspace: Path) -> list[Any]:
    log = workspace / RAN

    def note(name: str, **args: Any) -> None:
        with log.open("a") as fh:
            fh.write(json.dumps({"tool": name, **args}) + "\n")

    @lc_tool
    def lookup(order: str) -> str:
        """Look an order up."""
        note("lookup", order=order)
        return f"order {order}: paid"

    @lc_tool
    def email_customer(to: str, body: str) -> str:
        """Email a customer."""
        note("email_customer", to=to, body=body)
        return f"sent to {to}"

    return [lookup, email_customer]


SPECS = [
    ToolSpec(name="lookup", tier="read"),
    ToolSpec(name="email_customer", tier="external", subject_args=("to",)),
]


def policy(workspace: Path) -> Policy:
    return Policy(
        Settings.from_rules(deny=["email_customer(to=*@competitor.com)"]), workspace=workspace
    )


def build(
    workspace: Path, db: str, steps: Steps, *, hitl: bool = False, factory: str | None = None
) -> tuple[Any, SignoffMiddleware, sqlite3.Connection]:
    conn = sqlite3.connect(str(workspace / "graph.db"), check_same_thread=False)
    saver = SqliteSaver(conn)
    tools = tools_for(workspace)
    if hitl:
        middleware = hitl_middleware(tools, store=db, policy=policy(workspace))
        so = middleware[1]
        assert isinstance(so, SignoffMiddleware)
        for spec in SPECS:
            so.guard.declare(spec)
    else:
        so = SignoffMiddleware(store=db, policy=policy(workspace), tools=SPECS, factory=factory)
        middleware = [so]
    agent = create_agent(
        ScriptedChat(steps=[list(s) for s in steps]),
        tools=tools,
        middleware=middleware,
        checkpointer=saver,
    )
    return agent, so, conn


def from_env() -> tuple[Path, str, Any]:
    """The workspace, store and steps a worker's factory rebuilds the agent with (set by
    the test in the worker's environment: a factory takes no arguments)."""
    steps = [(n, a) for n, a in json.loads(os.environ["FW_STEPS"])]
    return Path(os.environ["FW_WORKSPACE"]), os.environ["FW_DB"], steps


def factory() -> tuple[Any, SignoffMiddleware]:
    """What `signoff worker` rebuilds the thread's agent with: (graph, middleware)."""
    agent, so, _conn = build(*from_env(), factory="fw_langgraph:factory")
    return agent, so


def wrong_type() -> Any:
    """A factory that returns the graph alone: the worker refuses it."""
    return build(*from_env())[0]


def ran(workspace: Path) -> list[dict[str, Any]]:
    log = workspace / RAN
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text().splitlines()]


def final_text(result: Any) -> str:
    messages = result["messages"] if isinstance(result, dict) else result.value["messages"]
    return str(messages[-1].content)


def main() -> None:
    workspace, db, thread = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
    steps = [(n, a) for n, a in json.loads(sys.argv[4])]
    agent, so, conn = build(workspace, db, steps)
    result = resume_decided(agent, so, thread_id=thread)
    print(
        json.dumps(
            {"resumed": result is not None, "output": final_text(result) if result else None}
        )
    )
    conn.close()


if __name__ == "__main__":
    main()
