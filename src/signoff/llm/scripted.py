"""`ScriptedModel`: a deterministic script in place of an LLM, for tests and demos."""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from ..exceptions import ConfigurationError
from .base import Message, TextSink, assistant_message, normalise_call


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
        calls = [normalise_call(c) for c in raw.get("tool_calls") or ()]
        content = raw.get("content")
        if content and on_text is not None:
            on_text(content)
        return assistant_message(content, calls)


# --------------------------------------------------------------------------- the loop


__all__ = ["ScriptedModel"]
