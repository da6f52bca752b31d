"""The model side of an agent: clients that turn a transcript into one assistant message,
the in-process loop, and local fakes of an OpenAI-compatible server (`fake_server`) and of
the Anthropic Messages API (`fake_anthropic`) for tests and demos.

    Model            the protocol every client meets (base.py)
    OpenAIModel      the `openai` client over HTTP (openai.py)
    ScriptedModel    a deterministic script, no LLM (scripted.py)
    run_session      the in-process loop used by `signoff chat` (session.py)

Durable pause and resume live in `signoff.runs`, on the same `Model`. Names load on first
use: the `openai` client is not imported until an `OpenAIModel` is wanted.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .base import Message, Model, assistant_message, tool_call_from_message
    from .openai import OpenAIModel
    from .scripted import ScriptedModel
    from .session import run_session

_WHERE = {
    "Message": ".base",
    "Model": ".base",
    "assistant_message": ".base",
    "tool_call_from_message": ".base",
    "OpenAIModel": ".openai",
    "ScriptedModel": ".scripted",
    "run_session": ".session",
}


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(_WHERE[name], __name__), name)


__all__ = [
    "Message",
    "Model",
    "OpenAIModel",
    "ScriptedModel",
    "assistant_message",
    "run_session",
    "tool_call_from_message",
]
