"""signoff inside LangGraph / LangChain v1: an agent middleware that judges every tool call.

    so = SignoffMiddleware(store="sqlite:///.signoff/signoff.db", tools=[send_email])
    agent = create_agent(model, tools=[send_email], middleware=[so], checkpointer=saver)
    cfg = {"configurable": {"thread_id": "ticket-42"}}
    agent.invoke({"messages": [...]}, cfg)        # paused: its interrupts carry request ids
    # people decide in `signoff inbox`, the web or the CLI; then, in any process:
    resume_decided(agent, so, thread_id="ticket-42")
    # or let `signoff worker` do it: SignoffMiddleware(..., factory="app.graphs:build"),
    # `build()` returning (the compiled graph, its SignoffMiddleware)

`wrap_tool_call`: allow / notify run; deny returns the rule's reason as an error tool
message (the tool never runs); ask stores a signoff request (id from the thread and the
tool-call id) and calls `interrupt()` with it. On resume LangGraph runs the tool node
again from the top: the request is found, not made twice, and the decision is read from
signoff's store, never from the resume value (a forged or early `Command(resume=...)`
decides nothing: the node interrupts again). An approved call is claimed, run and
finished once; an edit is judged again first (a deny still wins).

The thread's signoff run says where it is: paused while an interrupt waits on a request,
running once resumed, finished when the agent stops (the thread's next message starts the
next run).

People who keep LangChain's own `HumanInTheLoopMiddleware` get signoff as its `when`
predicate (`hitl_middleware`): the verdict is frozen per call in signoff's store (the
predicate runs again on resume and must not change its answer), and an inner signoff
middleware refuses denied calls and judges the reviewer's edits again.
"""

from __future__ import annotations

import inspect
import logging
import os
from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import Any, Literal, cast

from langchain.agents.middleware import AgentMiddleware, HumanInTheLoopMiddleware
from langchain.agents.middleware.human_in_the_loop import InterruptOnConfig
from langchain_core.messages import ToolCall as LCToolCall
from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool
from langgraph.config import get_config
from langgraph.errors import GraphBubbleUp
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.types import Command, interrupt

from ..exceptions import AlreadyClaimed, ConfigurationError
from ..models import ToolCall
from ..policy import Policy
from ..store import Store
from ..tools import ToolSpec
from .frameworks import Guard, Settled, as_arguments

Handler = Callable[[ToolCallRequest], ToolMessage | Command[Any]]
AsyncHandler = Callable[[ToolCallRequest], Awaitable[ToolMessage | Command[Any]]]
Mode = Literal["full", "deny_only"]
log = logging.getLogger(__name__)
FROZEN = "asked_calls"  # run metadata: the calls the `when` predicate sent to a reviewer


def thread_of(request: ToolCallRequest) -> str:
    """The LangGraph thread of a tool call (a checkpointer and a thread_id are needed:
    without them nothing survives a pause)."""
    config = getattr(request.runtime, "config", None) or {}
    thread = (config.get("configurable") or {}).get("thread_id")
    if not thread:
        raise ConfigurationError(
            f"tool call {request.tool_call['name']}: signoff needs a thread "
            '(invoke with config={"configurable": {"thread_id": ...}} and a checkpointer)'
        )
    return str(thread)


def _call(request: ToolCallRequest) -> ToolCall:
    raw = request.tool_call
    return ToolCall(raw["name"], as_arguments(raw["args"], raw["name"]), raw.get("id") or "")


def _message(request: ToolCallRequest, content: Any, *, error: bool) -> ToolMessage:
    return ToolMessage(
        content=content if isinstance(content, str) else str(content),
        tool_call_id=request.tool_call.get("id") or "",
        name=request.tool_call["name"],
        status="error" if error else "success",
    )


def _content(result: ToolMessage | Command[Any]) -> Any:
    """What is kept as a finished call's result: the tool message's text."""
    return result.content if isinstance(result, ToolMessage) else repr(result)


