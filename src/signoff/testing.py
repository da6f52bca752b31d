"""Test doubles for code that uses signoff, in one place:

ScriptedChannel    a channel that answers prompts from a script (fails closed)
ScriptedModel      a model that replies from a script, no LLM
FakeOpenAIServer   a local FAKE OpenAI-compatible HTTP server (real client path, no LLM)
fake_call, scripted_reply   helpers to write that server's script
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from .channels import Prompt
from .models import Decision

if TYPE_CHECKING:
    from .llm.fake_server import FakeOpenAIServer, fake_call, scripted_reply
    from .llm.scripted import ScriptedModel


class ScriptedChannel:
    """Answers prompts with the given decisions, in order, and records every prompt.

    Runs out of answers -> reject, so a test that forgot one fails closed, never open.
    `answer` may also be a function of the prompt.
    """

    def __init__(
        self,
        answers: Iterable[Decision] | Callable[[Prompt], Decision] = (),
        *,
        on_prompt: Callable[[Prompt], Any] | None = None,
    ) -> None:
        self._answer = answers if callable(answers) else None
        self._queue = [] if callable(answers) else list(answers)
        self.prompts: list[Prompt] = []
        self.on_prompt = on_prompt
        self._lock = threading.Lock()

    def decide(self, prompt: Prompt) -> Decision:
        with self._lock:
            self.prompts.append(prompt)
        if self.on_prompt is not None:
            self.on_prompt(prompt)
        if self._answer is not None:
            return self._answer(prompt)
        with self._lock:
            if self._queue:
                return self._queue.pop(0)
        return Decision("reject", actor="signoff", reason="no scripted answer left")


_ELSEWHERE = {
    "ScriptedModel": ".llm.scripted",
    "FakeOpenAIServer": ".llm.fake_server",
    "fake_call": ".llm.fake_server",
    "scripted_reply": ".llm.fake_server",
}


def __getattr__(name: str) -> Any:
    if name not in _ELSEWHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(_ELSEWHERE[name], "signoff"), name)


__all__ = ["FakeOpenAIServer", "ScriptedChannel", "ScriptedModel", "fake_call", "scripted_reply"]
