"""The model side of the agent loop, over an OpenAI-compatible Chat Completions API.

A `Model` turns a transcript (chat-completions messages) into ONE assistant message. It is
stateless: everything it needs is in the messages, so a paused run can be continued by
any process from the stored transcript alone.

    OpenAIModel      the `openai` client over HTTP: OpenAI or any compatible endpoint
                     (vLLM, llama.cpp, Ollama...), streaming or not
    ScriptedModel    a deterministic script (no LLM), for tests and demos

`run_session` is a small in-process loop (used by `signoff chat`): ask the model, route
every tool call through the gate, append the results, repeat until the model answers
without calling a tool. Durable pause and resume live in `runs.py`, on the same `Model`.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping
from typing import Any

from ..exceptions import RunStopped
from ..gate import Gate, ToolResult
from .base import Model, TextSink, ToolListener, tool_call_from_message


def _unknown_tool(name: str, tools: Mapping[str, Any]) -> str:
    known = ", ".join(sorted(tools)) or "none"
    return f"Tool call {name} was not run: there is no tool named {name!r} (tools: {known})."


def run_session(
    model: Model,
    messages: list[dict[str, Any]],
    *,
    gate: Gate,
    tools: Mapping[str, Callable[..., Any]],
    tool_specs: list[dict[str, Any]],
    on_text: TextSink | None = None,
    on_tool: ToolListener | None = None,
    max_turns: int = 50,
) -> list[dict[str, Any]]:
    """Run the model until it answers without a tool call; returns `messages`, extended in
    place. Every call goes through `gate`; malformed or unknown calls are refused without
    running. When the gate stops the session (denial limits), the remaining calls get a
    "not run" result and the loop ends without calling the model again (`gate.stopped`
    says why). Each tool call gets exactly one tool message, even on an interrupt, so the
    transcript stays valid for the next request."""
    for _ in range(max_turns):
        if gate.stopped:
            return messages
        reply = model.complete(messages, tool_specs, on_text=on_text)
        messages.append(reply)
        calls = reply.get("tool_calls") or []
        if not calls:
            return messages
        for call in calls:  # a hand-written Model may omit ids; each result needs one
            call.setdefault("id", None)
            call["id"] = call["id"] or f"call_{uuid.uuid4().hex[:12]}"
        answered = 0
        try:
            for raw in calls:
                content, result = _run_one(raw, gate, tools)
                messages.append({"role": "tool", "tool_call_id": raw["id"], "content": content})
                answered += 1
                if on_tool is not None:
                    on_tool(raw, content, result)
        finally:
            # An interrupt or error mid-turn: the calls not reached are answered as not run.
            why = f"the session was stopped: {gate.stopped}" if gate.stopped else "interrupted"
            for raw in calls[answered:]:
                name = (raw.get("function") or {}).get("name") or "?"
                messages.append(
                    {
                        "role": "tool",
                        "tool_call_id": raw["id"],
                        "content": f"Tool call {name} was not run: {why}.",
                    }
                )
    return messages


def _run_one(
    raw: Mapping[str, Any], gate: Gate, tools: Mapping[str, Callable[..., Any]]
) -> tuple[str, ToolResult | None]:
    parsed = tool_call_from_message(raw)
    if isinstance(parsed, str):
        return parsed, None  # malformed arguments: refused, never run
    if parsed.name not in tools:
        return _unknown_tool(parsed.name, tools), None
    try:
        result = gate.execute(parsed, tools[parsed.name])
    except RunStopped as stop:
        return f"Tool call {parsed.name} was not run: the session was stopped: {stop.reason}.", None
    return result.content, result


__all__ = ["run_session"]
