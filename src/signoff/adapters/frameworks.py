"""The core every in-process framework adapter shares (Pydantic AI, LangGraph / LangChain,
OpenAI Agents SDK): the framework runs the tools, signoff judges, asks, remembers and
records.

    judge       a framework's call -> `ToolCall` -> the policy's verdict (run and project
                grants count); on the record with the run's next save
    ask         a request whose id is derived from the framework's thread and the call's
                id: a framework that replays a call on resume finds the same request
    settle      a person's decision, read from the store (never from the framework's own
                resume value, which anyone can forge): run the approved payload, run an
                edit only after judging it again (a deny still wins), else the reason or
                the answer is what the model reads
    run_once    an approved call is claimed, run and finished once; a replay gets the
                stored result, a call whose runner died is in doubt (a person resolves it)
    pause       the framework's state (messages, or a serialized run) kept in the store as
                a signoff run, so that any process resumes it

The run of a framework thread is leased to the adapter for good (`signoff worker` leaves it
alone: it cannot rebuild a framework's agent), unless the adapter names a `factory`
(`package.module:attr`, kept in the run's metadata: a name, never code) that rebuilds it:
then a paused run lets its lease go, a worker takes it once every request is decided
(`signoff.runs.framework_runs`), and whoever resumes it takes the lease first (`take`: one
wins). Two processes resuming it at once are also kept apart by the run's version
(compare-and-set), and its calls by their requests' claims.

A LangGraph thread goes on after its run finished (another message, another invoke): its
next run is a new one, named by the finished one (`metadata["next"]`), so that a finished
run stays finished.
"""

from __future__ import annotations

import asyncio
import contextvars
import json
import os
import threading
import time
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from ..exceptions import AlreadyClaimed, ConflictError, InvalidInput, NotFound
from ..gate import default_preview, refusal_content, result_text
from ..models import Request, ToolCall, Verdict, sha256_hex
from ..policy import Policy
from ..rules import Rule, parse_rule
from ..run_state import PendingCall, Run, RunStatus, storable
from ..runs.agent import REF
from ..settings import load_settings
from ..store import Store
from ..tools import ToolSpec, spec_from_function, spec_of
from .finisher import finisher
from .stores import shared_store

if TYPE_CHECKING:
    from ..store.base import Flush

CLAIM_LEASE_S = 300.0  # an approved call's claim, renewed while its tool runs
FOREVER = 100 * 365 * 86400.0  # the adapter's lease: no worker takes it (see `take`)
STOPPED: frozenset[str] = frozenset({"paused", "finished", "failed", "needs_attention"})
FINAL: frozenset[str] = frozenset({"finished", "failed"})  # a run that cannot change

# The idempotency key of the call running now (the request id of an approved call, else
# "<run>:<call id>"): a tool passes it downstream so that a repeated call is recognised.
_KEY: contextvars.ContextVar[str | None] = contextvars.ContextVar("signoff_key", default=None)


def idempotency_key() -> str | None:
    """The key of the tool call running now under a framework adapter, or None."""
    return _KEY.get()


def _same(value: Any) -> Any:
    return value


SettledAs = Literal["run", "refused", "answered", "pending"]


@dataclass(frozen=True, slots=True)
class Settled:
    """What a person's decision means for the framework: run `call` (approved, or edited
    and judged again), or hand `content` to the model (refused, skipped, answered), or
    wait (`pending`)."""

    request: Request
    action: SettledAs
    call: ToolCall | None = None
    content: str | None = None
    value: Any = None  # a person's answer, as they gave it


