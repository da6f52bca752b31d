"""What pages and the API do the same way: deciding, revoking, reverting, request JSON."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from .. import approvals, review
from ..accounts import Account
from ..exceptions import InvalidInput, NotAuthorized
from ..models import ALWAYS_SCOPES, Decision, Request
from ..present import requests_json
from ..runs.nested import descendants
from ..store import Event
from .core import Context


def require_decider(ctx: Context, who: Account | None, request: Request) -> Account:
    if who is None:
        raise NotAuthorized("sign in to decide")
    if not who.can_decide:
        raise NotAuthorized(f"{who.name} is a {who.role} and may not decide requests")
    if ctx.forbid_self_approval and request.requested_by and request.requested_by == who.name:
        raise NotAuthorized(
            f"{who.name} requested {request.id} and may not decide it "
            "(settings forbid approving one's own request)"
        )
    return who


def decision_from(doc: Mapping[str, Any]) -> Decision:
    """A Decision from an API body or a form (arguments may be a JSON string)."""
    kind = doc.get("kind")
    arguments = doc.get("arguments")
    if kind == "edit" and isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except ValueError as exc:
            raise InvalidInput(f"the arguments are not valid JSON: {exc}") from exc
        if not isinstance(arguments, dict):
            raise InvalidInput("the arguments must be a JSON object")
    reason = doc.get("reason")
    scope = doc.get("scope") or ("run" if kind == "approve_always" else None)
    if not isinstance(kind, str):
        raise InvalidInput("decision: `kind` is required")
    for name, value in (("reason", reason), ("scope", scope)):
        if value is not None and not isinstance(value, str):
            raise InvalidInput(f"decision: `{name}` must be a string")
    if kind == "approve_always" and scope not in ALWAYS_SCOPES:
        raise InvalidInput("decision: approve_always scope must be run or project")
    return Decision(
        kind,  # type: ignore[arg-type]  # checked by Decision
        reason=reason or None,
        arguments=arguments if kind == "edit" else None,
        result=doc.get("result") if kind == "respond" else None,
        scope=scope,  # type: ignore[arg-type]
    )


def decide(ctx: Context, who: Account | None, request_id: str, decision: Decision) -> Request:
    request = ctx.store.get_request(request_id)
    actor = require_decider(ctx, who, request)
    return approvals.decide(
        ctx.store,
        request_id,
        decision,
        actor=actor.name,
        roles=actor.roles,
        workspace=ctx.workspace,
    )


def api_request(ctx: Context, request: Request) -> dict[str, Any]:
    """The CLI's `--json` shape, plus the decision's next step."""
    return api_requests(ctx, [request])[0]


def api_requests(ctx: Context, requests: list[Request]) -> list[dict[str, Any]]:
    docs = requests_json(requests, ctx.store)
    for request, doc in zip(requests, docs, strict=True):
        doc["what_next"] = next_step(ctx, request)
    return docs


def next_step(ctx: Context, request: Request) -> str | None:
    """The sentence after a decision; a server with a worker resumes the run itself."""
    if not request.decision:
        return None
    if ctx.worker and request.run_id:
        call = approvals.what_next(replace(request, run_id=None))
        return f"{call} This server resumes run {request.run_id} now."
    return approvals.what_next(request)


def deliveries(ctx: Context, request_id: str) -> list[Event]:
    """Notification deliveries recorded for a request (oldest first)."""
    return ctx.store.deliveries(request_id)


def revert(ctx: Context, who: Account | None, seq: int) -> str:
    if who is None or not who.can_decide:
        raise NotAuthorized("only an approver or admin may revert")
    return review.revert(ctx.store, seq, actor=who.name, workspace=ctx.workspace)


@dataclass(frozen=True)
class Filters:
    risk: str = ""
    tool: str = ""
    run: str = ""
    tenant: str = ""
    state: str = "pending"

    def apply(self, ctx: Context, limit: int = 200) -> list[Request]:
        ctx.store.expire_stale()
        state = None if self.state in ("", "all") else self.state
        found = ctx.store.list_requests(
            state=state, run_id=self.run or None, tenant=self.tenant or None, limit=limit
        )
        if self.run:  # a run's requests include those of the runs it started (delegate)
            for child in descendants(ctx.store, self.run):
                found += ctx.store.list_requests(
                    state=state, run_id=child, tenant=self.tenant or None, limit=limit
                )
        found = [
            r
            for r in found
            if (not self.risk or r.verdict.risk == self.risk)
            and (not self.tool or r.call.name == self.tool)
        ]
        return sorted(found, key=lambda r: r.created_at, reverse=True)


__all__ = [
    "Filters",
    "api_request",
    "api_requests",
    "decide",
    "decision_from",
    "deliveries",
    "next_step",
    "revert",
]
