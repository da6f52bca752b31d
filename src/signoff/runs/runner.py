"""The durable run driver: start a run, pause it in the store, resume it anywhere.

See `runs` for the data. Every step that matters is a store transaction: the new messages
and the run document are saved together (compare-and-set on the run's version), requests
go through pending -> approved -> claimed -> finished, and a tool's result is stored with
its `finish` so that a crash before the next save never runs the call again.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import logging
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from ..exceptions import ConflictError, InvalidInput, StoreUnavailable
from ..gate import (
    MAX_CONSECUTIVE_REFUSALS,
    MAX_TOTAL_REFUSALS,
    refusal_content,
    result_text,
)
from ..kinds import REVIEWER_VERDICT
from ..models import Request, ToolCall, Verdict, sha256_hex
from ..review import record_review
from ..reviewer_settings import (
    AUTO_WITHOUT_REVIEWER,
    REVIEWER_RULE,
    policy_reasons,
    still_covered,
)
from ..rules import Rule, parse_rule
from ..run_state import PARENT_RUNS, REFUSALS, PendingCall, Run, RunStatus, storable
from ..store import Store
from ..targets import (
    TARGETS_KEY,
    Targets,
    call_targets,
    expecting,
    portable,
)
from ..tools import BUILTIN_SPECS, canonical_tool_name
from .agent import Agent, guarding_store, parse_tool_calls, tool_message, worker_name
from .lease import LeaseKeeper
from .nested import Nesting, lineage, person_messages
from .settle import Settling

DEFAULT_MAX_TURNS = 100


class Runner(Settling, Nesting):
    """Drives runs of one agent against one store. Cheap to build; holds no run state."""

    def __init__(
        self,
        store: Store,
        agent: Agent,
        *,
        agent_ref: str | None = None,
        worker: str | None = None,
        lease_seconds: float = 300.0,
        max_turns: int = DEFAULT_MAX_TURNS,
    ) -> None:
        self.store = store
        self.agent = guarding_store(agent, store)
        self.agent_ref = agent_ref
        self.worker = worker or worker_name()
        self.lease_seconds = lease_seconds
        self.max_turns = max_turns
        self._keepers: dict[str, LeaseKeeper] = {}  # run id -> its lease, while driven

    # ------------------------------------------------------------------ entry points

    def start(
        self,
        messages: Sequence[Mapping[str, Any]],
        *,
        tenant: str = "default",
        thread: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        run_id: str | None = None,
        parent: tuple[str, str] | None = None,
    ) -> Run:
        """Store a new run and drive it until it pauses or ends. `parent`: (run id, tool
        call id) of the delegate call that starts it, for a child run (see `nested`)."""
        policy = self.agent.policy
        if (
            policy.mode == "auto"
            and policy.settings.reviewer is None
            and self.agent.reviewer is None
        ):
            logging.getLogger("signoff").warning(AUTO_WITHOUT_REVIEWER)  # loud, at start
        now = time.time()
        run = Run(
            id=run_id or f"run_{uuid.uuid4().hex[:12]}",
            tenant=tenant,
            thread=thread,
            agent=self.agent_ref,
            created_at=now,
            updated_at=now,
            metadata=dict(metadata or {}),
            parent_id=parent[0] if parent else None,
            parent_call_id=parent[1] if parent else None,
        )
        run = self.store.create_run(
            run, [dict(m) for m in messages], worker=self.worker, lease_seconds=self.lease_seconds
        )
        return self._drive_leased(run, [dict(m) for m in messages])

    def resume(self, run_id: str) -> Run:
        """Continue a paused run (in any process). Returns it paused again, or done."""
        # claim_run refuses a finished or failed run ("nothing to resume").
        run = self.store.claim_run(self.worker, run_id=run_id, lease_seconds=self.lease_seconds)
        if run is None:
            return self.store.get_run(run_id)
        return self.continue_claimed(run)

    def continue_claimed(self, run: Run) -> Run:
        """Drive a run this worker has leased, then let the lease go."""
        return self._drive_leased(run, None)

    def _drive_leased(self, run: Run, messages: list[dict[str, Any]] | None) -> Run:
        """Drive a run this worker holds, its lease renewed meanwhile (see `lease`), then
        let the lease go. A store outage keeps it instead: if this process lives it takes
        the run again once the store is back (see `worker.work`); if it dies the lease
        lapses and another worker does."""
        keeper = LeaseKeeper(self.store, run.id, self.worker, self.lease_seconds)
        self._keepers[run.id] = keeper
        try:
            with keeper:
                if messages is None:
                    messages = self.store.load_messages(run.id)
                result = self._guarded_drive(run, messages)
        except StoreUnavailable:
            raise
        except BaseException:
            self.store.release_run(run.id, self.worker)
            raise
        finally:
            self._keepers.pop(run.id, None)
        self.store.release_run(run.id, self.worker)
        return result

    def _check_lease(self, run_id: str | None) -> None:
        """LeaseLost if the run being driven was taken by another worker meanwhile."""
        keeper = self._keepers.get(run_id) if run_id is not None else None
        if keeper is not None:
            keeper.check()

    def _guarded_drive(self, run: Run, messages: list[dict[str, Any]]) -> Run:
        """Drive the run; an error the driver did not expect (a model that failed, input
        the store could not keep) leaves the run needing attention with the error as its
        note, never `running` with nobody driving it. The error is raised again."""
        try:
            return self._drive(run, messages)
        except ConflictError:
            raise  # another process saved the run meanwhile (LeaseLost): theirs, not stuck
        except StoreUnavailable:
            raise  # nothing is wrong with the run: it goes on once the store is back
        except Exception as exc:
            with contextlib.suppress(Exception):  # the original error is what matters
                current = self.store.get_run(run.id)
                if current.status == "running":
                    note = storable(
                        f"the driver stopped on an error: {type(exc).__name__}: {exc}; "
                        f"fix the cause, then signoff resume {run.id}"
                    )
                    self._save(replace(current, status="needs_attention", note=note[:2000]), [])
            raise

    # ------------------------------------------------------------------ the loop

    def _drive(self, run: Run, messages: list[dict[str, Any]]) -> Run:
        new: list[dict[str, Any]] = []
        saved = run  # what the store holds now
        # A run that needed attention is judged afresh: whatever stopped it must hold again.
        run = replace(run, status="running", note=None)
        if run.consecutive_refusals >= MAX_CONSECUTIVE_REFUSALS and not run.pending:
            run = replace(run, consecutive_refusals=0)  # a person resumed it: a new streak
        for _ in range(self.max_turns):
            if run.pending:
                run = self._settle(run)
                if run.status == "needs_attention" or run.waiting_on or run.waiting_for:
                    run = replace(
                        run,
                        status="needs_attention" if run.status == "needs_attention" else "paused",
                    )
                    if not new and run == saved:
                        return run  # nothing was decided since the last save: no write
                    return self._save(run, new)
                results = [tool_message(p.call_id, p.content or "") for p in run.pending]
                messages += results
                new += results
                run = replace(run, pending=())
                if self._over_limit(run):
                    return self._save(self._needs_attention(run), new)
            self._check_lease(run.id)
            reply = self.agent.model.complete(
                messages, self.agent.tool_specs, on_text=self.agent.on_text
            )
            reply = {k: v for k, v in reply.items() if v is not None}
            pending = parse_tool_calls(reply)  # the model's own text: bad calls are refused
            reply = storable(reply)  # what is kept: invalid Unicode replaced, never run
            messages.append(reply)
            new.append(reply)
            if not pending:
                return self._save(replace(run, status="finished", note=reply.get("content")), new)
            run, verdicts, judged = self._judge(replace(run, pending=tuple(pending)), messages)
            # The turn is saved before anything runs. A turn that only asks is saved as
            # paused, its requests in the same transaction. Otherwise the allowed calls run
            # first, in order, each judged again after the one before it ran and saved as it
            # finishes (after a crash only the call in flight can run again); the requests
            # are stored after them, judged and previewed on the files they will meet.
            to_run = any(p.effect in ("allow", "notify") and p.content is None for p in run.pending)
            status: RunStatus = "paused" if run.waiting_on and not to_run else "running"
            requests = (
                []
                if to_run
                else [
                    self._new_request(run, p, judged.get(p.call_id))
                    for p in run.pending
                    if p.effect == "ask" and p.verdict is not None
                ]
            )
            run = replace(
                run,
                status=status,
                pending=tuple(
                    replace(p, verdict=None) if p.effect == "ask" and not to_run else p
                    for p in run.pending
                ),
            )
            run = saved = self._save(run, new, events=verdicts, requests=requests)
            new = []
            run = self._dispatch(run, judged_here=judged)
            if status == "paused":
                return run  # its requests were stored just now: nothing to settle yet
        return self._save(
            replace(
                run, status="needs_attention", note=f"stopped after {self.max_turns} model turns"
            ),
            new,
        )

    def _save(
        self,
        run: Run,
        new: list[dict[str, Any]],
        events: Sequence[tuple[str, Mapping[str, Any]]] = (),
        requests: Sequence[tuple[Request, bool, float | None]] = (),
    ) -> Run:
        return self.store.save_run(
            replace(run, updated_at=time.time()),
            new,
            expected_version=run.version,
            events=events,
            worker=self.worker,
            requests=requests,
        )

    # ------------------------------------------------------------------ judging a turn

    def _grants(self, run: Run) -> tuple[Rule, ...]:
        return self._grants_of(run.id)

    def _grants_of(self, run_id: str | None) -> tuple[Rule, ...]:
        rules = []
        for grant in self.store.list_grants(run_id=run_id) if run_id else ():
            if grant.scope in ("run", "session"):
                rules.append(parse_rule(grant.rule, source=f"grant:{grant.id}"))
        for grant in self.store.list_grants(scope="project"):
            rules.append(parse_rule(grant.rule, source=f"grant:{grant.id}"))
        return tuple(rules)

    def _judge(
        self, run: Run, messages: Sequence[Mapping[str, Any]] = ()
    ) -> tuple[Run, list[tuple[str, Mapping[str, Any]]], dict[str, Targets]]:
        """Verdicts for the turn's calls (denials settled at once), and the targets each was
        judged on, by call id. In auto mode with a reviewer, an ask goes to the reviewer
        model first (it sees `messages` as `reviewer_input` allows: no tool results)."""
        grants = self._grants(run)
        judged: list[PendingCall] = []
        events: list[tuple[str, Mapping[str, Any]]] = []
        targets: dict[str, Targets] = {}
        for item in run.pending:
            if item.call is None or item.content is not None:
                judged.append(item)
                continue
            if item.name not in self.agent.tools:
                judged.append(
                    replace(
                        item,
                        effect="deny",
                        outcome="invalid",
                        content=f"Tool call {item.name} was not run: no such tool",
                    )
                )
                continue
            verdict, targets[item.call_id] = self._judged_now(item.call, grants)
            request_id = "req_" + sha256_hex(f"{run.id}/{item.call_id}")[:16]
            if verdict.effect == "ask" and self.agent.policy.for_reviewer(item.call, verdict):
                verdict, said = self._review(run, item.call, verdict, messages)
                events.append((REVIEWER_VERDICT, {**said, "request_id": request_id}))
            events.append(("verdict", {"call": item.call.to_json(), "verdict": verdict.to_json()}))
            if verdict.effect == "deny":
                _, content = refusal_content(item.name, verdict, None)
                judged.append(replace(item, effect="deny", outcome="denied", content=content))
            elif verdict.effect == "ask":
                judged.append(replace(item, effect="ask", request_id=request_id, verdict=verdict))
            elif verdict.rule == REVIEWER_RULE:  # kept: judged again, the same ask stays covered
                judged.append(replace(item, effect=verdict.effect, verdict=verdict))
            else:
                judged.append(replace(item, effect=verdict.effect))
        fresh = tuple(replace(p, content=None) for p in run.pending)  # all new this turn
        return self._tally(run, tuple(judged), fresh), events, targets

    def _review(
        self, run: Run, call: ToolCall, verdict: Verdict, messages: Sequence[Mapping[str, Any]]
    ) -> tuple[Verdict, dict[str, Any]]:
        from ..reviewer import Reviewer, review_call  # only when a reviewer is configured

        if self.agent.reviewer is None:
            settings = self.agent.policy.settings.reviewer
            assert settings is not None  # for_reviewer said so
            self.agent.reviewer = Reviewer(settings)
        spec = self.agent.policy.registry.get(call.name)
        preview = self.agent.previewer(call, spec)
        return review_call(
            self.agent.policy,
            self.agent.reviewer,
            messages,
            call,
            verdict,
            preview,
            person_messages=person_messages(self.store, run),  # a delegated run: not its task
        )

    def _dispatch(self, run: Run, judged_here: Mapping[str, Targets] | None = None) -> Run:
        """Run the turn's allowed calls in call order, then store its asked calls' requests.

        A call is judged again right before it runs when a call before it ran (it may have
        made the link this one would write through) or when the run was read back from the
        store; stricter now means it asks (or is refused) instead. Each result is saved as
        the call finishes. An asked call is judged again before its request is stored.
        `judged_here`: the targets of the calls judged just now (by call id)."""
        judged_here = judged_here or {}
        grants: tuple[Rule, ...] | None = None
        ran = False
        for index, item in enumerate(run.pending):
            if item.effect not in ("allow", "notify") or item.content is not None:
                continue
            assert item.call is not None
            if item.child_run is not None or self._started_child(run, item):
                # delegated already (a crash may have kept the parent from noting it): never
                # judged again, the child's answer or still waiting; no second child
                run = self._replaced(run, index, self._delegate(run, item, item.call))
                continue
            grants = self._grants(run) if grants is None else grants
            events: list[tuple[str, Mapping[str, Any]]] = []
            if ran or item.call_id not in judged_here:
                item, events, targets = self._rejudge(run, item, grants)
            else:
                targets = judged_here[item.call_id]
            if item.effect in ("allow", "notify"):
                self._check_lease(run.id)
                item = self._run_allowed(run, item, targets)
                ran = True
            run = self._replaced(run, index, item)
            if events or not self._read_only(item):
                # saved as it finished: after a crash only the call in flight runs again
                # (a read-only tool's result waits for the next save: repeating it is free)
                run = self._save(run, [], events=events)
        for index, item in enumerate(run.pending):
            if item.effect == "ask" and item.verdict is not None and item.call is not None:
                shown = judged_here.get(item.call_id)
                if ran or shown is None:
                    grants = self._grants(run) if grants is None else grants
                    item, shown = self._refresh_ask(item, grants)
                if item.content is None:
                    self._request(run, item, shown)
                    item = replace(item, verdict=None)
                run = self._replaced(run, index, item)
        return run

    def _read_only(self, item: PendingCall) -> bool:
        return item.effect in ("allow", "notify") and (
            self.agent.policy.registry.get(item.name).tier == "read"
        )

    def _replaced(self, run: Run, index: int, item: PendingCall) -> Run:
        pending = (*run.pending[:index], item, *run.pending[index + 1 :])
        return self._tally(run, pending, run.pending)

    def _rejudge(
        self, run: Run, item: PendingCall, grants: tuple[Rule, ...]
    ) -> tuple[PendingCall, list[tuple[str, Mapping[str, Any]]], Targets]:
        """An allowed call judged again as the file system is now (on the record if its
        verdict changed), and the targets it was judged on."""
        assert item.call is not None
        verdict, targets = self._judged_now(item.call, grants)
        if still_covered(item.verdict, verdict):  # the reviewer model allowed this very ask
            verdict = item.verdict or verdict
        if verdict.effect in ("allow", "notify"):
            return replace(item, effect=verdict.effect), [], targets
        event = (
            "verdict",
            {
                "call": item.call.to_json(),
                "verdict": verdict.to_json(),
                "changed": f"judged {item.effect} with its turn, "
                f"{verdict.effect} when about to run",
            },
        )
        if verdict.effect == "deny":
            _, content = refusal_content(item.name, verdict, None)
            return replace(item, effect="deny", outcome="denied", content=content), [event], targets
        request_id = "req_" + sha256_hex(f"{run.id}/{item.call_id}")[:16]
        asked = replace(item, effect="ask", request_id=request_id, verdict=verdict)
        return asked, [event], targets

    def _refresh_ask(
        self, item: PendingCall, grants: tuple[Rule, ...]
    ) -> tuple[PendingCall, Targets]:
        """An asked call judged again after the calls before it ran: a deny refuses it, an
        ask asks for its reasons now; a looser verdict still asks (it was judged so)."""
        assert item.call is not None
        verdict, targets = self._judged_now(item.call, grants)
        if verdict.effect == "deny":
            _, content = refusal_content(item.name, verdict, None)
            return replace(
                item,
                effect="deny",
                outcome="denied",
                content=content,
                verdict=None,
                request_id=None,
            ), targets
        if item.verdict is not None and policy_reasons(item.verdict) == verdict.reasons:
            verdict = replace(verdict, reasons=item.verdict.reasons)  # the reviewer's note
        return (replace(item, verdict=verdict) if verdict.effect == "ask" else item), targets

    def _request(self, run: Run, item: PendingCall, targets: Targets | None = None) -> Request:
        """Store the request of an asked call (after its turn's allowed calls ran, or a
        crash interrupted its turn)."""
        request, idempotent, ttl = self._new_request(run, item, targets)
        try:
            return self.store.create_request(request, idempotent=idempotent, ttl_seconds=ttl)
        except InvalidInput:
            # The id is derived from the run and the call: it exists if a crashed driver, or
            # a worker that took the paused run meanwhile, stored it first. Same request.
            return self.store.get_request(request.id)  # NotFound: a real error

    def _new_request(
        self, run: Run, item: PendingCall, targets: Targets | None = None
    ) -> tuple[Request, bool, float | None]:
        call, verdict = item.call, item.verdict
        assert call is not None and verdict is not None and item.request_id is not None
        spec = self.agent.policy.registry.get(call.name)
        ttl = self.agent.policy.settings.tool_expiry.get(call.name)
        request = Request(
            id=item.request_id,
            call=call,
            verdict=verdict,
            preview=self.agent.previewer(call, spec),
            run_id=run.id,
            tenant=run.tenant,
            approvers=self.agent.approvers,
            metadata={
                **_request_metadata(item.intent, spec.always_ask),
                # what its paths resolve to as the person sees it: checked when it runs
                TARGETS_KEY: portable(
                    call_targets(self.agent.policy, call) if targets is None else targets,
                    self.agent.policy.workspace,
                ),
                # a child run's request is shown under the runs above it
                **({PARENT_RUNS: lineage(self.store, run)[1:]} if run.parent_id else {}),
            },
        )
        return request, spec.idempotent, ttl

    def _run_allowed(self, run: Run, item: PendingCall, targets: Targets) -> PendingCall:
        assert item.call is not None
        if self._is_delegate(item.name):
            return self._delegate(run, item, item.call)
        key = f"{run.id}:{item.call_id}"
        # the workspace records what its own file tools change; other tools simply run
        recorded = canonical_tool_name(item.call.name) in BUILTIN_SPECS
        if item.effect == "notify" and recorded and self.agent.run_recorded is not None:
            try:
                with expecting(targets):
                    value, snapshot = self.agent.run_recorded(item.call, key)
            except Exception as exc:
                return replace(item, outcome="failed", content=f"Tool {item.name} failed: {exc}")
            if snapshot is not None:
                record_review(self.store, item.call, snapshot, run_id=run.id)
            return replace(item, outcome="ran", content=result_text(value))
        return self._execute(item, item.call, idempotency_key=key, targets=targets)

    def _execute(
        self, item: PendingCall, call: ToolCall, *, idempotency_key: str, targets: Targets
    ) -> PendingCall:
        fn = self.agent.tools[call.name]
        kwargs = dict(call.arguments)
        if _accepts(fn, "idempotency_key"):
            kwargs["idempotency_key"] = idempotency_key
        try:
            with expecting(targets):
                value = fn(**kwargs)
        except Exception as exc:
            return replace(item, outcome="failed", content=f"Tool {call.name} failed: {exc}")
        return replace(item, outcome="ran", content=result_text(value))

    # ------------------------------------------------------------------ limits

    def _tally(
        self, run: Run, after: tuple[PendingCall, ...], before: tuple[PendingCall, ...]
    ) -> Run:
        """The run with `after` as its calls, counting refusals settled in this step."""
        consecutive, total = run.consecutive_refusals, run.total_refusals
        for old, new in zip(before, after, strict=True):
            if old.content is not None or new.content is None:
                continue  # already counted, or not settled yet
            if new.outcome in REFUSALS:
                consecutive, total = consecutive + 1, total + 1
            elif new.outcome in ("ran", "answered"):
                consecutive = 0
        return replace(run, pending=after, consecutive_refusals=consecutive, total_refusals=total)

    def _over_limit(self, run: Run) -> bool:
        return (
            run.consecutive_refusals >= MAX_CONSECUTIVE_REFUSALS
            or run.total_refusals >= MAX_TOTAL_REFUSALS
        )

    def _needs_attention(self, run: Run) -> Run:
        return replace(
            run,
            status="needs_attention",
            note=f"stopped after {run.consecutive_refusals} refusals in a row "
            f"({run.total_refusals} in all): a person needs to look at this run",
        )


def _request_metadata(intent: str | None, asks_human: bool) -> dict[str, Any]:
    """What a person deciding elsewhere needs besides the call: the agent's stated intent,
    and whether the tool's result is the person's answer (the web shows an answer form)."""
    metadata: dict[str, Any] = {"asks_human": asks_human}
    if intent:
        metadata["intent"] = intent
    return metadata


@functools.lru_cache(maxsize=512)
def _accepts(fn: Any, name: str) -> bool:
    """Whether `fn` takes the keyword `name` (signatures are read once per tool)."""
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False
    return name in params or any(p.kind is p.VAR_KEYWORD for p in params.values())


__all__ = ["Runner"]
