"""Channels: where a person sees a request and decides it.

A channel receives a `Prompt` (the request plus what it needs to validate an edit and to
explain an "always" grant) and returns a `Decision`. A channel never approves on its own:
no reviewer, end of input or unreadable answers all mean reject.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol

from ..models import Decision, Request
from ..records import record

TYPE_CHECKING = False  # not typing's: see signoff/__init__.py

if TYPE_CHECKING:
    from ..models import GrantScope

# Returns None when the edited arguments are acceptable, else a message naming the problem
# (schema violation, or the policy denies the edited call).
EditValidator = Callable[[Mapping[str, Any]], str | None]
# The request as it would read with the edited arguments: the policy's new verdict and the
# new preview, shown to the person before the edit is confirmed.
EditJudge = Callable[[Mapping[str, Any]], Request]


@record(frozen=True, slots=True)
class Prompt:
    """What a channel shows a person: the request, and what it needs to check an edit and to
    explain an "always" grant."""

    request: Request
    validate_edit: EditValidator
    always_rule: str | None = None  # the exact rule "always" would save
    always_scope: GrantScope = "session"
    # The scopes the person may choose between for "always" (the first is the narrowest);
    # empty means `always_scope` only.
    always_scopes: tuple[GrantScope, ...] = ()
    schema: Mapping[str, Any] | None = None
    judge_edit: EditJudge | None = None  # without it the edited arguments are shown as is

    @property
    def scopes(self) -> tuple[GrantScope, ...]:
        return tuple(dict.fromkeys(self.always_scopes)) or (self.always_scope,)


class StopRequested(KeyboardInterrupt):
    """The person asked to stop the agent (Ctrl-C twice, or the stop key), not just to
    reject one call. A `KeyboardInterrupt`, so that code which stops on Ctrl-C stops on it
    too, and no `except Exception` turns it into a decision; the request it interrupted
    stays undecided."""


class Channel(Protocol):
    def decide(self, prompt: Prompt) -> Decision: ...


class RejectingChannel:
    """The fail-closed channel: used when no reviewer is available."""

    def __init__(self, reason: str = "no reviewer available") -> None:
        self.reason = reason

    def decide(self, prompt: Prompt) -> Decision:
        return Decision(kind="reject", actor="signoff", reason=self.reason)


__all__ = [
    "Channel",
    "EditJudge",
    "EditValidator",
    "Prompt",
    "RejectingChannel",
    "StopRequested",
]
