"""The gate: the one place that sequences policy -> channel -> execute.

    allow   run it
    notify  run it, and record it for review after
    ask     show it to a person (the channel) and do what they decide
    deny    do not run it; the refusal, with its reason, is the tool's result

An edit is validated against the tool's schema and judged again (a deny still wins).
"Always" saves a grant: in memory for the run or session, or as an allow rule in
`.signoff/settings.local.toml` for the project. Three refusals in a row or twenty in all
stop the session. Prompts from several threads or tasks are shown one at a time.
"""

from __future__ import annotations

import functools
import inspect
import json
import threading
import time
import uuid
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from .channels import Channel, Prompt, RejectingChannel
from .exceptions import CallDenied, RunStopped
from .models import Decision, Grant, GrantScope, Request, ToolCall, Verdict
from .policy import Policy
from .registry import ToolSpec, spec_from_function, spec_of
from .rules import Rule, parse_rule
from .settings import Mode, add_local_allow_rule

Outcome = Literal["ran", "denied", "rejected", "skipped", "answered", "failed"]
Previewer = Callable[[ToolCall, ToolSpec], str]
Listener = Callable[[str, Mapping[str, Any]], None]

MAX_CONSECUTIVE_REFUSALS = 3
MAX_TOTAL_REFUSALS = 20


@dataclass(frozen=True, slots=True)
class ToolResult:
    """What happened to one call; `content` is what the model reads as the tool result."""

    call: ToolCall
    outcome: Outcome
    content: str
    verdict: Verdict
    value: Any = None
    decision: Decision | None = None
    executed_call: ToolCall | None = None  # differs from `call` after an edit

    @property
    def ran(self) -> bool:
        return self.outcome == "ran"


@dataclass(frozen=True, slots=True)
class NotifiedCall:
    """A call that ran under `notify`: shown to a person after the fact."""

    call: ToolCall
    verdict: Verdict
    at: float
    outcome: str


def default_preview(call: ToolCall, spec: ToolSpec) -> str:
    if spec.command_arg and isinstance(call.arguments.get(spec.command_arg), str):
        return str(call.arguments[spec.command_arg])
    return json.dumps(dict(call.arguments), indent=2, ensure_ascii=False)


def result_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return str(value)


def refusal_content(
    name: str, verdict: Verdict, decision: Decision | None, *, problem: str | None = None
) -> tuple[Outcome, str]:
    """What the model reads when a call did not run (or a person answered for it)."""
    if decision is None:
        return "denied", f"Tool call {name} was denied by policy: {verdict.reason}"
    if decision.kind == "skip":
        return "skipped", f"Tool call {name} was skipped by the reviewer" + (
            f": {decision.reason}" if decision.reason else "; continue without it."
        )
    if decision.kind == "respond":
        return "answered", result_text(decision.result)
    if decision.kind == "edit":
        return "denied", f"Tool call {name} was not run: the reviewer's edit was refused: {problem}"
    return "rejected", f"Tool call {name} was rejected by the reviewer: {decision.reason}"


@dataclass
class _Counters:
    consecutive: int = 0
    total: int = 0


