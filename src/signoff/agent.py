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

import copy
import json
import os
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Protocol

from .exceptions import ConfigurationError, InvalidInput, RunStopped
from .gate import Gate, ToolResult
from .models import ToolCall
from .runs import storable

Message = dict[str, Any]
TextSink = Callable[[str], None]
# Called once per tool call with the raw call, the content the model receives and the
# gate's result (None when the call never reached the gate: malformed or unknown).
ToolListener = Callable[[Mapping[str, Any], str, ToolResult | None], None]

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


def _normalise_call(raw: Mapping[str, Any]) -> dict[str, Any]:
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


class OpenAIModel:
    """Any OpenAI-compatible Chat Completions endpoint, through the `openai` client.

    `model` defaults to $SIGNOFF_MODEL, `base_url` to $OPENAI_BASE_URL (else OpenAI) and
    `api_key` to $OPENAI_API_KEY (a local `base_url` needs none). Every failure becomes a
    `ConfigurationError` whose message says what to fix.
    """

    def __init__(
        self,
        model: str | None = None,
        base_url: str | None = None,
        api_key: str | None = None,
        stream: bool = True,
        timeout: float = DEFAULT_TIMEOUT,
        *,
        max_retries: int = 2,
    ) -> None:
        try:
            import openai
        except ImportError as exc:  # an optional extra
            raise ConfigurationError(
                "the openai package is not installed: pip install 'signoff[openai]'"
            ) from exc
        self.model = model or os.environ.get("SIGNOFF_MODEL") or ""
        if not self.model:
            raise ConfigurationError(
                "no model configured: pass --model NAME or set SIGNOFF_MODEL "
                "(and OPENAI_BASE_URL / --base-url for an endpoint other than OpenAI)"
            )
        self.base_url = base_url or os.environ.get("OPENAI_BASE_URL") or None
        key = api_key or os.environ.get("OPENAI_API_KEY")
        if not key:
            if self.base_url is None:
                raise ConfigurationError(
                    "no API key: set OPENAI_API_KEY, or point --base-url / OPENAI_BASE_URL "
                    "at a local OpenAI-compatible server"
                )
            key = NO_KEY_NEEDED
        self.stream = stream
        self.client = openai.OpenAI(
            api_key=key, base_url=self.base_url, timeout=timeout, max_retries=max_retries
        )
        self.endpoint = str(self.client.base_url).rstrip("/")

    def __repr__(self) -> str:
        return f"OpenAIModel(model={self.model!r}, endpoint={self.endpoint!r})"

    def check(self) -> None:
        """Fail early with a friendly error if the endpoint is unreachable or refuses the key.
        An endpoint without `/models` is not an error: chat completions may still work."""
        import openai

        try:
            self.client.with_options(max_retries=0).models.list()  # a quick first answer
        except (openai.NotFoundError, openai.PermissionDeniedError):
            return
        except openai.OpenAIError as exc:
            raise self._friendly(exc) from None

    def complete(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]],
        *,
        on_text: TextSink | None = None,
    ) -> dict[str, Any]:
        import openai

        request: dict[str, Any] = {"model": self.model, "messages": messages}
        if tools:
            request["tools"] = tools
        try:
            if self.stream:
                return self._streamed(request, on_text)
            return self._whole(request, on_text)
        except openai.OpenAIError as exc:
            raise self._friendly(exc) from None

    def _whole(self, request: dict[str, Any], on_text: TextSink | None) -> Message:
        response = self.client.chat.completions.create(**request)
        if not response.choices:
            raise ConfigurationError(f"the model endpoint {self.endpoint} returned no choices")
        message = response.choices[0].message
        calls = [
            {
                "id": call.id,
                "type": "function",
                "function": {"name": call.function.name, "arguments": call.function.arguments},
            }
            for call in (message.tool_calls or ())
            if getattr(call, "function", None) is not None
        ]
        if message.content and on_text is not None:
            on_text(message.content)
        return assistant_message(message.content, [_normalise_call(c) for c in calls])

    def _streamed(self, request: dict[str, Any], on_text: TextSink | None) -> Message:
        text: list[str] = []
        slots: dict[int, dict[str, Any]] = {}  # tool calls by their stream index
        stream = self.client.chat.completions.create(**request, stream=True)
        try:
            for chunk in stream:
                for choice in chunk.choices:
                    if choice.index != 0:
                        continue
                    delta = choice.delta
                    if delta.content:
                        text.append(delta.content)
                        if on_text is not None:
                            on_text(delta.content)
                    for part in delta.tool_calls or ():
                        index = part.index if part.index is not None else len(slots)
                        _merge_tool_delta(slots.setdefault(index, _empty_slot()), part)
        finally:
            stream.close()
        calls = [_normalise_call(slots[i]) for i in sorted(slots)]
        return assistant_message("".join(text) or None, calls)

    def _friendly(self, exc: Exception) -> ConfigurationError:
        import openai

        where = self.endpoint
        if isinstance(exc, openai.APITimeoutError):
            return ConfigurationError(f"the model endpoint {where} did not answer in time")
        if isinstance(exc, openai.APIConnectionError):
            return ConfigurationError(
                f"cannot reach the model endpoint {where}: is the server running? "
                "Check --base-url / OPENAI_BASE_URL"
            )
        if isinstance(exc, openai.AuthenticationError):
            return ConfigurationError(
                f"the model endpoint {where} refused the API key (HTTP 401): "
                f"check OPENAI_API_KEY ({_server_message(exc)})"
            )
        if isinstance(exc, openai.NotFoundError):
            return ConfigurationError(
                f"the model endpoint {where} does not know model {self.model!r} or the route "
                f"(HTTP 404): {_server_message(exc)}"
            )
        if isinstance(exc, openai.APIStatusError):
            return ConfigurationError(
                f"the model endpoint {where} answered HTTP {exc.status_code}: "
                f"{_server_message(exc)}"
            )
        return ConfigurationError(f"the model endpoint {where} failed: {exc}")


