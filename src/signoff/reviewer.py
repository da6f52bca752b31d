"""The reviewer model: in `auto` mode, it settles asks a person would otherwise not see.

    ask (auto mode)
      -> in the reviewer's remit (code: reviewer_remit)?  no: a person decides
      -> agent text speaks to the reviewer (a tripwire)?  yes: a person decides (no model call)
      -> stage 1, the fast filter: "<tag> allow|flag"  allow, low risk: runs (notify)
      -> stage 2, careful reasoning: JSON with the tag  allow: runs (notify)
      -> anything else (flag then escalate, an outage, a timeout, a malformed or untagged
         answer): a person decides

It can only make `auto` stricter: without it every such ask would run. It never sees a
deny (the policy settles those first), never loosens one, and what it allows runs as
`notify`: kept on the record for review after (and revert). Whether it may settle an ask
at all is decided by code from the verdict, and checked again here, where its answer is
applied: whatever the agent wrote, an ask outside the remit goes to a person. Its input
is built by `reviewer_input`, never by the agent. Every verdict is on the record
(`reviewer.verdict`).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from .exceptions import ConfigurationError
from .kinds import REVIEWER_VERDICT
from .models import ToolCall, Verdict
from .reviewer_input import (
    ReviewInput,
    addresses_reviewer,
    build_input,
    filter_messages,
    new_tag,
    parse_filter,
    parse_reasoning,
    reason_messages,
)
from .reviewer_remit import remit_problem
from .reviewer_settings import (
    AUTO_WITHOUT_REVIEWER,
    ReviewerSettings,
    allowed_verdict,
    escalated_verdict,
)

if TYPE_CHECKING:
    from .policy import Policy

Stage = Literal["remit", "precheck", "filter", "reasoning", "outage", "malformed"]
# (messages, timeout) -> the answer's text; raises on an outage
Ask = Callable[[list[dict[str, Any]], float], str]


@dataclass(frozen=True, slots=True)
class ReviewerVerdict:
    """What the reviewer said about one ask, and why; on the record as is."""

    decision: Literal["allow", "escalate"]
    stage: Stage
    reasoning: str
    model: str
    filter_answer: str | None = None
    elapsed_ms: float = 0.0

    def apply(self, asked: Verdict) -> Verdict:
        """The verdict the call goes on with: notify when allowed, else the ask with the
        reviewer's note for the person."""
        if self.decision == "allow":
            return allowed_verdict(asked, self.reasoning)
        return escalated_verdict(asked, self.reasoning)

    def to_json(self) -> dict[str, Any]:
        return {
            "decision": self.decision,
            "stage": self.stage,
            "reasoning": self.reasoning,
            "model": self.model,
            "filter_answer": self.filter_answer,
            "elapsed_ms": round(self.elapsed_ms, 3),
        }


class Reviewer:
    """Two stages over any OpenAI-compatible chat endpoint (`ask` replaces the HTTP client
    in tests that need no server)."""

    def __init__(
        self,
        settings: ReviewerSettings,
        *,
        environ: Mapping[str, str] | None = None,
        ask: Ask | None = None,
    ) -> None:
        self.settings = settings
        self._environ = os.environ if environ is None else environ
        self._ask = ask
        self._clients: dict[float, Any] = {}

    def __repr__(self) -> str:
        return f"Reviewer(model={self.settings.model!r}, base_url={self.settings.base_url!r})"

    # ------------------------------------------------------------------ the model

    def _client(self, timeout: float) -> Any:
        client = self._clients.get(timeout)
        if client is None:
            from .llm.openai import OpenAIModel

            s = self.settings
            if not s.model:  # never a model named by the agent's environment instead
                raise ConfigurationError(f"the reviewer names no model ({s.source})")
            key = self._environ.get(s.api_key_env)
            if not key and s.base_url is None:
                raise ConfigurationError(
                    f"the reviewer needs an API key: set ${s.api_key_env} "
                    f"(named by api_key_env in {s.source})"
                )
            client = OpenAIModel(
                s.model,
                s.base_url or "https://api.openai.com/v1",
                key or "not-needed",
                stream=False,
                timeout=timeout,
                max_retries=0,  # an outage goes to a person now, not after retries
            )
            self._clients[timeout] = client
        return client

    def _answer(self, messages: list[dict[str, Any]], timeout: float) -> str:
        if self._ask is not None:
            return self._ask(messages, timeout)
        reply = self._client(timeout).complete(messages, [])
        content = reply.get("content")
        return content if isinstance(content, str) else ""

    # ------------------------------------------------------------------ reviewing

    def review(self, review: ReviewInput) -> ReviewerVerdict:
        """Allow or escalate one ask. Never raises: every failure escalates."""
        started = time.perf_counter()
        model = self.settings.model

        def done(
            decision: Literal["allow", "escalate"],
            stage: Stage,
            reasoning: str,
            first: str | None = None,
        ) -> ReviewerVerdict:
            elapsed = (time.perf_counter() - started) * 1000
            return ReviewerVerdict(decision, stage, reasoning, model, first, elapsed)

        spoken = addresses_reviewer(review)
        if spoken is not None:
            return done(
                "escalate",
                "precheck",
                f"agent-written text speaks to the reviewer ({spoken!r}): a person decides",
            )
        tag = new_tag(review)
        try:
            raw = self._answer(filter_messages(review, tag), self.settings.filter_timeout)
        except Exception as exc:  # an outage never counts as approval
            return done("escalate", "outage", f"the reviewer did not answer: {exc}")
        first = parse_filter(raw, tag)
        shown = raw.strip()[:200]
        if first is None:
            return done(
                "escalate", "malformed", "the fast filter's answer was not understood", shown
            )
        if first == "allow" and self.settings.fast_path(review.verdict.risk):
            return done("allow", "filter", "the fast filter found nothing to flag", shown)
        try:
            raw2 = self._answer(reason_messages(review, tag), self.settings.reason_timeout)
        except Exception as exc:
            return done("escalate", "outage", f"the reviewer did not answer: {exc}", shown)
        second = parse_reasoning(raw2, tag)
        if second is None:
            return done(
                "escalate", "malformed", "the reviewer's reasoning was not understood", shown
            )
        decision, reasoning = second
        return done(decision, "reasoning", reasoning, shown)


def reviewer_for(settings: ReviewerSettings | None) -> Reviewer | None:
    return Reviewer(settings) if settings is not None else None


def review_call(
    policy: Policy,
    reviewer: Reviewer,
    transcript: Any,
    call: ToolCall,
    verdict: Verdict,
    preview: str,
    *,
    person_messages: Sequence[str] | None = None,
) -> tuple[Verdict, dict[str, Any]]:
    """The verdict the call goes on with, and the `reviewer.verdict` event's data. An ask
    outside the remit stays an ask (the model is not asked): the one place a reviewer's
    "allow" becomes a verdict checks the remit itself. `person_messages`: see build_input."""
    outside = remit_problem(policy, call, verdict)
    if outside is not None:
        note = f"outside the reviewer's remit ({outside}): a person decides"
        result = ReviewerVerdict("escalate", "remit", note, reviewer.settings.model)
    else:
        review = build_input(
            transcript or (), call, verdict, preview, person_messages=person_messages
        )
        result = reviewer.review(review)
    data = {
        "call": call.to_json(),
        "asked": verdict.to_json(),
        "reviewer": result.to_json(),
    }
    return result.apply(verdict), data


__all__ = [
    "AUTO_WITHOUT_REVIEWER",
    "REVIEWER_VERDICT",
    "Reviewer",
    "ReviewerVerdict",
    "review_call",
    "reviewer_for",
]
