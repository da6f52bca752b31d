"""Deciding a stored request: the one path every surface (CLI, web, API) goes through.

An edit is validated against the tool's schema and judged again by the policy before it
is stored (a deny still wins: the request is then rejected, never run). "Approve always"
also saves its grant: for the run (in the store) or for the project (an allow rule in
`.signoff/settings.local.toml`, and in the store so that every process sees it).
"""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from .exceptions import ConfigurationError, InvalidInput, NotFound
from .models import Decision, Grant, Request
from .policy import Policy
from .runs.agent import load_agent
from .settings import add_local_allow_rule, load_settings, remove_local_allow_rule
from .store import Store


def policy_for(store: Store, request: Request, workspace: str | os.PathLike[str] | None) -> Policy:
    """The policy that judged the request: its run's agent's, else the workspace's."""
    if request.run_id:
        try:
            run = store.get_run(request.run_id)
        except NotFound:  # a request made outside a run: fall back to the workspace
            run = None
        if run is not None and run.agent:
            try:
                return load_agent(run.agent, run).policy
            except ConfigurationError:
                pass
    root = Path(workspace or os.getcwd())
    return Policy(load_settings(root), workspace=root)


QUESTION_TOOL = "ask_human"  # the human *is* the tool: it is answered, never run
_NOT_FOR_QUESTIONS = ("approve", "approve_always", "edit")


def decide(
    store: Store,
    request_id: str,
    decision: Decision,
    *,
    actor: str,
    roles: Sequence[str] = (),
    workspace: str | os.PathLike[str] | None = None,
    policy: Policy | None = None,
) -> Request:
    """Validate, re-judge (for edits), store the decision, and save any grant it makes."""
    decision = replace(decision, actor=actor, decided_at=decision.decided_at or time.time())
    if decision.kind in _NOT_FOR_QUESTIONS:
        request = store.get_request(request_id)
        if request.call.name == QUESTION_TOOL:
            raise InvalidInput(
                f"request {request_id} is a question: it takes an answer (a respond "
                f"decision), not {decision.kind}"
            )
    if decision.kind not in ("edit", "approve_always"):  # the store checks everything else
        return store.decide(request_id, decision, actor=actor, actor_roles=tuple(roles))
    request = store.get_request(request_id)
    new_verdict = None
    if decision.kind == "edit":
        policy = policy or policy_for(store, request, workspace)
        edited = policy.validated_edit(request.call, decision.arguments or {})  # or refuse
        where = request.metadata.get("cwd")  # a coding agent's call runs where it was made
        new_verdict = policy.evaluate(edited, cwd=where if isinstance(where, str) else None)
        decision = replace(decision, arguments=dict(edited.arguments))
    if decision.kind == "approve_always":
        rule = decision.rule or request.verdict.suggested_rule
        if not rule:
            raise InvalidInput(
                f"request {request_id}: there is no narrow rule to remember for this call "
                "(it crossed a boundary or could not be named); approve it once instead"
            )
        decision = replace(decision, rule=rule)
    decided = store.decide(
        request_id, decision, actor=actor, actor_roles=tuple(roles), new_verdict=new_verdict
    )
    if decision.kind == "approve_always" and decision.rule:
        _save_grant(store, decided, decision, workspace)
    return decided


def _save_grant(
    store: Store, request: Request, decision: Decision, workspace: str | os.PathLike[str] | None
) -> Grant:
    scope = decision.scope or "run"
    assert decision.rule is not None
    if scope == "project":
        add_local_allow_rule(Path(workspace or os.getcwd()), decision.rule)
    grant = Grant(
        rule=decision.rule,
        scope=scope,
        id=f"grant_{uuid.uuid4().hex[:10]}",
        created_by=decision.actor,
    )
    return store.add_grant(grant, run_id=request.run_id if scope in ("run", "session") else None)


def grant_project_rule(
    store: Store, rule: str, *, actor: str, workspace: str | os.PathLike[str] | None = None
) -> tuple[Grant, Path]:
    """Allow `rule` for the whole project: written to settings.local.toml (comments kept)
    and recorded as a project grant, so it is listed, on the record and revocable."""
    from .rules import parse_rule

    text = parse_rule(rule).text  # InvalidInput names what is wrong
    written = add_local_allow_rule(Path(workspace or os.getcwd()), text)
    grant = Grant(rule=text, scope="project", id=f"grant_{uuid.uuid4().hex[:10]}", created_by=actor)
    return store.add_grant(grant), written


def revoke_grant(
    store: Store, grant_id: str, *, actor: str, workspace: str | os.PathLike[str] | None = None
) -> Grant:
    """Revoke a grant; a project grant's allow rule also leaves settings.local.toml."""
    grant = store.revoke_grant(grant_id, actor=actor)
    if grant.scope == "project":
        remove_local_allow_rule(Path(workspace or os.getcwd()), grant.rule)
    return grant


def what_next(request: Request, *, flags: str = "") -> str:
    """One sentence a person reads after deciding. `flags` are the options that name the
    store (`--db`, `--workspace`), so the printed commands work pasted anywhere."""
    run = request.run_id
    if request.state == "approved":
        action = "it will run"
    elif request.state == "rejected" and request.decision and request.decision.kind == "edit":
        action = "the edited call is denied by policy, so it will not run; the model is told why"
    elif request.state == "answered":
        action = "your answer becomes the tool's result"
    else:
        action = "the model is told, with your reason"
    if run:
        return (
            f"When run {run} resumes, {action}: `signoff resume {run}{flags}`, "
            f"or a running `signoff worker{flags}` picks it up."
        )
    return f"{action[0].upper()}{action[1:]}."


__all__ = ["decide", "policy_for", "revoke_grant", "what_next"]
