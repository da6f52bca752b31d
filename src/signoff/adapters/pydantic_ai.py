"""signoff inside Pydantic AI: a capability that judges every tool call.

    so = Signoff(store="sqlite:///.signoff/signoff.db", tools=[refund])
    agent = Agent(model, tools=[refund], capabilities=[so],
                  output_type=[str, DeferredToolRequests])
    done = await so.run(agent, "refund order A2", thread="ticket-42")
    # done.status == "paused": done.requests wait in `signoff inbox`; later, any process:
    done = await so.resume(agent, thread="ticket-42")

allow / notify run; deny: the tool does not run and the model reads the rule's reason; ask:
the call is deferred (`ApprovalRequired`) and stored as a signoff request whose id comes
from the conversation id and the tool-call id. `run` keeps the run's messages in signoff's
store; `resume` builds `DeferredToolResults` from the stored decisions (approve, edit as
`override_args`, reject / skip as `ToolDenied` with the reason, an answer as the tool's
result). A resumed call is settled from the store, never from the results object: a forged
or replayed approval of a call nobody approved is asked again, an edit is judged again
(a deny still wins), and an approved call is claimed, so it runs once.
"""

from __future__ import annotations

import asyncio
import contextvars
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic_ai import Agent
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.capabilities.abstract import WrapToolExecuteHandler
from pydantic_ai.exceptions import ApprovalRequired, SkipToolExecution
from pydantic_ai.messages import ModelMessage, ModelMessagesTypeAdapter, ToolCallPart
from pydantic_ai.tools import (
    DeferredToolRequests,
    DeferredToolResults,
    RunContext,
    ToolApproved,
    ToolDefinition,
    ToolDenied,
)
from pydantic_core import PydanticSerializationError, to_json

from ..exceptions import InvalidInput
from ..models import Request, ToolCall
from ..policy import Policy
from ..run_state import PendingCall, Run
from ..store import Store
from ..tools import ToolSpec
from .frameworks import Guard, as_arguments, await_finishes

META_KEY = "signoff_request"
_RUNNING: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "signoff_pydantic_ai_thread", default=None
)
# Under `run`: the finishes of approved calls still being written (see `Guard.arun_once`).
_FINISHING: contextvars.ContextVar[list[asyncio.Future[None]] | None] = contextvars.ContextVar(
    "signoff_pydantic_ai_finishing", default=None
)


@dataclass(frozen=True)
class Outcome:
    """How a run left off: `finished` with the agent's output, or `paused` waiting on
    `requests` (signoff request ids, decided in the inbox, the web or the CLI)."""

    status: Literal["finished", "paused"]
    thread: str
    run_id: str
    output: Any = None
    requests: tuple[str, ...] = field(default_factory=tuple)


