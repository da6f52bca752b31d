"""Settling a paused run's asked calls: what each request became, and running the approved
ones exactly once, each judged again first (see `runner.Runner`, which mixes this in).

    approved -> judged again (verdict and targets) -> claim -> run -> finish
             -> changed since the decision: finished as not run, the model is told why
    rejected / skipped / answered / expired -> a synthesized result with the reason
    finished / failed before a crash -> the stored result, never run again
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from contextlib import nullcontext
from dataclasses import replace
from typing import TYPE_CHECKING

from ..exceptions import AlreadyClaimed, ConflictError, IntegrityError, RequestExpired
from ..gate import refusal_content
from ..models import Request, ToolCall, Verdict
from ..rules import Rule
from ..run_state import PendingCall, Run
from ..store import Store
from ..store.base import Claim
from ..targets import (
    TargetChanged,
    Targets,
    call_targets,
    judgement_change,
    pinned,
    portable,
    stored_targets,
    target_change,
    unjudgeable,
)
from . import surely
from .agent import Agent
from .lease import LeaseKeeper
from .nested import child_run_id


class Settling:
    """The settling half of the runner (a mixin: the runner supplies what is declared)."""

    if TYPE_CHECKING:
        store: Store
        agent: Agent
        worker: str
        lease_seconds: float
        _keepers: dict[str, LeaseKeeper]

        def _check_lease(self, run_id: str | None) -> None: ...
        def _dispatch(self, run: Run, judged_here: Mapping[str, Targets] | None = None) -> Run: ...
        def _grants_of(self, run_id: str | None) -> tuple[Rule, ...]: ...
        def _tally(
            self, run: Run, after: tuple[PendingCall, ...], before: tuple[PendingCall, ...]
        ) -> Run: ...
        def _execute(
            self, item: PendingCall, call: ToolCall, *, idempotency_key: str, targets: Targets
        ) -> PendingCall: ...
        def _is_delegate(self, name: str) -> bool: ...
        def _delegate(self, parent: Run, item: PendingCall, call: ToolCall) -> PendingCall: ...

    def _settle(self, run: Run) -> Run:
        run = self._dispatch(run)  # finish what a crash interrupted before the requests
        waiting = {rid: self.store.get_request(rid) for rid in run.waiting_on}
        now = time.time()
        stale = False
        if any(
            r.state == "pending" and r.expires_at is not None and r.expires_at <= now
            for r in waiting.values()
        ):
            stale = bool(self.store.expire_stale(now))  # unanswered in time: never runs
        if any(r.state == "claimed" for r in waiting.values()):
            stale = bool(self.store.sweep_leases()) or stale  # its worker died: in doubt
        settled = []
        for item in run.pending:
            if item.content is not None or item.request_id is None:
                settled.append(item)
                continue
            known = None if stale else waiting.get(item.request_id)
            settled.append(self._settle_one(item, known, run))
        run = self._tally(run, tuple(settled), run.pending)
        doubts = [
            p
            for p in run.pending
            if p.outcome is None
            and p.request_id
            and self.store.get_request(p.request_id).state == "in_doubt"
        ]
        if doubts:
            ids = ", ".join(str(p.request_id) for p in doubts)
            return replace(
                run,
                status="needs_attention",
                note=f"in doubt: {ids} may or may not have run; a person must "
                "resolve it (signoff resolve ID done|failed|retry)",
            )
        return run

    def _settle_one(
        self, item: PendingCall, request: Request | None = None, run: Run | None = None
    ) -> PendingCall:
        assert item.request_id is not None
        request = request or self.store.get_request(item.request_id)
        state = request.state
        if state == "finished" and run is not None and self._is_delegate(item.name):
            # approved and started: the child's answer is the result, not the request's
            return self._delegate(run, item, request.call)
        if state in ("finished", "failed"):
            # It ran before a crash: reuse what it reported, never run it again.
            reported = self.store.get_outcome(request.id) or {}
            content = reported.get("result")
            if content is None:
                content = (
                    f"Tool call {item.name} was marked {state} by a person; its output "
                    "was not recorded"
                )
            return replace(
                item, outcome="ran" if state == "finished" else "failed", content=str(content)
            )
        if state == "pending":
            return item
        if state == "expired":
            return replace(
                item,
                outcome="expired",
                content=f"Tool call {item.name} was not run: the request expired "
                "without a decision",
            )
        if state in ("rejected", "skipped", "answered"):
            decision, verdict = request.decision, request.verdict
            if decision is not None and decision.kind == "edit":
                return replace(
                    item,
                    outcome="denied",
                    content=(
                        f"Tool call {item.name} was not run: the reviewer's edit is denied by "
                        f"policy: {verdict.reason}"
                    ),
                )
            settled, text = refusal_content(item.name, verdict, decision)
            return replace(item, outcome=settled, content=text)
        if state in ("approved", "in_doubt", "claimed"):
            return self._claim_and_run(item, request, run)
        return item

    def _claim_and_run(
        self, item: PendingCall, request: Request, run: Run | None = None
    ) -> PendingCall:
        self._check_lease(request.run_id)  # the run still this worker's: nothing runs else
        try:
            claim = surely.claim(self.store, request.id, self.worker, self.lease_seconds)
        except RequestExpired:
            return replace(
                item,
                outcome="expired",
                content=f"Tool call {item.name} was not run: the approval expired "
                "before it could run",
            )
        except (AlreadyClaimed, ConflictError):
            return item  # in doubt or held elsewhere: reported by _settle
        except IntegrityError as exc:
            return replace(
                item, outcome="denied", content=f"Tool call {item.name} was not run: {exc}"
            )
        keeper = self._keepers.get(request.run_id or "")
        with keeper.holding(request.id, claim.token) if keeper else nullcontext():
            return self._run_claimed(item, claim, run)

    def _run_claimed(self, item: PendingCall, claim: Claim, run: Run | None) -> PendingCall:
        """Run a claimed call and report it; the store's part of it rides out an outage
        (`surely`), so a claim is never left behind by a call that ran or did not."""
        request = claim.request
        # The stored (verified) payload runs, not what the model said: edits included. It
        # is judged again first: the approval covers the call as it was judged and shown.
        call = request.call
        why, targets = surely.through(
            lambda: self._changed_since_decision(request),
            f"judging {request.id} again",
            self.worker,
            self.lease_seconds,
        )
        if why is not None:
            text = (
                f"Tool call {item.name} was not run: it changed after it was approved "
                f"({why}). Nothing was done; call it again if it is still needed, and "
                "it will be judged and shown anew."
            )
            self._report(claim, False, text)
            return replace(item, outcome="denied", content=text)
        if run is not None and self._is_delegate(call.name):
            # the request's part ends when the child starts; the child answers the call
            text = f"delegated to run {child_run_id(run.id, item.call_id)}"
            self._report(claim, True, text)
            return self._delegate(run, item, call)
        done = self._execute(item, call, idempotency_key=request.id, targets=targets)
        self._report(claim, done.outcome == "ran", done.content or "")
        return done

    def _report(self, claim: Claim, ok: bool, text: str) -> None:
        surely.report(
            self.store, claim.request.id, claim.token, ok, text, self.worker, self.lease_seconds
        )

    def _judged_now(self, call: ToolCall, grants: tuple[Rule, ...]) -> tuple[Verdict, Targets]:
        """The verdict on the call as the file system is now, and the targets it judged:
        the policy sees the paths pinned to where they resolve (see targets.pinned), and
        the tool is then held to the same targets."""
        policy = self.agent.policy
        try:
            targets = call_targets(policy, call)
            return policy.evaluate(pinned(policy, call, targets), grants=grants), targets
        except (OSError, TargetChanged) as exc:  # a path flipping while it was resolved
            return unjudgeable(policy, call, exc), {}

    def _changed_since_decision(self, request: Request) -> tuple[str | None, Targets]:
        """Why the decided call may not run now (None: it may), and the targets judged now:
        its verdict now is stricter (or asks for other reasons), or a path it names
        resolves elsewhere than when it was shown."""
        call = request.call
        now, targets = self._judged_now(call, self._grants_of(request.run_id))
        why = [judgement_change(request.verdict, now)]
        before = stored_targets(request.metadata)
        if before is not None:
            workspace = self.agent.policy.workspace
            now_targets = portable(targets, workspace)
            if request.decision is not None and request.decision.kind == "edit":
                # an edit may name other paths (judged when it was made); the ones it
                # kept were shown with the request and must not have moved since
                before = {k: v for k, v in before.items() if k in now_targets}
                now_targets = {k: v for k, v in now_targets.items() if k in before}
            why.append(target_change(before, now_targets, workspace))
        return "; ".join(w for w in why if w) or None, targets


__all__ = ["Settling"]
