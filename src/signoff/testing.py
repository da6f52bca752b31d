"""Helpers for testing code that uses signoff: a channel that answers from a script."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from typing import Any

from .channels import Prompt
from .models import Decision


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


__all__ = ["ScriptedChannel"]