class Signoff(AbstractCapability[Any]):
    """The capability: judge, defer, settle, run once. The thread is the run's
    `conversation_id` (`run` and `resume` set it)."""

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
            "pydantic_ai",
            store=store,
            workspace=workspace,
            policy=policy,
            tools=tools,
            approvers=approvers,
            factory=factory,
        )

    # ------------------------------------------------------------------ the hook

    async def wrap_tool_execute(
        self,
        ctx: RunContext[Any],
        *,
        call: ToolCallPart,
        tool_def: ToolDefinition,
        args: dict[str, Any],
        handler: WrapToolExecuteHandler,
    ) -> Any:
        guard = self.guard
        thread = ctx.conversation_id
        if not thread:
            raise InvalidInput(f"tool call {call.tool_name}: the run has no conversation_id")
        guard.spec(tool_def.name, tool_def.description or "", tool_def.parameters_json_schema)
        tool_call = ToolCall(call.tool_name, as_arguments(args, call.tool_name), call.tool_call_id)
        if ctx.tool_call_approved:
            existing = guard.request_id(thread, call.tool_call_id)
            if guard.known(thread, existing) or guard._exists(existing):
                guard.remember(thread, existing)
                return await self._settled(existing, tool_call, thread, args, handler)
            # approved by someone signoff never asked: judged like any other call
        verdict = guard.judge(tool_call, thread=thread, turn=ctx.run_step)
        if verdict.effect == "deny":
            raise SkipToolExecution(guard.refusal(tool_call, verdict))
        if verdict.effect == "ask":
            # under `run`, the request is stored with the pause (one transaction)
            request = guard.ask(tool_call, verdict, thread=thread, defer=_RUNNING.get() == thread)
            raise ApprovalRequired(metadata={META_KEY: request.id})
        token = guard.keyed(thread, call.tool_call_id)
        try:
            return await handler(args)
        finally:
            guard.unkey(token)

    async def _settled(
        self,
        request_id: str,
        call: ToolCall,
        thread: str,
        args: dict[str, Any],
        handler: WrapToolExecuteHandler,
    ) -> Any:
        settled = self.guard.settle(request_id, thread=thread)
        if settled.action == "pending":  # an approval signoff did not record: ask again
            raise ApprovalRequired(metadata={META_KEY: request_id})
        if settled.action == "answered":
            raise SkipToolExecution(settled.value)
        if settled.action == "refused":
            raise SkipToolExecution(settled.content)
        problem = self.guard.check_payload(settled, call.arguments)
        if problem:
            raise SkipToolExecution(problem)
        later = _FINISHING.get() if _RUNNING.get() == thread else None
        ran, value = await self.guard.arun_once(settled.request, lambda: handler(args), later=later)
        if not ran:
            raise SkipToolExecution(value)
        return value

    # ------------------------------------------------------------------ durable runs

    def results_for(self, thread: str) -> DeferredToolResults | None:
        """The paused run's decisions as `DeferredToolResults` (None while any waits)."""
        return self._results(self.guard.run(thread), thread)

    def _results(self, run: Run, thread: str) -> DeferredToolResults | None:
        results = DeferredToolResults()
        for pending in run.pending:
            if not pending.request_id:
                continue
            settled = self.guard.settle(pending.request_id, thread=thread)
            if settled.action == "pending":
                return None
            call_id = pending.call_id
            results.metadata[call_id] = {META_KEY: pending.request_id}
            decision = settled.request.decision
            if decision is not None:
                results.answered_by[call_id] = decision.actor
            if settled.action == "refused":
                results.approvals[call_id] = ToolDenied(settled.content or "denied")
            elif settled.action == "run" and settled.call is not None:
                results.approvals[call_id] = ToolApproved(
                    override_args=dict(settled.call.arguments)
                )
            else:  # answered: the hook hands the person's answer to the model
                results.approvals[call_id] = ToolApproved()
        return results

    async def run(
        self, agent: Agent[Any, Any], prompt: str | None = None, *, thread: str, **options: Any
    ) -> Outcome:
        """Run (or go on with) the thread: its messages come from and go to the store; a
        paused thread goes on only once every request is decided."""
        guard = self.guard
        run = guard.begin(thread)  # decisions and grants made meanwhile count
        if run.status == "finished":
            if prompt is None:  # resumed again: it is done
                return Outcome("finished", thread, run.id, output=run.note)
            raise InvalidInput(f"thread {thread!r} (run {run.id}) has finished; start another")
        # a run with no messages yet (a new thread) has none to read
        stored = guard.load_messages(thread) if run.message_count else []
        history: list[ModelMessage] | None = (
            ModelMessagesTypeAdapter.validate_python(stored) if stored else None
        )
        results = None
        if run.status == "paused":
            results = self._results(run, thread)  # the run as `begin` read it
            if results is None:
                waiting = tuple(p.request_id for p in run.pending if p.request_id)
                return Outcome("paused", thread, run.id, requests=waiting)
            prompt = None
        finishing: list[asyncio.Future[None]] = []
        running, later = _RUNNING.set(thread), _FINISHING.set(finishing)
        try:
            result = await agent.run(
                prompt,
                message_history=history,
                deferred_tool_results=results,
                conversation_id=thread,
                **options,
            )
        finally:
            _RUNNING.reset(running)
            _FINISHING.reset(later)
            await await_finishes(finishing)  # before the run is saved or returns
        new, checked = _dumped(result.all_messages()[len(stored) :])
        output = result.output
        if isinstance(output, DeferredToolRequests):
            return self._pause(thread, output, new, checked=checked)
        saved = guard.save(
            thread,
            status="finished",
            messages=new,
            pending=(),
            note=str(output)[:2000],
            checked=checked,
        )
        return Outcome("finished", thread, saved.id, output=output)

    async def resume(self, agent: Agent[Any, Any], *, thread: str, **options: Any) -> Outcome:
        """Go on with a paused thread (in any process) once it is decided."""
        return await self.run(agent, None, thread=thread, **options)

    def _pause(
        self,
        thread: str,
        deferred: DeferredToolRequests,
        new: Sequence[Mapping[str, Any]],
        *,
        checked: bool = False,
    ) -> Outcome:
        guard = self.guard
        if deferred.calls:
            names = ", ".join(c.tool_name for c in deferred.calls)
            raise InvalidInput(
                f"thread {thread!r}: external deferred calls ({names}) are not signoff's to "
                "decide; run them yourself, or let signoff ask for them"
            )
        pending: list[PendingCall] = []
        requests: list[Request] = []
        for part in deferred.approvals:
            call = ToolCall(
                part.tool_name, as_arguments(part.args_as_dict(), part.tool_name), part.tool_call_id
            )
            meta = deferred.metadata.get(part.tool_call_id) or {}
            request_id = meta.get(META_KEY)
            if request_id is None:  # `requires_approval=True`: the tool itself asks
                verdict = guard.judge(call, thread=thread)
                if verdict.effect != "ask":
                    verdict = verdict.with_effect("ask", "the tool requires approval")
                request = guard.new_request(call, verdict, thread=thread)
                requests.append(request)
                request_id = request.id
            pending.append(
                PendingCall(part.tool_call_id, part.tool_name, call, "ask", request_id=request_id)
            )
        saved = guard.save(
            thread,
            status="paused",
            messages=new,
            pending=pending,
            requests=requests,
            checked=checked,
        )
        return Outcome(
            "paused", thread, saved.id, requests=tuple(p.request_id or "" for p in pending)
        )


def _dumped(messages: list[ModelMessage]) -> tuple[list[dict[str, Any]], bool]:
    """The messages as JSON objects, and whether they are known to hold no lone surrogate:
    pydantic-core's JSON encoder refuses one and runs through the messages in a tenth of
    the time a Python pass takes, so messages it encodes need no other check before they
    are stored; messages it refuses are cleaned by `Guard.save` (see `_storable`)."""
    dumped: list[dict[str, Any]] = ModelMessagesTypeAdapter.dump_python(messages, mode="json")
    try:
        to_json(dumped)
    except PydanticSerializationError:
        return dumped, False
    return dumped, True


__all__ = ["Outcome", "Signoff"]
