"""Nested runs: an agent used as a tool of another agent.

The `delegate` tool starts a child run of an agent named in its registry (name ->
`package.module:factory`, the form runs already store to rebuild their agent)::

    parent turn: delegate(agent="researcher", task="...")   judged like any other call
        allowed, or approved -> the child run starts: its id derived from the parent run
            and the call, its agent built by the factory, the task its first message
        the child finishes -> its final answer is the call's result, exactly once
        the child pauses (a question deep inside) -> the parent pauses, waiting for it
    resuming the parent resumes the child first (and the child its own child); a worker
    takes the deepest ready run: a parent is not ready while a child is unfinished

Starting a child is idempotent by construction: the child's id is a digest of the parent
run and the call id, so a driver that crashed before, during or after starting it finds
the same child again and never starts a second one. The child's answer is read from the
child's stored document, so it reaches the parent once however often that is repeated.
"""

from __future__ import annotations

import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Self

from ..exceptions import AlreadyClaimed, ConfigurationError, ConflictError, NotFound
from ..models import ToolCall, sha256_hex
from ..run_state import PendingCall, Run
from ..store import Store
from ..tools import ToolSpec, spec_from_function
from .agent import REF, Agent, load_agent

FINAL = ("finished", "failed")
MAX_DEPTH = 8  # runs in a chain, the outermost included: an agent that delegates to itself ends
_NAME = re.compile(r"[A-Za-z0-9_.-]{1,64}")


def child_run_id(parent_id: str, call_id: str) -> str:
    """The id of the child run a parent's delegate call starts: the same in every process."""
    return "run_" + sha256_hex(f"delegate/{parent_id}/{call_id}")[:12]


def _delegate_signature(agent: str, task: str) -> str:
    """Hand a task to another agent and get its final answer."""
    raise NotImplementedError  # only its signature is read: the runner runs the delegation


@dataclass(frozen=True)
class Delegate:
    """The `delegate` tool: which agents it may start, by name.

    `agents` maps a name the model uses to the import string of a factory that builds
    that agent (`package.module:factory`, called with the child run's metadata, which is
    the parent's). Put it in the parent agent's tools under `name`, its `spec()` in the
    parent's policy registry and `function()` in its tool specs."""

    agents: Mapping[str, str]
    name: str = "delegate"
    description: str = "Hand a task to another agent; its final answer is the result."
    _spec: ToolSpec = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not self.agents:
            raise ConfigurationError("Delegate: name at least one agent it may start")
        for name, ref in self.agents.items():
            if not isinstance(name, str) or not _NAME.fullmatch(name):
                raise ConfigurationError(
                    f"Delegate: agent name {name!r} must be 1 to 64 letters, digits, '_.-'"
                )
            if not isinstance(ref, str) or not REF.fullmatch(ref):
                raise ConfigurationError(
                    f"Delegate: agent {name!r}: {ref!r} is not of the form package.module:factory"
                )
        spec = spec_from_function(
            _delegate_signature,
            name=self.name,
            tier="read",  # the child's own calls are judged one by one, as they come
            kind="other",
            description=self.description,
            subject_args=("agent",),
            idempotent=True,  # the child's id is derived: starting it twice finds it again
        )
        object.__setattr__(self, "_spec", spec)

    def spec(self) -> ToolSpec:
        """What the policy knows of the tool: tier read (allowed unless a rule says more)."""
        return self._spec

    def function(self) -> dict[str, Any]:
        """The tool as a chat-completions function, its agents listed by name."""
        names = sorted(self.agents)
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": {
                    "type": "object",
                    "properties": {
                        "agent": {"type": "string", "enum": names},
                        "task": {"type": "string", "description": "what the agent is to do"},
                    },
                    "required": ["agent", "task"],
                    "additionalProperties": False,
                },
            },
        }

    def __call__(self, agent: str, task: str) -> str:
        raise ConfigurationError(
            f"{self.name} starts a child run: it runs only inside a durable run (Runner)"
        )


