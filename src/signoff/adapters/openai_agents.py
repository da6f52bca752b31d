"""signoff inside the OpenAI Agents SDK: approval from the policy, deny as a guardrail.

    so = Signoff(store="sqlite:///.signoff/signoff.db", tools=[email_spec])
    agent = Agent(name="support", model=model, tools=so.guarded([function_tool(email)]))
    done = await so.run(agent, "email the customer", thread="ticket-42")
    # done.status == "paused": decide done.requests in the inbox; then, in any process:
    done = await so.resume(agent, thread="ticket-42")

Each guarded tool gets `needs_approval` from the policy (true iff signoff asks), an input
guardrail that refuses a denied call with the rule's reason (the model reads it), and an
invoker that claims an approved call, so it runs once. A pause stores the serialized
`RunState` in signoff's run with one request per interruption (id from the thread and the
call id); `resume` loads it and applies the stored decisions with `state.approve` /
`state.reject(rejection_message=...)`. The SDK cannot run a call with edited arguments:
`decide` refuses an edit, and an edit decided elsewhere is not run (the model is told).
An answer reaches the model as the rejection message (the SDK has no other channel).
"""

from __future__ import annotations

import asyncio
import base64
import contextvars
import json
import os
import zlib
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from agents import Agent, FunctionTool, RunContextWrapper, Runner, RunState
from agents.tool_context import ToolContext
from agents.tool_guardrails import (
    ToolGuardrailFunctionOutput,
    ToolInputGuardrail,
    ToolInputGuardrailData,
)
from pydantic_core import PydanticSerializationError, from_json, to_json

from ..approvals import decide as decide_request
from ..exceptions import ConfigurationError, InvalidInput
from ..models import Decision, Request, ToolCall, Verdict
from ..policy import Policy
from ..run_state import PendingCall, Run
from ..store import Store
from ..tools import ToolSpec
from .frameworks import Guard, as_arguments, await_finishes

EDIT_REFUSED = (
    "the OpenAI Agents SDK cannot run a tool call with edited arguments "
    "(it can only approve or reject the call the model made); approve or reject it"
)

_THREAD: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "signoff_openai_thread", default=None
)
# The finishes of the approved calls run under Signoff.run, written off the path to the
# model's next turn (see Guard.arun_once): awaited before the run is saved or returns.
_FINISHING: contextvars.ContextVar[list[asyncio.Future[None]] | None] = contextvars.ContextVar(
    "signoff_openai_finishing", default=None
)


@dataclass(frozen=True)
class Outcome:
    """How a run left off: `finished` with its final output, or `paused` on `requests`."""

    status: Literal["finished", "paused"]
    thread: str
    run_id: str
    output: Any = None
    requests: tuple[str, ...] = field(default_factory=tuple)


def _thread() -> str:
    thread = _THREAD.get()
    if not thread:
        raise ConfigurationError(
            "a signoff-guarded tool ran outside Signoff.run / Signoff.resume: run the agent "
            "through them, so that its calls belong to a thread"
        )
    return thread


