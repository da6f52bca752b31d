"""What every model client shares: the `Model` protocol (a transcript in, ONE assistant
message out, stateless so that any process can continue a run from its stored transcript)
and the helpers that read a model's tool calls."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from ..exceptions import InvalidInput
from ..models import ToolCall
from ..run_state import storable

if TYPE_CHECKING:  # types only: the gate (and its reviewer) may use a model client
    from ..gate import ToolResult

Message = dict[str, Any]
TextSink = Callable[[str], None]
# Called once per tool call with the raw call, the content the model receives and the
# gate's result (None when the call never reached the gate: malformed or unknown).
ToolListener = Callable[[Mapping[str, Any], str, "ToolResult | None"], None]

DEFAULT_TIMEOUT = 60.0
NO_KEY_NEEDED = "not-needed"  # local servers ignore the key, but the client wants one


class Model(Protocol):
    def complete(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]],
        *,
        on_text: Callable[[str], None] | None = None,
    ) -> dict[str, Any]:
        """One assistant message: {"role": "assistant", "content", "tool_calls"?}."""
        ...


# --------------------------------------------------------------------------- messages


def assistant_message(content: str | None, tool_calls: Sequence[Mapping[str, Any]] = ()) -> Message:
    """An assistant message in chat-completions form; `tool_calls` omitted when empty."""
    message: Message = {"role": "assistant", "content": content}
    if tool_calls:
        message["tool_calls"] = [dict(call) for call in tool_calls]
    elif content is None:
        message["content"] = ""  # an assistant turn with neither is refused by providers
    return message


def normalise_call(raw: Mapping[str, Any]) -> dict[str, Any]:
    function = raw.get("function") or {}
    arguments = function.get("arguments", "{}")
    if not isinstance(arguments, str):  # scripts may give a dict; the wire has a string
        arguments = json.dumps(arguments, ensure_ascii=False)
    return {
        "id": str(raw.get("id") or f"call_{uuid.uuid4().hex[:12]}"),
        "type": "function",
        "function": {"name": str(function.get("name") or ""), "arguments": arguments},
    }


def tool_call_from_message(raw: Mapping[str, Any]) -> ToolCall | str:
    """The `ToolCall` of one `tool_calls` entry, or the refusal text the model gets instead
    (its arguments are not a valid JSON object). A refused call must never be run."""
    function = raw.get("function") or {}
    name = storable(str(function.get("name") or "?"))
    try:
        return ToolCall.from_openai(raw)
    except InvalidInput as exc:  # not JSON, too deep, or invalid Unicode (a lone surrogate)
        return (
            f"Tool call {name} was not run: its arguments were not a valid JSON object "
            f"({exc}). Nothing was executed. Call the tool again with a JSON object as "
            "arguments, in valid UTF-8 text."
        )


# --------------------------------------------------------------------------- OpenAI


__all__ = [
    "Message",
    "Model",
    "TextSink",
    "ToolListener",
    "assistant_message",
    "normalise_call",
    "tool_call_from_message",
]