class Nesting:
    """The delegating half of the runner (a mixin: the runner supplies what is declared)."""

    if TYPE_CHECKING:
        store: Store
        agent: Agent
        worker: str
        lease_seconds: float
        max_turns: int

        def __init__(
            self,
            store: Store,
            agent: Agent,
            *,
            agent_ref: str | None = None,
            worker: str | None = None,
            lease_seconds: float = 300.0,
            max_turns: int = 100,
        ) -> None: ...
        def start(
            self,
            messages: Sequence[Mapping[str, Any]],
            *,
            tenant: str = "default",
            thread: str | None = None,
            metadata: Mapping[str, Any] | None = None,
            run_id: str | None = None,
            parent: tuple[str, str] | None = None,
        ) -> Run: ...
        def resume(self, run_id: str) -> Run: ...

    def _is_delegate(self, name: str) -> bool:
        return isinstance(self.agent.tools.get(name), Delegate)

    def _started_child(self, parent: Run, item: PendingCall) -> bool:
        """Whether this delegate call's child run exists (it was started before a crash)."""
        if not self._is_delegate(item.name):
            return False
        try:
            self.store.get_run(child_run_id(parent.id, item.call_id))
        except NotFound:
            return False
        return True

    def _delegate(self, parent: Run, item: PendingCall, call: ToolCall) -> PendingCall:
        """The delegate call settled by its child's answer, or still waiting for it (its
        content None, `child_run` set). Starts the child unless it exists, else drives it
        as far as it goes now. `call` is what was approved (an edit included)."""
        child_id = child_run_id(parent.id, item.call_id)
        item = replace(item, child_run=child_id)
        try:
            child = self.store.get_run(child_id)
        except NotFound:
            return self._start_child(parent, item, call)
        return self._follow(item, child)

    def _start_child(self, parent: Run, item: PendingCall, call: ToolCall) -> PendingCall:
        tool = self.agent.tools[call.name]
        assert isinstance(tool, Delegate) and item.child_run is not None
        name, task = call.arguments.get("agent"), call.arguments.get("task")
        ref = tool.agents.get(name) if isinstance(name, str) else None
        why = None
        if ref is None:
            known = ", ".join(sorted(tool.agents))
            why = f"no agent named {name!r} (the agents it may start: {known})"
        elif not isinstance(task, str) or not task.strip():
            why = "the task is empty"
        elif len(lineage(self.store, parent)) >= MAX_DEPTH:
            why = f"runs nest at most {MAX_DEPTH} deep, and run {parent.id} is that deep"
        if why is not None or ref is None:
            return replace(
                item,
                child_run=None,
                outcome="invalid",
                content=f"Tool call {call.name} was not run: {why}",
            )
        stub = Run(
            id=item.child_run,
            tenant=parent.tenant,
            agent=ref,
            metadata=dict(parent.metadata),
            parent_id=parent.id,
            parent_call_id=item.call_id,
        )
        try:
            agent = load_agent(ref, stub)
        except ConfigurationError as exc:
            return replace(
                item, child_run=None, outcome="failed", content=f"Tool {call.name} failed: {exc}"
            )
        runner = type(self)(
            self.store,
            agent,
            agent_ref=ref,
            worker=self.worker,
            lease_seconds=self.lease_seconds,
            max_turns=self.max_turns,
        )
        try:
            child = runner.start(
                [{"role": "user", "content": task}],
                tenant=parent.tenant,
                metadata=parent.metadata,
                run_id=item.child_run,
                parent=(parent.id, item.call_id),
            )
        except ConflictError:  # another process started (or saved) it meanwhile: read it
            child = self.store.get_run(item.child_run)
        return self._answered(item, child)

    def _follow(self, item: PendingCall, child: Run) -> PendingCall:
        """A started child's answer; it is driven first unless nothing can move it now."""
        if child.status not in FINAL and not self._stuck(child):
            try:
                resumed = self._child_runner(child).resume(child.id)
            except (AlreadyClaimed, ConflictError):  # another worker drives it right now
                resumed = self.store.get_run(child.id)
            child = resumed
        return self._answered(item, child)

    def _child_runner(self, child: Run) -> Self:
        if not child.agent:
            raise ConflictError(f"child run {child.id} records no agent to rebuild")
        return type(self)(
            self.store,
            load_agent(child.agent, child),
            agent_ref=child.agent,
            worker=self.worker,
            lease_seconds=self.lease_seconds,
            max_turns=self.max_turns,
        )

    def _answered(self, item: PendingCall, child: Run) -> PendingCall:
        if child.status == "finished":
            answer = child.note if child.note is not None else "(it finished without an answer)"
            return replace(item, outcome="ran", content=answer)
        if child.status == "failed":
            return replace(
                item,
                outcome="failed",
                content=f"Delegated run {child.id} failed: {child.note or 'no reason recorded'}",
            )
        return item  # paused, or needing a person: the parent waits for it

    def _stuck(self, run: Run) -> bool:
        """Nothing can move the run now: it is paused, and every request it waits on is
        undecided (and not yet expired) and every child it waits for is stuck too."""
        if run.status != "paused" or not (run.waiting_on or run.waiting_for):
            return False
        now = time.time()
        for request_id in run.waiting_on:
            request = self.store.get_request(request_id)
            if request.state != "pending" or (
                request.expires_at is not None and request.expires_at <= now
            ):
                return False
        for child_id in run.waiting_for:
            child = self.store.get_run(child_id)
            if child.status in FINAL or not self._stuck(child):
                return False
        return True


def lineage(store: Store, run: Run, *, limit: int = 32) -> list[str]:
    """The run's id and its ancestors' ids, innermost first (a cycle or a missing parent
    ends the walk)."""
    ids = [run.id]
    parent = run.parent_id
    while parent is not None and parent not in ids and len(ids) < limit:
        ids.append(parent)
        try:
            parent = store.get_run(parent).parent_id
        except NotFound:
            break
    return ids


def person_messages(store: Store, run: Run) -> list[str] | None:
    """The person's messages, from the outermost run above `run`; None when `run` is not a
    child (its own user messages are the person's). A child's user message is the task the
    agent above it wrote: never the person's words. An outermost run that cannot be found
    gives none."""
    if run.parent_id is None:
        return None
    outermost = lineage(store, run)[-1]
    try:
        if outermost == run.id or store.get_run(outermost).parent_id is not None:
            return []  # a cycle or a missing parent: whose words they are is unknown
        messages = store.load_messages(outermost)
    except NotFound:
        return []
    texts = []
    for message in messages:
        content = message.get("content") if message.get("role") == "user" else None
        if isinstance(content, list):  # content parts: only the text ones
            content = "\n".join(
                str(p.get("text")) for p in content if isinstance(p, Mapping) and p.get("text")
            )
        if isinstance(content, str) and content:
            texts.append(content)
    return texts


def descendants(store: Store, run_id: str, *, limit: int = 1000) -> list[str]:
    """The ids of the runs started under `run_id`, at any depth, parents before children."""
    out: list[str] = []
    queue = [run_id]
    while queue and len(out) < limit:
        for child in store.child_runs(queue.pop(0)):
            if child.id not in out and child.id != run_id:
                out.append(child.id)
                queue.append(child.id)
    return out


__all__ = [
    "MAX_DEPTH",
    "Delegate",
    "Nesting",
    "child_run_id",
    "descendants",
    "lineage",
    "person_messages",
]
