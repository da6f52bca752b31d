"""How a pending request is put to a person from inside a call (the pending text, a URL
to the web inbox, a trusted client's form) and what the client is told of a refusal."""

from __future__ import annotations

from typing import Any

import mcp.types as types
from mcp.server import ServerRequestContext
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from ..adapters.core import Adapter, Answer
from ..exceptions import NotFound
from ..models import canonical_json
from .recording import ProxyParts
from .routed import Routed, text_result


def _elicitation(ctx: ServerRequestContext[Any] | None) -> tuple[bool, bool]:
    """Whether the client takes form and URL questions in a tool call's result (the
    2026-07-28 multi-round-trip flow; older sessions get the pending text)."""
    if ctx is None or ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS:
        return False, False
    caps = ctx.session.client_capabilities
    elicit = caps.elicitation if caps is not None else None
    if elicit is None:
        return False, False
    return elicit.form is not None, elicit.url is not None


def _client_name(ctx: ServerRequestContext[Any] | None) -> str:
    """The name the client gives itself (its own word: trust it only by the settings)."""
    params = ctx.session.client_params if ctx is not None else None
    info = params.client_info if params is not None else None
    return info.name if info is not None else ""


def _form_question(adapter: Adapter, rid: str) -> types.ElicitRequest:
    request = adapter.store.get_request(rid)
    return types.ElicitRequest(
        params=types.ElicitRequestFormParams(
            message=f"signoff asks: {request.verdict.reason}\n\n{request.preview}",
            requested_schema={
                "type": "object",
                "properties": {
                    "approve": {"type": "boolean", "title": "Run this call?"},
                    "reason": {"type": "string", "title": "Why (sent to the agent)"},
                },
                "required": ["approve"],
            },
        )
    )


class Asking(ProxyParts):
    """The proxy's ways of asking (`[ask] via`), and its refusals as results."""

    async def _ask(
        self,
        ctx: ServerRequestContext[Any] | None,
        params: types.CallToolRequestParams,
        answer: Answer,
        routed: Routed,
    ) -> types.CallToolResult | types.InputRequiredResult | None:
        """How a pending request is put to a person; None when it was decided meanwhile
        (the caller reads the decision from the store)."""
        rid = answer.request_id or ""
        form, url = _elicitation(ctx)
        via = self.config.via
        client = _client_name(ctx)
        returning = params.request_state == rid  # the client's retry of our own question
        if via == "form" and form and client in self.config.trusted_clients:
            if returning and params.input_responses and "signoff" in params.input_responses:
                self._decide_from_form(rid, client, params.input_responses["signoff"])
                return None
            return types.InputRequiredResult(
                input_requests={"signoff": _form_question(self.adapter, rid)},
                request_state=rid,
            )
        if via == "url" and url and self.config.inbox:
            if returning:  # the person was sent to the page: wait a little for them
                if await self._decided_within(rid, self.config.url_wait):
                    return None
                return self._pending(answer, routed)
            return types.InputRequiredResult(
                input_requests={
                    "signoff": types.ElicitRequest(
                        params=types.ElicitRequestURLParams(
                            message=f"signoff asks a person to decide request {rid}",
                            url=f"{self.config.inbox}/requests/{rid}",
                            elicitation_id=rid,
                        )
                    )
                },
                request_state=rid,
            )
        return self._pending(answer, routed)

    async def _decided_within(self, rid: str, seconds: float) -> bool:
        import anyio

        store = self.adapter_store()
        with anyio.move_on_after(seconds):
            while True:
                if store.get_request(rid).state != "pending":
                    return True
                await anyio.sleep(0.2)
        return False

    def _decide_from_form(self, rid: str, client: str, response: Any) -> None:
        """A trusted client's form answer, as that client's decision on the record."""
        from ..models import Decision

        action = getattr(response, "action", None)
        content = getattr(response, "content", None) or {}
        actor = f"mcp client {client}"
        if action == "accept" and content.get("approve") is True:
            decision = Decision("approve", actor=actor, reason=content.get("reason") or None)
        else:
            reason = content.get("reason") or f"declined in {client} ({action})"
            decision = Decision("reject", actor=actor, reason=str(reason))
        self.adapter_store().decide(rid, decision, actor=actor)

    def _pending(self, answer: Answer, routed: Routed) -> types.CallToolResult:
        return text_result(self._pending_text(answer, answer.reason), error=True)

    def _pending_text(self, answer: Answer, reason: str, then: str = "retry") -> str:
        rid = answer.request_id or ""
        where = (
            f"--db {self.store_url}" if self.store_url else f"--workspace {self.config.workspace}"
        )
        page = f" or at {self.config.inbox}/requests/{rid}" if self.config.inbox else ""
        return (
            f"signoff: this call needs a person's approval and has NOT run. {reason}. "
            f"Approval pending on request {rid}: decide with `signoff approve {rid} {where}` "
            f"(or reject/edit){page}, then {then} exactly the same call."
        )

    def _refused(self, answer: Answer) -> types.CallToolResult:
        if answer.request_id:
            try:
                request = self.adapter.store.get_request(answer.request_id)
            except NotFound:
                request = None
            if request is not None and request.state == "answered":
                result = request.decision.result if request.decision else None
                text = result if isinstance(result, str) else canonical_json(result, where="answer")
                who = request.decision.actor if request.decision else "a person"
                return text_result(
                    f"signoff: {who} answered instead of running it: {text}", error=False
                )
        return text_result(answer.reason, error=True)


__all__ = ["Asking"]