class Signoff:
    """Guard an Agents SDK agent's function tools and keep its pauses in signoff's store."""

    def __init__(
        self,
        *,
        store: Store | str | os.PathLike[str] | None = None,
        workspace: str | os.PathLike[str] = ".",
        policy: Policy | None = None,
        tools: Iterable[Callable[..., Any] | ToolSpec] = (),
        approvers: Sequence[str] = (),
        factory: str | None = None,
    ) -> None:
        # factory: `package.module:attr` returning (agent, this adapter), for `signoff worker`
        self.guard = Guard(
            "openai_agents",
            store=store,
            workspace=workspace,
            policy=policy,
            tools=tools,
            approvers=approvers,
            factory=factory,
        )
        self._verdicts: dict[tuple[str, str], Verdict] = {}
        self.guardrail: ToolInputGuardrail[Any] = ToolInputGuardrail(
            guardrail_function=self._check, name="signoff"
        )

    # ------------------------------------------------------------------ tools

    def guarded(self, tools: Iterable[FunctionTool]) -> list[FunctionTool]:
        """The tools with signoff's approval, guardrail and run-once invoker (in place)."""
        out = []
        for tool in tools:
            if not isinstance(tool, FunctionTool):
                raise InvalidInput(f"tool {tool!r}: signoff guards function tools only")
            self.guard.spec(tool.name, tool.description, tool.params_json_schema)
            tool.needs_approval = self._approval_for(tool.name)
            tool.tool_input_guardrails = [*(tool.tool_input_guardrails or []), self.guardrail]
            tool.on_invoke_tool = self._invoker(tool.on_invoke_tool)
            out.append(tool)
        return out

    def _verdict(self, thread: str, call: ToolCall) -> Verdict:
        key = (thread, call.id)
        verdict = self._verdicts.pop(key, None)  # judged once per call: approval and
        if verdict is None:  # guardrail agree (the guardrail comes second and takes it)
            # grants read per call: the SDK does not say which model turn this is
            verdict = self.guard.judge(call, thread=thread)
        return verdict

    def _approval_for(
        self, name: str
    ) -> Callable[[RunContextWrapper[Any], dict[str, Any], str], Awaitable[bool]]:
        async def needs_approval(
            ctx: RunContextWrapper[Any], params: dict[str, Any], call_id: str
        ) -> bool:
            return await self._needs_approval(name, params, call_id)

        return needs_approval

    async def _needs_approval(self, name: str, params: dict[str, Any], call_id: str) -> bool:
        thread = _thread()
        call = ToolCall(name, as_arguments(params, name), call_id)
        request_id = self.guard.request_id(thread, call_id)
        if self.guard.known(thread, request_id):
            return True  # asked before (this is a resume): the answer does not change
        verdict = self._verdict(thread, call)
        if verdict.effect != "ask":
            self._verdicts[(thread, call_id)] = verdict  # for the guardrail
            return False  # allow runs; deny is refused by the guardrail
        self.guard.ask(call, verdict, thread=thread, defer=True)  # stored with the pause
        return True

    async def _check(self, data: ToolInputGuardrailData) -> ToolGuardrailFunctionOutput:
        thread = _thread()
        ctx: ToolContext[Any] = data.context
        call = ToolCall(
            ctx.tool_name, as_arguments(ctx.tool_arguments, ctx.tool_name), ctx.tool_call_id
        )
        guard = self.guard
        request_id = guard.request_id(thread, ctx.tool_call_id)
        if not guard.known(thread, request_id):
            verdict = self._verdict(thread, call)
            if verdict.effect == "deny":
                return ToolGuardrailFunctionOutput.reject_content(guard.refusal(call, verdict))
            if verdict.effect != "ask":
                return ToolGuardrailFunctionOutput.allow()
            if not guard._exists(request_id):  # approved by someone signoff never asked
                return ToolGuardrailFunctionOutput.reject_content(
                    f"Tool call {call.name} was not run: it needs a signoff approval"
                )
            guard.remember(thread, request_id)  # a call asked before, replayed
        # a call a person decided: settled from the store
        settled = self.guard.settle(request_id, thread=thread)
        if settled.action == "pending":
            return ToolGuardrailFunctionOutput.reject_content(
                f"Tool call {call.name} was not run: nobody has decided it yet"
            )
        if settled.action != "run":
            return ToolGuardrailFunctionOutput.reject_content(settled.content or "")
        problem = self.guard.check_payload(settled, call.arguments)
        if problem:  # an edit (this SDK runs the model's arguments), or tampering
            return ToolGuardrailFunctionOutput.reject_content(problem)
        return ToolGuardrailFunctionOutput.allow()

    def _invoker(
        self, invoke: Callable[[ToolContext[Any], str], Any]
    ) -> Callable[[ToolContext[Any], str], Any]:
        guard = self.guard

        async def guarded(ctx: ToolContext[Any], arguments: str) -> Any:
            thread = _thread()
            request_id = guard.request_id(thread, ctx.tool_call_id)
            if not guard.known(thread, request_id):
                token = guard.keyed(thread, ctx.tool_call_id)
                try:
                    return await invoke(ctx, arguments)
                finally:
                    guard.unkey(token)
            settled = guard.settle(request_id, thread=thread)
            if settled.action != "run":  # the guardrail refuses these first
                return settled.content
            later = _FINISHING.get()
            _ran, value = await guard.arun_once(
                settled.request, lambda: invoke(ctx, arguments), later=later
            )
            return value

        return guarded

    # ------------------------------------------------------------------ deciding

    def decide(self, request_id: str, decision: Decision, *, actor: str) -> Request:
        """Decide a request of this adapter (an edit is refused: see EDIT_REFUSED)."""
        if decision.kind == "edit":
            raise InvalidInput(f"request {request_id}: {EDIT_REFUSED}")
        return decide_request(
            self.guard.store, request_id, decision, actor=actor, policy=self.guard.policy
        )

    def apply_decisions(self, state: RunState[Any], thread: str) -> bool:
        """Approve / reject the state's interruptions from the stored decisions; False
        (nothing applied) while any is still pending."""
        plans = []
        for item in state.get_interruptions():
            call_id = _call_id(item)
            settled = self.guard.settle(self.guard.request_id(thread, call_id), thread=thread)
            if settled.action == "pending":
                return False
            plans.append((item, settled))
        for item, settled in plans:
            decision = settled.request.decision
            if settled.action == "run" and decision is not None and decision.kind == "edit":
                state.reject(
                    item,
                    rejection_message=f"Tool call {settled.request.call.name} was not run: "
                    f"the reviewer edited it, and {EDIT_REFUSED}",
                )
            elif settled.action == "run":
                state.approve(item)
            else:
                state.reject(item, rejection_message=settled.content or "rejected")
        return True

    # ------------------------------------------------------------------ durable runs

    async def run(
        self, agent: Agent[Any], input: str | None = None, *, thread: str, **options: Any
    ) -> Outcome:
        """Run the thread, or go on with it once every request is decided."""
        guard = self.guard
        run = guard.begin(thread)  # decisions and grants made meanwhile count
        finishing: list[asyncio.Future[None]] = []
        token, later = _THREAD.set(thread), _FINISHING.set(finishing)
        try:
            return await self._drive(agent, input, thread, run, finishing, **options)
        finally:
            _THREAD.reset(token)
            _FINISHING.reset(later)

    async def _drive(
        self,
        agent: Agent[Any],
        input: str | None,
        thread: str,
        run: Run,
        finishing: list[asyncio.Future[None]],
        **options: Any,
    ) -> Outcome:
        if run.status == "finished":
            if input is None:
                return Outcome("finished", thread, run.id, output=run.note)
            raise InvalidInput(f"thread {thread!r} (run {run.id}) has finished")
        try:
            if run.status == "paused":
                state = await RunState.from_json(agent, unpack(run.metadata["state"]))
                if not self.apply_decisions(state, thread):
                    waiting = tuple(p.request_id for p in run.pending if p.request_id)
                    return Outcome("paused", thread, run.id, requests=waiting)
                result = await Runner.run(agent, state, **options)
            else:
                if input is None:
                    raise InvalidInput(f"thread {thread!r} has nothing to resume")
                result = await Runner.run(agent, input, **options)
        finally:
            await await_finishes(finishing)  # before the run is saved or returns
        if result.interruptions:
            return self._pause(thread, result)
        saved = self.guard.save(
            thread,
            status="finished",
            pending=(),
            note=str(result.final_output)[:2000],
            metadata={"state": None},
        )
        return Outcome("finished", thread, saved.id, output=result.final_output)

    async def resume(self, agent: Agent[Any], *, thread: str, **options: Any) -> Outcome:
        return await self.run(agent, None, thread=thread, **options)

    def _pause(self, thread: str, result: Any) -> Outcome:
        guard = self.guard
        pending: list[PendingCall] = []
        requests: list[Request] = []
        for item in result.interruptions:
            call_id = _call_id(item)
            name = item.tool_name or ""
            call = ToolCall(name, as_arguments(item.arguments or "{}", name), call_id)
            request_id = guard.request_id(thread, call_id)
            if not guard.known(thread, request_id):  # a tool that asks by itself
                verdict = guard.judge(call, thread=thread)
                if verdict.effect != "ask":
                    verdict = verdict.with_effect("ask", "the tool requires approval")
                requests.append(guard.new_request(call, verdict, thread=thread))
            pending.append(PendingCall(call_id, name, call, "ask", request_id=request_id))
        state = pack(result.to_state().to_json())
        saved = guard.save(
            thread, status="paused", pending=pending, requests=requests, metadata={"state": state}
        )
        return Outcome(
            "paused", thread, saved.id, requests=tuple(p.request_id or "" for p in pending)
        )