class Guard:
    """signoff's policy, store and audit for one framework. Cheap to call; build once."""

    def __init__(
        self,
        framework: str,
        *,
        store: Store | str | os.PathLike[str] | None = None,
        workspace: str | os.PathLike[str] = ".",
        policy: Policy | None = None,
        tools: Iterable[Callable[..., Any] | ToolSpec] = (),
        approvers: Sequence[str] = (),
        tenant: str = "default",
        factory: str | None = None,
    ) -> None:
        if factory is not None and not REF.fullmatch(factory):
            raise InvalidInput(
                f"{framework}: factory {factory!r} is not of the form package.module:attr "
                "(a zero-argument function that rebuilds the agent, for `signoff worker`)"
            )
        self.framework = framework
        self.factory = factory
        self.lease_seconds = FOREVER  # the lease `take` asks for (a worker: its own)
        self.holding: str | None = None  # a run a worker leased before it called us
        self._current: dict[str, str] = {}  # by thread: the id of its latest run
        self._shared = store is None or isinstance(store, str | os.PathLike)
        self.store: Store = (  # by path: the process's open store for that file
            shared_store(store, workspace=Path(workspace))
            if store is None or isinstance(store, str | os.PathLike)
            else store
        )
        root = Path(workspace)
        # the store's files are signoff's own state, wherever it lives (store="signoff.db")
        self.policy = (policy or Policy(load_settings(root), workspace=root)).protecting_store(
            self.store
        )
        self.approvers = tuple(approvers)
        self.tenant = tenant
        self.worker = f"signoff.adapters.{framework}"
        self._judged: set[str] = set()  # threads with verdicts since their run's last save
        self._held: dict[str, dict[str, Request]] = {}  # deferred requests, by thread
        self._asked: dict[str, set[str]] = {}  # requests each thread's run waits on
        self._settled: dict[str, Settled] = {}  # decided requests, read once per run
        # by thread: its run as this process's drive last read or saved it (its version is
        # the one the drive's saves must find)
        self._driven: dict[str, Run] = {}
        self._grants: dict[str, tuple[object, tuple[Rule, ...]]] = {}  # by thread: turn
        self._taken: set[str] = set()  # runs this guard leased by `take`, until they stop
        self._lock = threading.Lock()
        for item in tools:
            self.declare(item)

    def use_store(self, store: Store) -> None:
        """Work on `store` from now on (a worker's: where the run and its decisions are);
        the store it had is closed, unless other guards of this process share it (see
        `shared_store`)."""
        own, self.store = self.store, store
        if own is not store and not self._shared:
            own.close()

    # ------------------------------------------------------------------ declarations

    def declare(self, item: Callable[..., Any] | ToolSpec) -> ToolSpec:
        """Tell signoff what a tool is: a `ToolSpec`, or a function (its `@tool` spec,
        else tier `unknown`, which asks)."""
        if isinstance(item, ToolSpec):
            spec = item
        else:
            spec = spec_of(item) or spec_from_function(item, tier="unknown")
        self.policy.registry.add(spec)
        return spec

    def spec(self, name: str, description: str = "", schema: Any = None) -> ToolSpec:
        """The spec of `name`; a tool signoff was never told about is known from the
        framework's metadata (description and JSON schema), with tier `unknown`. `schema`
        may be a function that builds it: called only for such a tool."""
        if not self.policy.registry.known(name):
            if callable(schema):
                schema = schema()
            self.policy.registry.add(
                ToolSpec(
                    name=name,
                    tier="unknown",
                    description=description,
                    schema=schema if isinstance(schema, Mapping) else None,
                )
            )
        return self.policy.registry.get(name)

    # ------------------------------------------------------------------ ids

    def run_id(self, thread: str) -> str:
        """The id of the thread's run (its latest, once this process read it)."""
        current = self._current.get(thread)
        return current or "run_" + sha256_hex(f"{self.framework}/{thread}")[:16]

    def request_id(self, thread: str, call_id: str) -> str:
        return "req_" + sha256_hex(f"{self.framework}/{thread}/{call_id}")[:16]

    # ------------------------------------------------------------------ judging

    def grants(self, thread: str, turn: object = None) -> tuple[Rule, ...]:
        """The run's and the project's grants; read once per model turn when the
        framework says which turn it is (`turn`), as the runner reads them once per turn."""
        if turn is not None:
            cached = self._grants.get(thread)
            if cached is not None and cached[0] == turn:
                return cached[1]
        rules = self._read_grants(thread)
        if turn is not None:
            self._grants[thread] = (turn, rules)
        return rules

    def _read_grants(self, thread: str) -> tuple[Rule, ...]:
        rules = [
            parse_rule(g.rule, source=f"grant:{g.id}")
            for g in self.store.list_grants(run_id=self.run_id(thread))
            if g.scope in ("run", "session")
        ]
        rules += [
            parse_rule(g.rule, source=f"grant:{g.id}")
            for g in self.store.list_grants(scope="project")
        ]
        return tuple(rules)

    def judge(self, call: ToolCall, *, thread: str, turn: object = None) -> Verdict:
        """The verdict on a call, on the record before the call can run."""
        verdict = self.policy.evaluate(call)
        if verdict.effect in ("ask", "notify"):  # grants are allow rules: only these can move
            grants = self.grants(thread, turn)
            if grants:
                verdict = self.policy.evaluate(call, grants=grants)
        # in the store before the call runs (or is refused, or asked), on disk moments
        # later (see Store.record): what a person or exactly-once relies on (the request
        # an ask makes, a decision, a claim) waits for the disk, and flushes this first
        data = {"call": call.to_json(), "verdict": verdict.to_json()}
        self._note(thread, "verdict", data, flush="soon")
        return verdict

    @staticmethod
    def refusal(call: ToolCall, verdict: Verdict) -> str:
        """What the model reads for a denied call: the rule's reason."""
        return refusal_content(call.name, verdict, None)[1]

    def _note(
        self, thread: str, kind: str, data: Mapping[str, Any], *, flush: Flush = "now"
    ) -> None:
        """Record a verdict now, not with the run's next save: the call it judges runs
        right after, and a crash before that save must not lose it (invariant 8). The
        run it names may be made later (the first save); events do not need it to exist."""
        doc = {**data, "framework": self.framework}
        self.store.record(kind, doc, run_id=self.run_id(thread), flush=flush)
        with self._lock:
            self._judged.add(thread)

    # ------------------------------------------------------------------ the run

    def run(self, thread: str) -> Run:
        """The signoff run of a framework thread (its latest), made on first use."""
        run_id = self.run_id(thread)
        segment = 0  # the run's place in its thread (the first is 0; see `finish`)
        for _ in range(10_000):
            try:
                run = self.store.get_run(run_id)
            except NotFound:
                run = self._create(thread, run_id, segment)
            following = run.metadata.get("next")
            if run.status in FINAL and isinstance(following, str):
                run_id = following
                segment = _segment(run) + 1
                continue
            if run.id != self._current.get(thread):
                with self._lock:
                    self._current[thread] = run.id
            return run
        raise ConflictError(f"thread {thread!r}: its runs do not end (run {run_id})")

    def _create(self, thread: str, run_id: str, segment: int) -> Run:
        now = time.time()
        metadata: dict[str, Any] = {"framework": self.framework}
        if segment:
            metadata["segment"] = segment
        if self.factory:
            metadata["factory"] = self.factory
        run = Run(
            id=run_id,
            tenant=self.tenant,
            thread=thread,
            created_at=now,
            updated_at=now,
            metadata=metadata,
        )
        try:
            return self.store.create_run(run, [], worker=self.worker, lease_seconds=FOREVER)
        except ConflictError:  # another process made it first: the same run
            return self.store.get_run(run_id)

    def live(self, thread: str) -> Run | None:
        """The thread's latest run if it exists and has not ended (nothing is made)."""
        run_id: Any = self.run_id(thread)
        while isinstance(run_id, str):
            try:
                run = self.store.get_run(run_id)
            except NotFound:
                return None
            if run.status not in FINAL:
                return run
            run_id = run.metadata.get("next")
        return None

    def judged_since_save(self, thread: str) -> bool:
        """Whether this process judged calls of the thread since its run's last save."""
        with self._lock:
            return thread in self._judged

    def take(self, thread: str) -> Run:
        """Lease the thread's run to this process before resuming it, if a worker may
        resume it too (it names a factory): AlreadyClaimed while another holds it."""
        run = self.run(thread)
        held = run.id == self.holding or run.id in self._taken
        if run.metadata.get("factory") and run.status not in FINAL and not held:
            self.store.claim_run(self.worker, run_id=run.id, lease_seconds=self.lease_seconds)
            with self._lock:
                self._taken.add(run.id)
        return run

    def fail(self, thread: str, error: BaseException) -> Run | None:
        """The thread's agent raised: its run ends `failed`, the error as its note (its
        pending requests stay as they are); the thread's next run, if it goes on, is a
        new one, named here. None if the thread has no run to end."""
        if not self.judged_since_save(thread) and self.live(thread) is None:
            return None
        note = f"the agent raised {type(error).__name__}: {error}"[:2000]
        return self.save(
            thread, status="failed", note=note, metadata={"next": self._next_run(thread)}
        )

    def finish(self, thread: str, *, note: str | None = None) -> Run:
        """The thread's run has finished (the framework's agent stopped without a pause);
        the thread's next run, if it goes on, is a new one, named here."""
        run = self.run(thread)
        if run.status in FINAL:
            return run
        return self.save(
            thread,
            status="finished",
            pending=(),
            note=note,
            metadata={"next": self._next_run(thread, run)},
        )

    def _next_run(self, thread: str, run: Run | None = None) -> str:
        """The id of the run the thread goes on in once its run (`run`, else its latest)
        has ended."""
        run = run if run is not None else self.run(thread)
        return "run_" + sha256_hex(f"{self.framework}/{thread}#{_segment(run) + 1}")[:16]

    def save(
        self,
        thread: str,
        *,
        status: RunStatus | None = None,
        messages: Sequence[Mapping[str, Any]] = (),
        pending: Sequence[PendingCall] | None = None,
        note: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        requests: Sequence[Request] = (),
        checked: bool = False,
    ) -> Run:
        """Save the thread's run: new messages appended and the new requests in the same
        transaction (a replayed request is found, not made twice). `checked`: the messages
        are known to hold no lone surrogate (the framework's JSON encoder refused any), so
        they are stored as they are, not checked again (see `_storable`)."""
        with self._lock:
            self._judged.discard(thread)
            held = self._held.pop(thread, {})
            driven = self._driven.get(thread)
        expected = driven.version if driven is not None else None
        requests = [*requests, *(r for r in held.values() if r.id not in {q.id for q in requests})]
        # A save that moves the run on (messages, status, its calls) must start from the
        # version this process drove from: another process that saved meanwhile wins. A
        # call that asks marks the run paused (`ask`): that merges like its request.
        moves = bool(messages) or status not in (None, "paused") or pending is not None
        if self.factory:
            metadata = {"factory": self.factory, **(metadata or {})}
        # The run as this process last read or saved it, at the version its drive expects:
        # no read before the save. Should another process have saved it since, the save's
        # compare-and-set on the version fails and it is read again (one more attempt).
        cached = driven if driven is not None and driven.status not in FINAL else None
        # Held requests were looked for by `ask` (not found): not looked for again, unless
        # the save finds one made meanwhile (refused as a duplicate: then every one is).
        unchecked = set(held)
        tries = 3 + (cached is not None or bool(unchecked))
        for attempt in range(tries):
            from_cache = cached is not None
            run = cached if cached is not None else self.run(thread)
            cached = None
            if moves and expected is not None and run.version != expected:
                raise ConflictError(
                    f"run {run.id} (thread {thread!r}) was saved by another process while "
                    f"this one drove it (version {run.version}, not {expected}); this "
                    "process's result was not saved"
                )
            new = replace(
                run,
                status=status or run.status,
                pending=tuple(pending) if pending is not None else run.pending,
                note=note if note is not None else run.note,
                metadata={**run.metadata, **(metadata or {})},
            )
            fresh = [  # a request belongs to the thread's run as it is now
                r if r.run_id == run.id else replace(r, run_id=run.id)
                for r in requests
                if r.id in unchecked or not self._exists(r.id)
            ]
            skipped, unchecked = bool(unchecked), set()
            if pending is None and fresh:  # asked outside a pause: the run waits on it too
                new = replace(
                    new,
                    pending=(
                        *run.pending,
                        *(
                            PendingCall(
                                str(r.metadata.get("call_id") or ""),
                                r.call.name,
                                r.call,
                                "ask",
                                request_id=r.id,
                            )
                            for r in fresh
                        ),
                    ),
                )
            # a run a worker may resume lets its lease go when it stops (see `take`)
            stops = new.status in STOPPED and bool(new.metadata.get("factory"))
            try:
                saved = self.store.save_run(
                    new,
                    list(messages) if checked else [_storable(m) for m in messages],
                    expected_version=run.version,
                    requests=[(r, self._idempotent(r), None) for r in fresh],
                    worker=self.worker if stops else None,
                )
            except InvalidInput:
                if skipped:
                    continue  # a held request was made meanwhile: look for each one
                raise
            except ConflictError:
                if from_cache:
                    continue  # saved meanwhile: read again, and the checks above say so
                if moves or attempt == tries - 1:
                    raise
                continue  # only requests: merged onto the run as it is now
            with self._lock:
                if stops:
                    self._taken.discard(saved.id)  # its lease was let go
                self._asked[thread] = {p.request_id for p in saved.pending if p.request_id}
                if expected is not None:
                    self._driven[thread] = saved
            return saved
        raise AssertionError("unreachable")

    def flush(self, thread: str) -> None:
        """Save the thread's run if it judged calls since its last save (their verdicts
        are on the record already: this makes the run they name)."""
        if self.judged_since_save(thread):
            self.save(thread)

    def load_messages(self, thread: str) -> list[dict[str, Any]]:
        return self.store.load_messages(self.run_id(thread))

    # ------------------------------------------------------------------ asking

    def _exists(self, request_id: str) -> bool:
        try:
            self.store.get_request(request_id)
        except NotFound:
            return False
        return True

    def known(self, thread: str, request_id: str) -> bool:
        """Whether signoff asked for this call: its request is held for the thread's next
        save, or is one the thread's run waits on (read once per thread and process, then
        kept up to date by `ask` and `save`): no store read per call."""
        with self._lock:
            if request_id in self._held.get(thread, {}):
                return True
            asked = self._asked.get(thread)
        if asked is None:
            run = self.run(thread)
            asked = {p.request_id for p in run.pending if p.request_id}
            with self._lock:
                asked = self._asked.setdefault(thread, asked)
        return request_id in asked

    def remember(self, thread: str, request_id: str) -> None:
        """Count a stored request among the thread's (a replay found it)."""
        self.known(thread, request_id)  # the thread's own first
        with self._lock:
            self._asked.setdefault(thread, set()).add(request_id)

    def begin(self, thread: str) -> Run:
        """A run starts or resumes in this process: the thread's run as it is now, whose
        version the run's saves must find (else another process drove it meanwhile). A
        decided run a worker may resume too is taken and marked running first (the run
        returned is as it was: paused, with the calls it waits on)."""
        self.forget(thread)
        run = self.run(thread)
        with self._lock:
            self._driven[thread] = run
            # what `known` would read next: the requests the run waits on, as just read
            self._asked[thread] = {p.request_id for p in run.pending if p.request_id}
        if run.status == "paused" and run.metadata.get("factory") and self.decided(run, thread):
            self.resuming(thread)  # a worker may resume it too: one of us does
        return run

    def decided(self, run: Run, thread: str) -> bool:
        """Whether every request the run waits on is decided (or expired)."""
        return all(
            self.settle(p.request_id, thread=thread).action != "pending"
            for p in run.pending
            if p.request_id
        )

    def resuming(self, thread: str, *, pending: Sequence[PendingCall] | None = None) -> Run:
        """The paused thread goes on in this process: its lease taken first when a worker
        may resume it too (AlreadyClaimed: another process resumes it), then marked
        running."""
        self.take(thread)
        return self.save(thread, status="running", pending=pending)

    def forget(self, thread: str) -> None:
        """Read the thread's requests and grants again (a run starts or resumes)."""
        with self._lock:
            self._asked.pop(thread, None)
            self._grants.pop(thread, None)
            self._settled.clear()

    def _idempotent(self, request: Request) -> bool:
        return self.policy.registry.get(request.call.name).idempotent

    def new_request(self, call: ToolCall, verdict: Verdict, *, thread: str) -> Request:
        """The request for an asked call (not stored yet: see `ask` and `save`)."""
        spec = self.policy.registry.get(call.name)
        return Request(
            id=self.request_id(thread, call.id or call.digest()),
            call=call,
            verdict=verdict,
            preview=default_preview(call, spec),
            run_id=self.run_id(thread),
            tenant=self.tenant,
            approvers=self.approvers,
            metadata={"framework": self.framework, "thread": thread, "call_id": call.id},
        )

    def ask(
        self,
        call: ToolCall,
        verdict: Verdict,
        *,
        thread: str,
        defer: bool = False,
        pause: bool = False,
    ) -> Request:
        """Store the request now (with the thread's run; with
        `pause`, the run is marked paused in the same save), or, with `defer`, with the
        thread's next save (the pause: one transaction, not two); a replay of the same
        call finds the request it made before."""
        request = self.new_request(call, verdict, thread=thread)
        try:
            existing = self.store.get_request(request.id)
        except NotFound:
            pass
        else:  # a replay of a call asked before: known from now on
            self.remember(thread, request.id)
            return existing
        if defer:
            with self._lock:
                self._held.setdefault(thread, {})[request.id] = request
            return request
        self.save(thread, requests=[request], status="paused" if pause else None)
        return self.store.get_request(request.id)

    # ------------------------------------------------------------------ settling

    def settle(self, request_id: str, *, thread: str) -> Settled:
        """What the stored decision on a request means now (see `Settled`). A decision is
        final, so once settled a request is not read again in this run (the claim, when
        it runs, is the store's own check)."""
        with self._lock:
            cached = self._settled.get(request_id)
        if cached is not None:
            return cached
        settled = self._settle(request_id, thread)
        if settled.action != "pending":
            with self._lock:
                self._settled[request_id] = settled
        return settled

    def _settle(self, request_id: str, thread: str) -> Settled:
        request = self.store.get_request(request_id)
        decision = request.decision
        state = request.state
        if state == "pending":
            return Settled(request, "pending")
        if state == "expired" or decision is None:
            return Settled(
                request,
                "refused",
                content=f"Tool call {request.call.name} was not run: its request {state} "
                "before anyone decided it",
            )
        if state == "answered":
            return Settled(
                request, "answered", content=result_text(decision.result), value=decision.result
            )
        if state in ("rejected", "skipped"):
            problem = None
            if decision.kind == "edit":
                problem = f"the edited call is denied: {request.verdict.reason}"
            _, content = refusal_content(
                request.call.name, request.verdict, decision, problem=problem
            )
            return Settled(request, "refused", content=content)
        # approved (or claimed / finished / in doubt: run_once tells those apart)
        call = request.call  # the stored payload, with a person's edit if any
        if decision.kind == "edit":
            problem = self.policy.edit_problem(
                call, call.arguments, grants=self.grants(thread)
            )  # judged again here, by this adapter's policy: a deny still wins
            if problem:
                self._note(thread, "verdict", {"call": call.to_json(), "changed": problem})
                return Settled(
                    request,
                    "refused",
                    content=f"Tool call {call.name} was not run: the reviewer's edit was "
                    f"refused: {problem}",
                )
        else:
            # Only a deny matters here, and grants (allow rules) cannot make or unmake one
            # (deny is absolute): judged without reading them.
            verdict = self.policy.evaluate(call)
            if verdict.effect == "deny":  # stricter since the person decided
                self._note(
                    thread,
                    "verdict",
                    {"call": call.to_json(), "verdict": verdict.to_json(), "changed": "denied"},
                )
                return Settled(request, "refused", content=self.refusal(call, verdict))
        return Settled(request, "run", call=call)

    def check_payload(self, settled: Settled, arguments: Mapping[str, Any]) -> str | None:
        """Why the arguments a framework is about to run are not what the person
        decided (None if they are): a resume value cannot smuggle in other arguments."""
        assert settled.call is not None
        asked = settled.call
        if asked.with_arguments(arguments).digest() != asked.digest():
            return (
                f"Tool call {asked.name} was not run: its arguments are not the ones "
                f"the reviewer decided on (request {settled.request.id})"
            )
        return None

    # ------------------------------------------------------------------ running once

    def _claim(self, request: Request) -> tuple[str | None, str | None]:
        """(claim token, None), or (None, what the model reads instead)."""
        try:
            claim = self.store.claim(request.id, worker=self.worker, lease_seconds=CLAIM_LEASE_S)
        except AlreadyClaimed as exc:
            outcome = self.store.get_outcome(request.id)
            if outcome is not None and outcome.get("ok"):
                return None, result_text(outcome.get("result"))  # ran before: its result
            return None, f"Tool call {request.call.name} was not run again: {exc}"
        return claim.token, None

    @contextmanager
    def _renewing(self, request_id: str, token: str) -> Iterator[None]:
        """The claim's lease renewed while the tool runs (a tool may outlast it)."""
        from ..runs.lease import LeaseKeeper

        keeper = LeaseKeeper(self.store, None, self.worker, CLAIM_LEASE_S)
        with keeper, keeper.holding(request_id, token):
            yield

    def _finish(self, request: Request, token: str, ok: bool, result: Any) -> None:
        self.store.finish(request.id, token, ok=ok, result=result)

    def run_once(
        self, request: Request, fn: Callable[[], Any], *, keep: Callable[[Any], Any] = _same
    ) -> tuple[bool, Any]:
        """Run an approved call once: (True, its value), or (False, the stored result or
        why it was not run). The tool's errors are raised (after `finish(ok=False)`).
        `keep` picks what is stored of the value (a framework's message: its text)."""
        token, instead = self._claim(request)
        if token is None:
            return False, instead
        reset = _KEY.set(request.id)
        try:
            with self._renewing(request.id, token):
                value = fn()
        except BaseException as exc:
            self._finish(request, token, False, f"{type(exc).__name__}: {exc}")
            raise
        finally:
            _KEY.reset(reset)
        self._finish(request, token, True, result_text(keep(value)))
        return True, value

    async def arun_once(
        self,
        request: Request,
        fn: Callable[[], Awaitable[Any]],
        *,
        keep: Callable[[Any], Any] = _same,
        later: list[asyncio.Future[None]] | None = None,
    ) -> tuple[bool, Any]:
        """`run_once`, awaiting `fn`. With `later`, a successful call's finish is written
        on the process's finishing thread (`finisher`), off the path to the model's next
        turn, and its future is added to `later`, which the caller awaits before its next
        save or return (until then the call is claimed: a crash leaves it in doubt, never
        run again)."""
        token, instead = self._claim(request)
        if token is None:
            return False, instead
        reset = _KEY.set(request.id)
        try:
            with self._renewing(request.id, token):
                value = await fn()
        except BaseException as exc:
            self._finish(request, token, False, f"{type(exc).__name__}: {exc}")
            raise
        finally:
            _KEY.reset(reset)
        result = result_text(keep(value))
        if later is None:
            self._finish(request, token, True, result)
        else:
            loop = asyncio.get_running_loop()
            finish = loop.run_in_executor(finisher(), self._finish, request, token, True, result)
            later.append(finish)
        return True, value

    def keyed(self, thread: str, call_id: str) -> contextvars.Token[str | None]:
        """Set the idempotency key of an allowed call (reset it with `_KEY.reset`)."""
        return _KEY.set(f"{self.run_id(thread)}:{call_id}")

    @staticmethod
    def unkey(token: contextvars.Token[str | None]) -> None:
        _KEY.reset(token)

    # ------------------------------------------------------------------ helpers

    def pending_requests(self, thread: str) -> list[Request]:
        return [
            self.store.get_request(p.request_id) for p in self.run(thread).pending if p.request_id
        ]