class SignoffMiddleware(AgentMiddleware[Any, Any]):
    """Judge, ask (interrupt), settle from the store, run once."""

    def __init__(
        self,
        *,
        store: Store | str | os.PathLike[str] | None = None,
        workspace: str | os.PathLike[str] = ".",
        policy: Policy | None = None,
        tools: Iterable[Callable[..., Any] | ToolSpec | BaseTool] = (),
        approvers: Sequence[str] = (),
        guard: Guard | None = None,
        mode: Mode = "full",
        factory: str | None = None,
    ) -> None:
        """`factory`: `package.module:attr` of a zero-argument function returning
        (the compiled graph, this middleware as it builds it again), so that
        `signoff worker` resumes the thread's runs once they are decided."""
        super().__init__()
        declared = [t for t in tools if not isinstance(t, BaseTool)]
        self.guard = guard or Guard(
            "langgraph",
            store=store,
            workspace=workspace,
            policy=policy,
            tools=declared,
            approvers=approvers,
            factory=factory,
        )
        for item in tools:
            if isinstance(item, BaseTool):
                self.guard.spec(item.name, item.description, _schema(item))
        self.mode = mode

    @property
    def name(self) -> str:
        return "SignoffMiddleware"

    def resume(self, agent: Any, *, thread: str) -> Any | None:
        """`resume_decided(agent, self, thread_id=thread)`: what `signoff worker` calls,
        as it calls the other adapters' `resume`."""
        return resume_decided(agent, self, thread_id=thread)

    # ------------------------------------------------------------------ the hook

    def _prepare(
        self, request: ToolCallRequest
    ) -> tuple[str, ToolCall, ToolMessage | None, str | None]:
        """(thread, call, a message to return instead of running, a request to wait on)."""
        thread = thread_of(request)
        call = _call(request)
        guard = self.guard
        tool = request.tool
        if tool is not None:  # its schema is built only if signoff does not know the tool
            guard.spec(tool.name, tool.description, lambda: _schema(tool))
        request_id = guard.request_id(thread, call.id)
        if self.mode == "full" and guard.known(thread, request_id):  # a replay: same request
            return thread, call, None, request_id
        verdict = guard.judge(call, thread=thread, turn=_turn(request))
        if verdict.effect == "deny":
            return thread, call, _message(request, guard.refusal(call, verdict), error=True), None
        if verdict.effect == "ask" and self.mode == "full":
            return thread, call, None, guard.ask(call, verdict, thread=thread, pause=True).id
        return thread, call, None, None

    def _wait(self, request: ToolCallRequest, thread: str, request_id: str) -> Settled:
        """Interrupt until the request is decided in the store (a resume value decides
        nothing: an early or forged resume interrupts again)."""
        while True:
            settled = self.guard.settle(request_id, thread=thread)
            if settled.action != "pending":
                return settled
            interrupt(
                {
                    "type": "tool_approval",
                    "signoff_request": request_id,
                    "tool_call_id": request.tool_call.get("id"),
                    "name": request.tool_call["name"],
                    "args": request.tool_call["args"],
                    "description": settled.request.preview,
                }
            )

    def _hold(self, thread: str) -> None:
        """A decided call goes on only in the process that holds the thread's run: a
        resume that did not go through `resume_decided` (`graph.invoke(Command(resume=
        ...))`) takes it here, and AlreadyClaimed stops it while `signoff worker` holds it
        (the worker resumes it; its calls run there)."""
        run = self.guard.run(thread)
        if run.status == "paused":
            self.guard.resuming(thread, pending=())
        elif run.status == "running":
            self.guard.take(thread)  # held here already (resume_decided): nothing is read

    def _failed(self, error: BaseException) -> None:
        """The agent raised (not an interrupt, which pauses it): the thread's run ends
        `failed` with the error on the record, then the error goes on up. A run another
        process holds is left to it."""
        if isinstance(error, GraphBubbleUp | AlreadyClaimed) or self.mode != "full":
            return
        try:
            thread = (get_config().get("configurable") or {}).get("thread_id")
        except RuntimeError:
            return
        if thread:
            try:
                self.guard.fail(str(thread), error)
            except Exception:  # the agent's error is the one to raise, not this one
                log.warning("run of thread %r: not marked failed", thread, exc_info=True)

    def _decided(
        self, request: ToolCallRequest, settled: Settled
    ) -> tuple[ToolCallRequest | None, ToolMessage | None]:
        if settled.action in ("refused", "answered"):
            error = settled.action == "refused"
            return None, _message(request, settled.content, error=error)
        assert settled.call is not None  # the stored payload, with a person's edit if any
        edited = dict(request.tool_call)
        edited["args"] = dict(settled.call.arguments)
        return request.override(tool_call=cast(LCToolCall, edited)), None

    def wrap_tool_call(
        self, request: ToolCallRequest, handler: Handler
    ) -> ToolMessage | Command[Any]:
        try:
            return self._tool_call(request, handler)
        except BaseException as exc:
            self._failed(exc)
            raise

    def _tool_call(self, request: ToolCallRequest, handler: Handler) -> ToolMessage | Command[Any]:
        thread, call, instead, request_id = self._prepare(request)
        if instead is not None:
            return instead
        guard = self.guard
        if request_id is None:
            token = guard.keyed(thread, call.id)
            try:
                return handler(request)
            finally:
                guard.unkey(token)
        settled = self._wait(request, thread, request_id)
        self._hold(thread)
        to_run, message = self._decided(request, settled)
        if to_run is None:
            assert message is not None
            return message
        ran, value = guard.run_once(settled.request, lambda: handler(to_run), keep=_content)
        return value if ran else _message(request, value, error=False)

    async def awrap_tool_call(
        self, request: ToolCallRequest, handler: AsyncHandler
    ) -> ToolMessage | Command[Any]:
        try:
            return await self._atool_call(request, handler)
        except BaseException as exc:
            self._failed(exc)
            raise

    async def _atool_call(
        self, request: ToolCallRequest, handler: AsyncHandler
    ) -> ToolMessage | Command[Any]:
        thread, call, instead, request_id = self._prepare(request)
        if instead is not None:
            return instead
        guard = self.guard
        if request_id is None:
            token = guard.keyed(thread, call.id)
            try:
                return await handler(request)
            finally:
                guard.unkey(token)
        settled = self._wait(request, thread, request_id)
        self._hold(thread)
        to_run, message = self._decided(request, settled)
        if to_run is None:
            assert message is not None
            return message
        ran, value = await guard.arun_once(settled.request, lambda: handler(to_run), keep=_content)
        return value if ran else _message(request, value, error=False)

    def after_agent(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        """The agent stopped (not paused): its run has finished, with its verdicts on the
        record. A thread signoff never judged a call of gets no run."""
        try:
            config = get_config()
        except RuntimeError:  # outside a graph run: nothing to flush
            return None
        thread = (config.get("configurable") or {}).get("thread_id")
        if not thread or self.mode != "full":
            if thread:
                self.guard.flush(str(thread))
            return None
        thread = str(thread)
        if not self.guard.judged_since_save(thread) and self.guard.live(thread) is None:
            return None
        self.guard.finish(thread, note=_last_text(state))
        return None

    # ------------------------------------------------------------------ LangChain's HITL

    def when(self, request: ToolCallRequest) -> bool:
        """`HumanInTheLoopMiddleware`'s predicate: True iff signoff asks. The answer is
        frozen per call in the store (asked on the first run, asked again on resume)."""
        thread = thread_of(request)
        call = _call(request)
        run = self.guard.run(thread)
        if call.id in (run.metadata.get(FROZEN) or ()):
            return True
        verdict = self.guard.judge(call, thread=thread)
        if verdict.effect != "ask":
            return False  # allow runs; deny is refused by the inner signoff middleware
        asked = [*(run.metadata.get(FROZEN) or ()), call.id]
        self.guard.save(thread, metadata={FROZEN: asked})
        return True


# LangChain runs every middleware's wrap_tool_call inside a LangSmith span, which reads the
# method's signature at every call, tracing on or off (~80 µs a call here, a tenth of the
# adapter's cost per call); a signature kept on the function is read back at once.
for _hook in (SignoffMiddleware.wrap_tool_call, SignoffMiddleware.awrap_tool_call):
    setattr(_hook, "__signature__", inspect.signature(_hook))  # noqa: B010


def _last_text(state: Any) -> str | None:
    """The agent's last message's text (the run's note when it finishes)."""
    messages = state.get("messages") if isinstance(state, dict) else None
    if not messages:
        return None
    content = getattr(messages[-1], "content", None)
    return content[:2000] if isinstance(content, str) else None


def _turn(request: ToolCallRequest) -> object:
    """Which model turn a call belongs to: the number of messages before it."""
    state = request.state
    messages = state.get("messages") if isinstance(state, dict) else None
    return len(messages) if isinstance(messages, list) else None


def _schema(tool: BaseTool) -> Any:
    try:
        return tool.tool_call_schema.model_json_schema()  # type: ignore[union-attr]
    except Exception:  # a tool without a pydantic schema: declared by name only
        return None


def hitl_middleware(
    tools: Iterable[BaseTool],
    *,
    allowed_decisions: Sequence[Literal["approve", "edit", "reject", "respond"]] = (
        "approve",
        "edit",
        "reject",
    ),
    **options: Any,
) -> list[AgentMiddleware[Any, Any]]:
    """LangChain's `HumanInTheLoopMiddleware` with signoff deciding when to interrupt
    (every tool listed: `interrupt_on` has no catch-all), and inside it a signoff
    middleware that refuses denied calls and judges edited ones again."""
    tools = list(tools)
    inner = SignoffMiddleware(tools=tools, mode="deny_only", **options)
    interrupt_on: dict[str, bool | InterruptOnConfig] = {
        t.name: InterruptOnConfig(allowed_decisions=list(allowed_decisions), when=inner.when)
        for t in tools
    }
    outer = HumanInTheLoopMiddleware(interrupt_on=interrupt_on, interrupt_mode="per_call")
    return [outer, inner]


def resume_decided(
    agent: Any,
    middleware: SignoffMiddleware,
    *,
    thread_id: str,
    config: dict[str, Any] | None = None,
    **options: Any,
) -> Any | None:
    """Resume a paused thread once every signoff request it waits on is decided (in any
    process); None while any is pending. The resume values only name the requests:
    the decisions are read from the store by the middleware. `config`: more of the
    run's config (a recursion limit...); its thread is `thread_id`."""
    config = {**(config or {})}
    config["configurable"] = {**(config.get("configurable") or {}), "thread_id": thread_id}
    state = agent.get_state(config)
    guard = middleware.guard
    guard.forget(thread_id)  # decisions made meanwhile count
    answers: dict[str, Any] = {}
    for item in state.interrupts:
        value = item.value if isinstance(item.value, dict) else {}
        request_id = value.get("signoff_request")
        if request_id is None:
            continue
        if guard.settle(request_id, thread=thread_id).action == "pending":
            return None
        answers[item.id] = {"signoff_request": request_id}
    if not answers:
        return None
    if guard.run(thread_id).status == "paused":
        guard.resuming(thread_id, pending=())  # one process resumes it: the lease's holder
    try:
        return agent.invoke(Command(resume=answers), config, **options)
    except Exception as exc:  # the model failed, say (a tool's error is caught where it ran)
        if not isinstance(exc, AlreadyClaimed) and guard.run(thread_id).status == "running":
            guard.fail(thread_id, exc)
        raise


__all__ = ["SignoffMiddleware", "hitl_middleware", "resume_decided", "thread_of"]
