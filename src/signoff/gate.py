"""The gate: the one place that sequences policy -> channel -> execute.

    allow   run it
    notify  run it, and record it for review after
    ask     show it to a person (the channel) and do what they decide
    deny    do not run it; the refusal, with its reason, is the tool's result

An edit is validated against the tool's schema and judged again (a deny still wins).
A call a person decided is judged again just before it runs: if the verdict became
stricter, or a path it names now resolves elsewhere (a symlink made while the box was
shown), the decision does not cover it and the person is asked again (then refused); the
tool itself then checks that its paths still resolve to the judged targets (see targets).
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
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal

from .channels import Channel, Prompt, RejectingChannel
from .exceptions import CallDenied, RunStopped
from .models import Decision, Grant, Request, ToolCall, Verdict
from .policy import Policy
from .rules import Rule, parse_rule
from .settings import add_local_allow_rule
from .targets import (
    TargetChanged,
    Targets,
    call_targets,
    expecting,
    judgement_change,
    pinned,
    target_change,
    unjudgeable,
)
from .tool_schema import bind_arguments, call_by_name
from .tools import ToolSpec, spec_from_function, spec_of

if TYPE_CHECKING:
    from .models import GrantScope
    from .reviewer import Reviewer
    from .settings import Mode

Outcome = Literal["ran", "denied", "rejected", "skipped", "answered", "failed"]
Previewer = Callable[[ToolCall, ToolSpec], str]
Listener = Callable[[str, Mapping[str, Any]], None]

MAX_CONSECUTIVE_REFUSALS = 3
MAX_TOTAL_REFUSALS = 20
MAX_ASKS_AGAIN = 2  # a call that keeps changing under the person's eyes is then refused


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
    # In auto mode with `[reviewer]` in settings, asks go to the reviewer model first (built
    # from the settings when not given); `transcript` gives it the conversation so far.
    reviewer: Reviewer | None = None
    transcript: Callable[[], Sequence[Mapping[str, Any]]] | None = None

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

    def decide(
        self, call: ToolCall, *, again: str | None = None, judge_as: ToolCall | None = None
    ) -> tuple[Verdict, Decision | None, ToolCall | None]:
        """Verdict, the person's decision if one was needed, and the call to run (or None).
        `again` says why a person is asked a second time (shown first among the reasons);
        `judge_as` is the call with its paths pinned to their targets (see targets.pinned)."""
        if self.stopped:
            raise RunStopped(self.stopped)
        verdict = self.check(judge_as or call)
        if again is not None and verdict.effect == "ask":
            verdict = replace(verdict, reasons=(again, *verdict.reasons))
        elif self.enabled and verdict.effect == "ask" and self.policy.for_reviewer(call, verdict):
            verdict = self._reviewed(call, verdict)
        if (
            not self.enabled
            and verdict.effect == "ask"
            and call.name != "ask_human"
            and not self.policy.person_only(verdict)
        ):  # signoff's own state, a path a deny names: a person decides
            verdict = verdict.with_effect("allow", "approvals are off (/hitl off)")
        if self.listener is not None:
            self.listener("verdict", {"call": call.to_json(), "verdict": verdict.to_json()})
        if verdict.effect in ("allow", "notify"):
            return verdict, None, call
        if verdict.effect == "deny":
            return verdict, None, None
        decision = self._ask(call, verdict)
        return verdict, decision, self._call_for(call, decision)

    def _reviewed(self, call: ToolCall, verdict: Verdict) -> Verdict:
        """The reviewer model's say on an ask: notify (runs, kept for review) or the same
        ask with its note. On the record either way (`reviewer.verdict`)."""
        from .reviewer import Reviewer, review_call  # only when a reviewer is configured

        settings = self.policy.settings.reviewer
        assert settings is not None  # for_reviewer said so
        if self.reviewer is None:
            self.reviewer = Reviewer(settings)
        spec = self.policy.registry.get(call.name)
        transcript = self.transcript() if self.transcript is not None else ()
        reviewed, data = review_call(
            self.policy, self.reviewer, transcript, call, verdict, self.previewer(call, spec)
        )
        self._emit("reviewer", data)
        return reviewed

    def _judged(
        self, call: ToolCall
    ) -> tuple[Verdict, Decision | None, ToolCall | None, Targets | None, str | None]:
        """`decide`, then, when a person decided, the same call judged again as it is now.

        Returns the verdict, the decision, the call to run (None: do not run), the targets
        it was judged on (for the tool to check), and why a decided call may not run."""
        try:
            return self._judged_once_or_again(call)
        except (OSError, TargetChanged) as exc:  # a path flipping while it was resolved
            verdict = unjudgeable(self.policy, call, exc)
            self._emit("verdict", {"call": call.to_json(), "verdict": verdict.to_json()})
            return verdict, None, None, None, None

    def _judged_once_or_again(
        self, call: ToolCall
    ) -> tuple[Verdict, Decision | None, ToolCall | None, Targets | None, str | None]:
        again: str | None = None
        for _ in range(MAX_ASKS_AGAIN + 1):
            # judged on where its paths resolve now; the tool may open only those
            targets = call_targets(self.policy, call)
            judge_as = pinned(self.policy, call, targets)
            verdict, decision, run = self.decide(call, again=again, judge_as=judge_as)
            if run is None or decision is None:
                return verdict, decision, run, targets, None
            if run is not call:  # an edit: judged just now, on the file system as it is
                return verdict, decision, run, call_targets(self.policy, run), None
            now_targets = call_targets(self.policy, call)
            now = self.check(pinned(self.policy, call, now_targets))
            if not self.enabled and now.effect == "ask" and not self.policy.person_only(now):
                now = now.with_effect("allow", "approvals are off (/hitl off)")
            change = judgement_change(verdict, now)
            moved = target_change(targets, now_targets, self.policy.workspace)
            if change is None and moved is None:
                return verdict, decision, run, targets, None
            why = "; ".join(x for x in (moved, change) if x)
            # on the record as a verdict of its own: judged again at run time, and why
            self._emit(
                "verdict", {"call": call.to_json(), "verdict": now.to_json(), "changed": why}
            )
            if now.effect == "deny":
                return now, None, None, None, None
            again = f"asked again: it changed after the decision ({why})"
        return verdict, decision, None, None, why

    def _changed_refusal(self, call: ToolCall, verdict: Verdict, why: str) -> ToolResult:
        content = (
            f"Tool call {call.name} was not run: it kept changing after a person "
            f"decided it ({why}); nothing was done"
        )
        return self._count(ToolResult(call, "denied", content, verdict))

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
            always_scopes=("session", "project"),
            schema=spec.schema,
            judge_edit=lambda args: self._edited_request(request, args),
        )
        with self._prompt_lock:  # one prompt at a time, across threads and tasks
            try:
                decision = self.channel.decide(prompt)
            except Exception as exc:  # a broken channel never counts as approval
                decision = Decision("reject", actor="signoff", reason=f"channel failed: {exc}")
        self._emit(
            "decision",
            {
                "request": request.id,
                "call": call.to_json(),
                "verdict": verdict.to_json(),
                "asked_at": request.created_at,
                "decision": decision.to_json(),
            },
        )
        if decision.kind == "approve_always":
            self._remember(decision, verdict)
        return decision

    def _edited_request(self, request: Request, arguments: Mapping[str, Any]) -> Request:
        """The request as the edit would make it: judged again, with its own preview."""
        edited = self.policy.validated_edit(request.call, arguments)
        spec = self.policy.registry.get(edited.name)
        return replace(
            request,
            call=edited,
            verdict=self.check(edited),
            preview=self.previewer(edited, spec),
            digest=edited.digest(),
        )

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
        verdict, decision, run, targets, changed = self._judged(call)
        if changed is not None:
            return self._changed_refusal(call, verdict, changed)
        if run is None:
            return self._refusal(call, verdict, decision)
        try:
            if targets:  # a file tool: held to the targets it was judged on
                with expecting(targets):
                    value = fn(**run.arguments)
            else:
                value = fn(**run.arguments)
        except Exception as exc:
            return self._failed(call, run, verdict, decision, exc)
        return self._ran(call, run, verdict, decision, value)

    async def aexecute(self, call: ToolCall, fn: Callable[..., Awaitable[Any]]) -> ToolResult:
        self._register(fn)
        import asyncio  # here, not at import: every CLI command and resume imports the gate

        verdict, decision, run, targets, changed = await asyncio.to_thread(self._judged, call)
        if changed is not None:
            return self._changed_refusal(call, verdict, changed)
        if run is None:
            return self._refusal(call, verdict, decision)
        try:
            if targets:
                with expecting(targets):
                    value = await fn(**run.arguments)
            else:
                value = await fn(**run.arguments)
        except Exception as exc:
            return self._failed(call, run, verdict, decision, exc)
        return self._ran(call, run, verdict, decision, value)

    def _register(self, fn: Callable[..., Any]) -> None:
        spec = spec_of(fn)
        if spec is not None and not self.policy.registry.known(spec.name):
            self.policy.registry.add(spec)

    def wrap(self, fn: Callable[..., Any], spec: ToolSpec | None = None) -> Callable[..., Any]:
        """Guard a function (sync or async). Called as the function is (positional
        arguments are bound to its signature and named, so `f(a, b)` is judged, shown and
        recorded as `f(x=a, y=b)`), it returns the function's value, or raises `CallDenied`
        when the call did not run. A call the signature refuses raises `TypeError` naming
        the tool and the argument, before anything is judged."""
        spec = spec or spec_of(fn) or spec_from_function(fn, tier="unknown")
        if not self.policy.registry.known(spec.name):
            self.policy.registry.add(spec)
        name = spec.name
        target = call_by_name(fn)

        def unwrap(result: ToolResult) -> Any:
            if result.outcome == "ran" or result.outcome == "answered":
                return result.value
            reason = result.decision.reason if result.decision else result.verdict.reason
            raise CallDenied(name, reason or result.content, rule=result.verdict.rule)

        if inspect.iscoroutinefunction(fn):

            @functools.wraps(fn)
            async def guarded_async(*args: Any, **kwargs: Any) -> Any:
                arguments = bind_arguments(fn, name, args, kwargs)
                if not self.enabled and self._bypass(name):
                    return await target(**arguments)
                return unwrap(await self.aexecute(ToolCall(name, arguments), target))

            return guarded_async

        @functools.wraps(fn)
        def guarded(*args: Any, **kwargs: Any) -> Any:
            arguments = bind_arguments(fn, name, args, kwargs)
            if not self.enabled and self._bypass(name):
                return target(**arguments)
            return unwrap(self._execute(ToolCall(name, arguments), target))  # registered above

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