async def await_finishes(later: Sequence[asyncio.Future[None]]) -> None:
    """Wait for the finishes `Guard.arun_once` wrote later: every approved call that ran
    is finished on the record before its run is saved or returns (a failed finish is
    raised, after the others)."""
    for failed in await asyncio.gather(*later, return_exceptions=True):
        if isinstance(failed, BaseException):
            raise failed


def _segment(run: Run) -> int:
    value = run.metadata.get("segment")
    return value if isinstance(value, int) and value > 0 else 0


def _storable(message: Mapping[str, Any]) -> dict[str, Any]:
    """A framework's message as stored (see `storable`): one pass of the C JSON encoder
    shows that a message holds no lone surrogate, which nearly none does; only one that
    does is walked and cleaned (a 200-message transcript: 0.4 ms, not 3)."""
    try:
        json.dumps(message, ensure_ascii=False).encode("utf-8")
    except (UnicodeEncodeError, TypeError, ValueError):
        return dict(storable(dict(message)))
    return dict(message)


def as_arguments(raw: Any, where: str) -> dict[str, Any]:
    """A call's arguments as a JSON object; anything else is refused, naming the call."""
    if isinstance(raw, Mapping):
        return dict(raw)
    if isinstance(raw, str):
        try:
            value = json.loads(raw or "{}")
        except ValueError as exc:
            raise InvalidInput(f"{where}: arguments are not JSON ({exc})") from exc
        if isinstance(value, dict):
            return value
    raise InvalidInput(f"{where}: arguments must be a JSON object, not {type(raw).__name__}")


__all__ = ["Guard", "Settled", "as_arguments", "idempotency_key"]
