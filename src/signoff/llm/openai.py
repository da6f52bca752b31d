"""`OpenAIModel`: the `openai` client over HTTP, against OpenAI or any compatible endpoint
(vLLM, llama.cpp, Ollama...), streaming or not."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from ..exceptions import ConfigurationError
from .base import (
    DEFAULT_TIMEOUT,
    NO_KEY_NEEDED,
    Message,
    TextSink,
    assistant_message,
    normalise_call,
)


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
            listed = self.client.with_options(max_retries=0).models.list()  # a quick answer
        except (openai.NotFoundError, openai.PermissionDeniedError):
            return
        except openai.OpenAIError as exc:
            raise self._friendly(exc) from None
        offered = _model_ids(listed)
        if offered and not _offers(offered, self.model):
            shown = ", ".join(offered[:MODELS_SHOWN])
            more = f" and {len(offered) - MODELS_SHOWN} more" if len(offered) > MODELS_SHOWN else ""
            raise ConfigurationError(
                f"the model endpoint {self.endpoint} does not offer model {self.model!r}; "
                f"it offers: {shown}{more}. Pass one with --model (or SIGNOFF_MODEL)"
            )

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
        return assistant_message(message.content, [normalise_call(c) for c in calls])

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
        calls = [normalise_call(slots[i]) for i in sorted(slots)]
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


MODELS_SHOWN = 20  # an endpoint may list hundreds: the first few say enough


def _model_ids(listed: Any) -> list[str]:
    """The model ids an endpoint listed; empty when the list is not what the API says, or
    comes from a server that answers to any model name (llama.cpp serves its one model
    whatever the request names): then nothing is concluded, and the first message tells."""
    try:
        models = [m for m in listed if getattr(m, "id", None)]
    except (TypeError, AttributeError):
        return []
    if any(
        getattr(m, "owned_by", None) == "llamacpp" or str(m.id).endswith(".gguf") for m in models
    ):
        return []
    return [str(m.id) for m in models]


def _offers(offered: list[str], name: str) -> bool:
    """Whether `name` is one of the listed models, as servers resolve names: Ollama lists
    `qwen2.5:latest` and answers to `qwen2.5`; case is not held against a name."""
    wanted = name.casefold()
    for model in offered:
        listed = model.casefold()
        if listed == wanted or listed.split(":", 1)[0] == wanted:
            return True
    return False


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


__all__ = ["OpenAIModel"]
