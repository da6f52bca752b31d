"""A call of a tool that changed since it was pinned, or is new since its server's tools
were pinned (see `pins`): its own verdict, its own request, and what becomes of that
request once the change is trusted. A new tool is a change from nothing, the same way.

A changed tool's call asks whatever the rules say (a deny still wins), with a verdict
that says why (rule `tool_changed`), and its request's id is derived from the call *and*
the changed version: once the change is trusted (`signoff mcp trust`, or a person's
approval of one such call, which ran), the same call is a new call, judged by the rules
again, and the requests still pending for the change are closed on the record (a skip,
with the reason), never left waiting in the inbox.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..exceptions import SignoffError
from ..models import Decision, Verdict

if TYPE_CHECKING:
    from ..store import Store

CHANGED_RULE = "tool_changed"  # a pseudo-rule: no rule of the settings has this name
_SCAN = 10_000  # pending requests looked through at a trust (a rare moment)


def changed_verdict(name: str, verdict: Verdict, *, new: bool = False) -> Verdict:
    """What a call of the changed tool `name` (or of a tool `new` since its server's tools
    were pinned) gets instead of `verdict` (unless denied)."""
    if verdict.effect == "deny":
        return verdict
    reason = (
        f"the tool {name} changed since it was pinned (what the client is shown of it: "
        "description, schemas, annotations, title or _meta; the request shows the diff)"
    )
    if new:
        reason = (
            f"the tool {name} is new since its server's tools were pinned (added or "
            "renamed since; nobody has trusted it yet; the request shows all it says)"
        )
    return Verdict("ask", "high", CHANGED_RULE, (reason,), verdict.tier)


def close_changed_requests(store: Store, tool: str, *, actor: str, how: str) -> list[str]:
    """Close the requests still pending for a change of `tool` that is trusted now (`how`
    says by what); returns their ids. One decided meanwhile is left as it was decided."""
    closed: list[str] = []
    for request in store.list_requests(state="pending", limit=_SCAN):
        meta = request.metadata or {}
        if (
            request.call.name != tool
            or request.verdict.rule != CHANGED_RULE
            or meta.get("client") != "mcp"
        ):
            continue
        reason = (
            f"closed, not decided: the change to {tool} was trusted ({how}) before anyone "
            "decided this request; the same call made again is judged by the rules"
        )
        try:
            store.decide(request.id, Decision("skip", actor=actor, reason=reason), actor=actor)
        except SignoffError:  # decided (or expired) meanwhile: that stands
            continue
        closed.append(request.id)
    return closed


__all__ = ["CHANGED_RULE", "changed_verdict", "close_changed_requests"]
