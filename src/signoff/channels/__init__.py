"""Channels: where a person sees a request and decides it.

A channel receives a `Prompt` (the request plus what it needs to validate an edit and to
explain an "always" grant) and returns a `Decision`. A channel never approves on its own:
no reviewer, end of input or unreadable answers all mean reject.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from ..models import Decision, GrantScope, Request

# Returns None when the edited arguments are acceptable, else a message naming the problem
# (schema violation, or the policy denies the edited call).
EditValidator = Callable[[Mapping[str, Any]], str | None]


@dataclass(frozen=True, slots=True)
class Prompt:
    request: Request
    validate_edit: EditValidator
    always_rule: str | None = None  # the exact rule "always" would save
    always_scope: GrantScope = "session"
    schema: Mapping[str, Any] | None = None


class Channel(Protocol):
    def decide(self, prompt: Prompt) -> Decision: ...


class RejectingChannel:
    """The fail-closed channel: used when no reviewer is available."""

    def __init__(self, reason: str = "no reviewer available") -> None:
        self.reason = reason

    def decide(self, prompt: Prompt) -> Decision:
        return Decision(kind="reject", actor="signoff", reason=self.reason)


__all__ = ["Channel", "EditValidator", "Prompt", "RejectingChannel"]