def pack(state: dict[str, Any]) -> str:
    """The serialized RunState as kept in the run: compressed JSON (it repeats itself:
    a twentieth of the bytes written at each pause). pydantic-core's encoder (the SDK's
    own dependency) takes half the time `json.dumps` does on a state of a few hundred KB,
    and zlib's fastest level a third of the default's, for 12% more bytes."""
    try:
        raw = to_json(state)
    except PydanticSerializationError:  # a lone surrogate: json escapes it, and keeps it
        raw = json.dumps(state, separators=(",", ":")).encode()
    return "zlib:" + base64.b64encode(zlib.compress(raw, 1)).decode("ascii")


def unpack(stored: Any) -> dict[str, Any]:
    if isinstance(stored, str) and stored.startswith("zlib:"):
        raw = zlib.decompress(base64.b64decode(stored[5:]))
        try:
            value = from_json(raw)
        except ValueError:  # an escaped lone surrogate (see pack), which json reads back
            value = json.loads(raw)
    else:
        value = stored
    if not isinstance(value, dict):
        raise InvalidInput("the stored RunState is not a JSON object")
    return value


def _call_id(item: Any) -> str:
    raw = item.raw_item
    call_id = raw.get("call_id") if isinstance(raw, dict) else getattr(raw, "call_id", None)
    if not call_id:
        raise InvalidInput(f"interruption {item.tool_name}: it has no call id")
    return str(call_id)


__all__ = ["EDIT_REFUSED", "Outcome", "Signoff"]