@dataclass
class Gate:
    """Guards tool calls. Build one per agent session and route every call through it."""

    policy: Policy
    channel: Channel = field(default_factory=RejectingChannel)
    enabled: bool = True
    previewer: Previewer = default_preview
    listener: Listener | None = None
    actor: str = "local"

    def __post_init__(self) -> None:
        self.grants: list[Grant] = []
        self._grant_rules: list[Rule] = []
        self.review: list[NotifiedCall] = []
        self.stopped: str | None = None
        self._counters = _Counters()
        self._prompt_lock = threading.Lock()
        self._state_lock = threading.Lock()
        self._may_deny: dict[str, bool] = {}

    # ------------------------------------------------------------------ switches

    def set_enabled(self, enabled: bool) -> None:
        self.enabled = enabled

    def set_mode(self, mode: Mode) -> None:
        self.policy = self.policy.with_mode(mode)
        self._may_deny.clear()

    def clear(self) -> None:
        """Forget the session: in-memory grants, review items, refusal counters."""
        with self._state_lock:
            self.grants.clear()
            self._grant_rules.clear()
            self.review.clear()
            self._counters = _Counters()
            self.stopped = None

    def revoke(self, grant_id: str) -> bool:
        with self._state_lock:
            for index, grant in enumerate(self.grants):
                if grant.id == grant_id:
                    del self.grants[index]
                    del self._grant_rules[index]
                    return True
        return False

    # ------------------------------------------------------------------ judging

    def check(self, call: ToolCall) -> Verdict:
        return self.policy.evaluate(call, grants=tuple(self._grant_rules))

    def _bypass(self, name: str) -> bool:
        """Disabled gate: skip evaluation for tools that can never be denied."""
        may = self._may_deny.get(name)
        if may is None:
            may = self._may_deny[name] = self.policy.may_deny(name)
        return not may

    def decide(self, call: ToolCall) -> tuple[Verdict, Decision | None, ToolCall | None]:
        """Verdict, the person's decision if one was needed, and the call to run (or None)."""
        if self.stopped:
            raise RunStopped(self.stopped)
        verdict = self.check(call)
        if not self.enabled and verdict.effect == "ask" and call.name != "ask_human":
            verdict = verdict.with_effect("allow", "approvals are off (/hitl off)")
        if self.listener is not None:
            self.listener("verdict", {"call": call.to_json(), "verdict": verdict.to_json()})
        if verdict.effect in ("allow", "notify"):
            return verdict, None, call
        if verdict.effect == "deny":
            return verdict, None, None
        decision = self._ask(call, verdict)
        return verdict, decision, self._call_for(call, decision)

    def _ask(self, call: ToolCall, verdict: Verdict) -> Decision:
        spec = self.policy.registry.get(call.name)
        request = Request(
            id=f"req_{uuid.uuid4().hex[:12]}",
            call=call,
            verdict=verdict,
            preview=self.previewer(call, spec),
            created_at=time.time(),
            digest=call.digest(),
        )
        prompt = Prompt(
            request=request,
            validate_edit=lambda args: self._edit_problem(call, args),
            always_rule=verdict.suggested_rule,
            always_scope="session",
            schema=spec.schema,
            judge_edit=lambda args: self._edited_request(request, args),
        )
        with self._prompt_lock:  # one prompt at a time, across threads and tasks
            try:
                decision = self.channel.decide(prompt)
            except Exception as exc:  # a broken channel never counts as approval
                decision = Decision("reject", actor="signoff", reason=f"channel failed: {exc}")
        self._emit("decision", {"request": request.id, "call": call.to_json(),
                                "verdict": verdict.to_json(), "asked_at": request.created_at,
                                "decision": decision.to_json()})
        if decision.kind == "approve_always":
            self._remember(decision, verdict)
        return decision

    def _edited_request(self, request: Request, arguments: Mapping[str, Any]) -> Request:
        """The request as the edit would make it: judged again, with its own preview."""
        edited = self.policy.validated_edit(request.call, arguments)
        spec = self.policy.registry.get(edited.name)
        return replace(request, call=edited, verdict=self.check(edited),
                       preview=self.previewer(edited, spec), digest=edited.digest())

    def _edit_problem(self, call: ToolCall, arguments: Mapping[str, Any]) -> str | None:
        return self.policy.edit_problem(call, arguments, grants=tuple(self._grant_rules))

    def _call_for(self, call: ToolCall, decision: Decision) -> ToolCall | None:
        if decision.kind in ("approve", "approve_always"):
            return call
        if decision.kind == "edit" and decision.arguments is not None:
            problem = self._edit_problem(call, decision.arguments)
            return None if problem else self.policy.validated_edit(call, decision.arguments)
        return None

    def _remember(self, decision: Decision, verdict: Verdict) -> None:
        text = decision.rule or verdict.suggested_rule
        if not text:
            return  # nothing narrow enough to remember: this one approval only
        rule = parse_rule(text, source=f"grant:{decision.scope}")
        scope: GrantScope = decision.scope or "session"
        if scope == "project":
            add_local_allow_rule(self.policy.workspace, text)
        grant = Grant(
            rule=text,
            scope=scope,
            id=f"grant_{uuid.uuid4().hex[:10]}",
            created_at=time.time(),
            created_by=decision.actor,
        )
        with self._state_lock:
            self.grants.append(grant)
            self._grant_rules.append(rule)
        self._emit("grant", grant.to_json())

    # ------------------------------------------------------------------ outcomes

    def _refusal(self, call: ToolCall, verdict: Verdict, decision: Decision | None) -> ToolResult:
        problem = None
        if decision is not None and decision.kind == "edit":
            problem = self._edit_problem(call, decision.arguments or {})
        outcome, content = refusal_content(call.name, verdict, decision, problem=problem)
        value = decision.result if decision is not None and decision.kind == "respond" else None
        return self._count(ToolResult(call, outcome, content, verdict, value, decision))

    def _count(self, result: ToolResult) -> ToolResult:
        with self._state_lock:
            if result.outcome in ("denied", "rejected"):
                self._counters.consecutive += 1
                self._counters.total += 1
            elif result.outcome in ("ran", "answered"):
                self._counters.consecutive = 0
            c = self._counters
            if c.consecutive >= MAX_CONSECUTIVE_REFUSALS or c.total >= MAX_TOTAL_REFUSALS:
                self.stopped = (
                    f"stopped after {c.consecutive} refusals in a row ({c.total} in all): "
                    "a person needs to look at this session"
                )
        if self.listener is not None:
            self.listener("outcome", {"call": result.call.to_json(), "outcome": result.outcome})
        return result

    def _ran(
        self, call: ToolCall, run: ToolCall, verdict: Verdict, decision: Decision | None, value: Any
    ) -> ToolResult:
        if verdict.effect == "notify" and decision is None:
            self.review.append(NotifiedCall(run, verdict, time.time(), "ran"))
        return self._count(
            ToolResult(call, "ran", result_text(value), verdict, value, decision, run)
        )

    def _failed(
        self,
        call: ToolCall,
        run: ToolCall,
        verdict: Verdict,
        decision: Decision | None,
        exc: Exception,
    ) -> ToolResult:
        return self._count(
            ToolResult(
                call, "failed", f"Tool {call.name} failed: {exc}", verdict, None, decision, run
            )
        )

    # ------------------------------------------------------------------ sync and async twins

    def execute(self, call: ToolCall, fn: Callable[..., Any]) -> ToolResult:
        """Judge `call`, ask if needed, and run `fn(**arguments)` only if allowed."""
        self._register(fn)
        return self._execute(call, fn)

    def _execute(self, call: ToolCall, fn: Callable[..., Any]) -> ToolResult:
        verdict, decision, run = self.decide(call)
        if run is None:
            return self._refusal(call, verdict, decision)
        try:
            value = fn(**run.arguments)
        except Exception as exc:
            return self._failed(call, run, verdict, decision, exc)
        return self._ran(call, run, verdict, decision, value)

    async def aexecute(self, call: ToolCall, fn: Callable[..., Awaitable[Any]]) -> ToolResult:
        self._register(fn)
        import asyncio  # here, not at import: every CLI command and resume imports the gate

        verdict, decision, run = await asyncio.to_thread(self.decide, call)
        if run is None:
            return self._refusal(call, verdict, decision)
        try:
            value = await fn(**run.arguments)
        except Exception as exc:
            return self._failed(call, run, verdict, decision, exc)
        return self._ran(call, run, verdict, decision, value)

    def _register(self, fn: Callable[..., Any]) -> None:
        spec = spec_of(fn)
        if spec is not None and not self.policy.registry.known(spec.name):
            self.policy.registry.add(spec)

    def wrap(self, fn: Callable[..., Any], spec: ToolSpec | None = None) -> Callable[..., Any]:
        """Guard a function (sync or async). Called with keyword arguments, it returns the
        function's value, or raises `CallDenied` when the call did not run."""
        spec = spec or spec_of(fn) or spec_from_function(fn, tier="unknown")
        if not self.policy.registry.known(spec.name):
            self.policy.registry.add(spec)
        name = spec.name

        def unwrap(result: ToolResult) -> Any:
            if result.outcome == "ran" or result.outcome == "answered":
                return result.value
            reason = result.decision.reason if result.decision else result.verdict.reason
            raise CallDenied(name, reason or result.content, rule=result.verdict.rule)

        if inspect.iscoroutinefunction(fn):

            @functools.wraps(fn)
            async def guarded_async(**kwargs: Any) -> Any:
                if not self.enabled and self._bypass(name):
                    return await fn(**kwargs)
                return unwrap(await self.aexecute(ToolCall(name, kwargs), fn))

            return guarded_async

        @functools.wraps(fn)
        def guarded(**kwargs: Any) -> Any:
            if not self.enabled and self._bypass(name):
                return fn(**kwargs)
            return unwrap(self._execute(ToolCall(name, kwargs), fn))  # registered above

        return guarded

    def _emit(self, kind: str, payload: Mapping[str, Any]) -> None:
        if self.listener is not None:
            self.listener(kind, payload)


__all__ = [
    "Gate",
    "NotifiedCall",
    "ToolResult",
    "default_preview",
    "refusal_content",
    "result_text",
]