def _empty_slot() -> dict[str, Any]:
    return {"id": "", "type": "function", "function": {"name": "", "arguments": ""}}


def _merge_tool_delta(slot: dict[str, Any], part: Any) -> None:
    """Fold one streamed tool-call fragment into its slot. The id and name usually come
    once; some servers repeat them in every chunk, so a repeat is not appended."""
    if part.id:
        slot["id"] = part.id
    function = part.function
    if function is None:
        return
    name = function.name or ""
    if name and name != slot["function"]["name"]:
        slot["function"]["name"] += name
    if function.arguments:
        slot["function"]["arguments"] += function.arguments


def _server_message(exc: Any) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, Mapping):
        error = body.get("error", body)
        if isinstance(error, Mapping) and error.get("message"):
            return str(error["message"])
        if body.get("message"):
            return str(body["message"])
    return str(getattr(exc, "message", None) or exc)


# --------------------------------------------------------------------------- scripted


class ScriptedModel:
    """A SCRIPTED stand-in for a model: no LLM, fully deterministic.

    `replies` is a list of assistant messages served in order, or a function of the
    transcript returning the next one. Tool-call arguments may be dicts (encoded) or
    strings (kept verbatim, so malformed JSON can be scripted). Every transcript the
    model was given is kept in `calls`. Running out of replies is an error, not a guess.
    """

    label = "scripted model (no LLM)"

    def __init__(
        self, replies: Iterable[Mapping[str, Any]] | Callable[[list[Message]], Mapping[str, Any]]
    ) -> None:
        self._fn = replies if callable(replies) else None
        self._queue: list[Mapping[str, Any]] = [] if callable(replies) else list(replies)
        self.calls: list[list[Message]] = []
        self.tools_seen: list[list[dict[str, Any]]] = []

    @classmethod
    def history_driven(cls, fn: Callable[[list[Message]], Mapping[str, Any]]) -> ScriptedModel:
        """A script that reads the transcript (e.g. the last tool result) to pick a reply."""
        return cls(fn)

    def __repr__(self) -> str:
        return (
            f"ScriptedModel({len(self._queue)} replies left)"
            if self._fn is None
            else ("ScriptedModel(history-driven)")
        )

    def complete(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]],
        *,
        on_text: TextSink | None = None,
    ) -> dict[str, Any]:
        self.calls.append(copy.deepcopy(messages))
        self.tools_seen.append(list(tools))
        if self._fn is not None:
            raw = self._fn(copy.deepcopy(messages))
        elif self._queue:
            raw = self._queue.pop(0)
        else:
            raise ConfigurationError("the scripted model has no reply left")
        calls = [_normalise_call(c) for c in raw.get("tool_calls") or ()]
        content = raw.get("content")
        if content and on_text is not None:
            on_text(content)
        return assistant_message(content, calls)


# --------------------------------------------------------------------------- the loop


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


__all__ = [
    "Model",
    "OpenAIModel",
    "ScriptedModel",
    "assistant_message",
    "run_session",
    "tool_call_from_message",
]
