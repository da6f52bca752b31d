"""`signoff mcp proxy`: one MCP server in front of several, every `tools/call` judged.

    client --tools/list-->  proxy  --tools/list--> each upstream (names become server__tool)
    client --tools/call-->  proxy  --verdict (the adapter core, recorded)-->
        allow/notify  -> the upstream runs it; its outcome on the record
        deny          -> an error result with signoff's reason; the upstream never hears of it
        ask           -> a durable request, id derived from (principal, tool, arguments);
                         the client gets "pending: decide with `signoff approve ID`, then
                         retry the same call". The retry finds the request: approved -> the
                         proxy claims it and runs it once; edited -> the person's arguments,
                         judged again; rejected/skipped/answered/expired -> that, as text.

The request for a call is found again by its id, so a retry never asks twice; once the
approved call has run, the same call later is a new call (the id's generation moves on).
A call claimed but never finished (the proxy died mid-call) stays claimed and then in
doubt: a retry is refused, never run a second time.

This module imports the `mcp` package (the `mcp` extra); nothing else in signoff does.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import sys
from collections.abc import Mapping
from contextlib import AsyncExitStack
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import mcp.types as types
from mcp import Client as McpClient
from mcp import StdioServerParameters
from mcp.server import Server, ServerRequestContext
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from ..adapters.core import Adapter, Answer, HookCall, HookOptions, request_id
from ..adapters.core import Client as AdapterClient
from ..audit.outcomes import Writer
from ..exceptions import NotFound
from ..kinds import (
    MCP_TOOL_CHANGED,
    MCP_TOOL_PINNED,
    REVIEW,
    SESSION_OUTCOME,
    VERDICT,
    WRITER_ENDED,
)
from ..models import ToolCall, Verdict, canonical_json
from ..store import Draft
from ..tools import ToolSpec
from .changes import changed_verdict, close_changed_requests
from .config import SEPARATOR, ProxyConfig, Upstream
from .declare import Hints, declare
from .pins import Pins, Seen
from .recorder import LINGER, RecordBroken, Recorder
from .resources import SPECS
from .stdio import upstream_transport

if TYPE_CHECKING:
    from ..adapters.core import HookEvent
    from ..store import Store

CLIENT = "mcp"


@dataclass(frozen=True, slots=True)
class Routed:
    """A tool the client sees: which upstream has it, under which name there."""

    upstream: str
    original: str
    tool: types.Tool  # as the client sees it (namespaced name)
    spec: ToolSpec
    seen: Seen
    changed: str | None = None  # the diff from the pinned tool: calls ask


def _text_result(text: str, *, error: bool) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=error)


def _preview(routed: Mapping[str, Routed]) -> Any:
    def preview(call: ToolCall, workspace: str) -> str:
        r = routed.get(call.name)
        about = f"{r.upstream} MCP server, tool {r.original}" if r else "an MCP tool"
        if call.name in SPECS:
            about = f"{call.arguments.get('server')} MCP server: {SPECS[call.name].description}"
        words = f"\n{r.tool.description}" if r and r.tool.description else ""
        args = canonical_json(dict(call.arguments), where="arguments")
        changed = (
            f"\nTHIS TOOL CHANGED since it was pinned; approving runs the changed tool "
            f"and pins it:\n{r.changed}"
            if r and r.changed
            else ""
        )
        return f"{call.name} ({about}){words}\narguments: {args}{changed}"

    return preview


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


def client_config_paths(workspace: str, home: str) -> tuple[str, ...]:
    """The files that decide whether a client goes through the proxy: out of reach."""
    return (
        os.path.join(workspace, ".mcp.json"),
        os.path.join(workspace, ".cursor", "mcp.json"),
        os.path.join(home, ".cursor", "mcp.json"),
        os.path.join(home, ".claude.json"),
        os.path.join(home, ".config", "Claude", "claude_desktop_config.json"),
        os.path.join(
            home, "Library", "Application Support", "Claude", "claude_desktop_config.json"
        ),
    )


def _changed_files(routed: Mapping[str, Routed]) -> Any:
    def changed(call: ToolCall) -> tuple[str, ...]:
        r = routed.get(call.name)
        if r is None or r.spec.kind != "file_write":
            return ()
        found: list[str] = []
        for key in r.spec.path_arguments():
            value = call.arguments.get(key)
            if isinstance(value, str):
                found.append(value)
            elif isinstance(value, list):
                found.extend(v for v in value if isinstance(v, str))
        return tuple(found)

    return changed


class _Adapter(Adapter):
    """The adapter core, with the proxy's ways of writing the record (see `recorder`):
    an allowed call's outcome is held and committed with the next verdict
    (`holding_outcomes`); with `[record] allowed = "beside"`, an allowed call's verdict
    too is written by the recorder, beside the call. Every other record is written
    before anything happens. An allowed call's verdict names this process
    (`outcome_by`): should its outcome never come, the call shows as in doubt once the
    process is gone (`audit.outcomes`)."""

    def __init__(
        self, recorder: Recorder, beside: bool, writer: str, *args: Any, **kwargs: Any
    ) -> None:
        super().__init__(*args, **kwargs)
        self.recorder = recorder
        self.beside = beside
        self.writer = writer
        self.holding_outcomes = False  # set around `post` of a call with no request
        self.held_first = False  # what it held was the first held since the last write

    def _record(self, hc: HookCall, kind: str, data: Mapping[str, Any], **extra: Any) -> None:
        verdict = data.get("verdict")
        effect = verdict.get("effect") if isinstance(verdict, Mapping) else None
        if kind == VERDICT and effect in ("allow", "notify") and hc.event == "pre":
            data = {**data, "outcome_by": self.writer}  # its outcome comes later, from us
        if self.beside and kind == VERDICT and effect in ("allow", "notify"):
            self.recorder.submit(lambda: Adapter._record(self, hc, kind, data, **extra))
        elif self.holding_outcomes and kind in (SESSION_OUTCOME, REVIEW):
            if self.recorder.later(self._draft(hc, kind, data, **extra)):
                self.held_first = True
        elif kind == VERDICT:
            self._with_held(self._draft(hc, kind, data, **extra))
        else:
            super()._record(hc, kind, data, **extra)

    def _draft(self, hc: HookCall, kind: str, data: Mapping[str, Any], **extra: Any) -> Draft:
        return Draft(
            kind, extra.get("request_id"), hc.run_id, extra.get("actor"), self._event(hc, data)
        )

    def _with_held(self, draft: Draft) -> None:
        """This verdict and the outcomes held before it, in one commit."""
        held = self.recorder.take()
        try:
            self.store.record_many([*held, draft])
        except BaseException:
            self.recorder.give_back(held)  # the writer tries them again (or stops the proxy)
            raise

    def refuse(self, hc: HookCall, verdict: Verdict) -> None:
        """A call refused before the policy saw it, on the record as a deny."""
        call = hc.call().to_json()
        data = {"call": call, "verdict": verdict.to_json(), "event": hc.event, "ask": "defer"}
        self._with_held(self._draft(hc, VERDICT, data))


def _properties(routed: Routed) -> list[str]:
    props = routed.tool.input_schema.get("properties")
    return sorted(props) if isinstance(props, Mapping) else []


def _unknown_arguments(schema: Mapping[str, Any], arguments: Mapping[str, Any]) -> list[str]:
    """Arguments the schema does not name (a schema naming none takes none; one that
    allows any makes the tool ask instead, see `declare`)."""
    if schema.get("additionalProperties"):
        return []
    props = schema.get("properties")
    named = props if isinstance(props, Mapping) else {}
    return sorted(k for k in arguments if k not in named)


class Proxy:
    """The upstream connections, their tools as signoff declarations, and the gate."""

    def __init__(self, config: ProxyConfig, *, store_url: str | None = None) -> None:
        self.config = config
        self.store_url = store_url
        self.upstreams: dict[str, McpClient] = {}
        self.routed: dict[str, Routed] = {}
        self._stack = AsyncExitStack()
        self._adapter: _Adapter | None = None
        self._store: Store | None = None
        self.pins = Pins(config.workspace)
        self.recorder = Recorder(lambda drafts: self.adapter_store().record_many(drafts))
        self._told: set[tuple[str, str]] = set()  # changes already on the record
        # who writes allowed calls' outcomes, and their call ids (unique across proxies)
        self.writer = Writer.this_process().token
        self._call_prefix = os.urandom(4).hex()
        self._call_numbers = itertools.count(1)

    # ------------------------------------------------------------------ upstreams

    async def _client_for(self, up: Upstream) -> McpClient:
        if up.url is not None:
            if not up.headers:
                return McpClient(up.url)
            from mcp.client.streamable_http import streamable_http_client
            from mcp.shared._httpx_utils import create_mcp_http_client

            http = await self._stack.enter_async_context(
                create_mcp_http_client(headers=dict(up.headers))
            )
            return McpClient(streamable_http_client(up.url, http_client=http))
        assert up.command is not None
        params = StdioServerParameters(
            command=up.command,
            args=list(up.args),
            env={**os.environ, **up.env} if up.env else None,
            cwd=up.cwd or self.config.workspace,
        )
        return McpClient(upstream_transport(params))

    async def __aenter__(self) -> Proxy:
        for name, up in self.config.servers.items():
            client = await self._client_for(up)
            self.upstreams[name] = await self._stack.enter_async_context(client)
        await self.refresh()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._stack.aclose()
        self.recorder.close()  # what is waiting is written before the store closes
        if self.recorder.broken is not None:
            sys.stderr.write(
                f"signoff mcp proxy: the record is incomplete: {self.recorder.broken}\n"
            )
        if self._adapter is not None:  # it judged: calls left without outcome are in doubt
            try:
                self.adapter_store().record(WRITER_ENDED, {"writer": self.writer, "client": CLIENT})
            except Exception as exc:  # its process ending says the same, on this machine
                sys.stderr.write(f"signoff mcp proxy: could not record its end: {exc}\n")
        if self._store is not None:
            self._store.close()

    async def refresh(self) -> None:
        """List every upstream's tools, check them against their pins, declare them."""
        routed: dict[str, Routed] = {}
        for server, client in self.upstreams.items():
            cursor: str | None = None
            while True:
                page = await client.list_tools(cursor=cursor, cache_mode="refresh")
                for tool in page.tools:
                    name = f"{server}{SEPARATOR}{tool.name}"
                    spec = declare(
                        name,
                        tool.description or "",
                        tool.input_schema,
                        Hints.of(tool.annotations),
                        self.config.tools.get(name),
                        trusted=self.config.servers[server].trusted,
                    )
                    shown = tool.model_copy(update={"name": name})
                    seen = Seen(
                        name,
                        tool.description or "",
                        tool.input_schema,
                        tool.annotations.model_dump(mode="json", by_alias=True, exclude_none=True)
                        if tool.annotations is not None
                        else None,
                    )
                    changed = self._check_pin(server, seen)
                    if changed is not None:  # whatever would allow it, a person decides
                        spec = replace(spec, always_ask=True)
                    routed[name] = Routed(server, tool.name, shown, spec, seen, changed)
                cursor = page.next_cursor
                if not cursor:
                    break
        if routed == self.routed and self._adapter is not None:
            return  # nothing changed: the policy and its compiled rules are kept
        self.routed = routed
        self._build_adapter()

    def _check_pin(self, server: str, seen: Seen) -> str | None:
        new = not self.pins.known(seen.name)
        changed = self.pins.check(seen)
        if new or (changed is not None and (seen.name, seen.pin) not in self._told):
            self._told.add((seen.name, seen.pin))
            store = self.adapter_store()
            kind = MCP_TOOL_PINNED if changed is None else MCP_TOOL_CHANGED
            data = {"tool": seen.name, "server": server, "pin": seen.pin}
            store.record(kind, {**data, **({"diff": changed} if changed else {})})
        return changed

    def adapter_store(self) -> Store:
        if self._store is None:
            from ..store import open_store

            self._store = open_store(self.store_url, workspace=self.config.workspace)
        return self._store

    def _build_adapter(self) -> None:
        routed = self.routed
        if self._adapter is not None:
            self._adapter.close()
        self._adapter = _Adapter(
            self.recorder,
            self.config.record_allowed == "beside",
            self.writer,
            AdapterClient(
                name=CLIENT,
                specs={**SPECS, **{name: r.spec for name, r in routed.items()}},
                preview=_preview(routed),
                protected=lambda ws, home: client_config_paths(ws, home),
                changed_files=_changed_files(routed),
                answer_input=lambda call, answer: None,
            ),
            self.config.workspace,
            options=HookOptions(ask="defer", defer_expiry=self.config.expiry),
            store=self.adapter_store(),
        )

    @property
    def adapter(self) -> _Adapter:
        if self._adapter is None:
            raise RuntimeError("the proxy is not started")
        return self._adapter

    # ------------------------------------------------------------------ handlers

    async def list_tools(
        self, ctx: ServerRequestContext[Any] | None, params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        await self.refresh()  # an upstream may have changed its tools since: re-checked
        return types.ListToolsResult(tools=[r.tool for r in self.routed.values()])

    def _hook_call(self, name: str, arguments: Mapping[str, Any], call_id: str) -> HookCall:
        return HookCall(
            client=CLIENT,
            event="pre",
            session_id=self.config.principal,
            call_id=call_id,
            tool=name,
            arguments=arguments,
            cwd=self.config.workspace,
        )

    def _judged(
        self, name: str, arguments: Mapping[str, Any], routed: Routed | None = None
    ) -> tuple[HookCall, Verdict]:
        """The call and its verdict, worked out once: a call that asks gets an id (its
        digest and generation), so a retry finds its request. A call of a changed tool
        asks for the change (see `changes`), under an id of that version."""
        hc = self._hook_call(name, arguments, "")
        verdict = self.adapter.judge(hc)
        version = ""
        if routed is not None and routed.changed is not None:
            verdict = changed_verdict(name, verdict)
            version = "@" + routed.seen.pin[:16]
        if verdict.effect == "ask":
            hc = self._hook_call(name, arguments, self._call_id(hc, version))
        elif verdict.effect in ("allow", "notify"):  # its outcome is matched by this id
            hc = self._hook_call(name, arguments, f"{self._call_prefix}.{next(self._call_numbers)}")
        return hc, verdict

    def _call_id(self, hc: HookCall, version: str = "") -> str:
        """The call's digest and generation: a call that ran (finished or failed) leaves
        its request behind, and the same call made again is a new call."""
        digest = hc.call().digest() + version
        store = self.adapter.store
        generation = 0
        while True:
            call_id = f"{digest}#{generation}"
            try:
                found = store.get_request(request_id(f"{CLIENT}/{hc.session_id}/{call_id}"))
            except NotFound:
                return call_id
            if found.state not in ("finished", "failed"):
                return call_id
            generation += 1

    async def call_tool(
        self, ctx: ServerRequestContext[Any] | None, params: types.CallToolRequestParams
    ) -> types.CallToolResult | types.InputRequiredResult:
        try:
            self.recorder.check()
            return await self._call_tool(ctx, params)
        except RecordBroken as exc:
            return _text_result(str(exc), error=True)
        except Exception as exc:  # the store failed: a verdict not recorded lets nothing run
            return _text_result(
                f"signoff failed on this call ({type(exc).__name__}: {exc}); a call whose "
                "verdict could not be recorded is not sent upstream",
                error=True,
            )

    async def _call_tool(
        self, ctx: ServerRequestContext[Any] | None, params: types.CallToolRequestParams
    ) -> types.CallToolResult | types.InputRequiredResult:
        name = params.name
        arguments = dict(params.arguments or {})
        routed = self.routed.get(name)
        if routed is None:
            return _text_result(
                f"signoff: no tool {name!r} behind this proxy (tools are SERVER{SEPARATOR}TOOL)",
                error=True,
            )
        routed = self._trusted_since(routed)
        adapter = self.adapter
        unknown = _unknown_arguments(routed.tool.input_schema, arguments)
        if unknown:  # not judged, so not sent: smuggled past the declaration otherwise
            reason = (
                f"signoff denied this call: argument {unknown[0]!r} is not in the input "
                f"schema of {name} (its arguments: {', '.join(_properties(routed)) or 'none'})"
            )
            hc = self._hook_call(name, arguments, "")
            adapter.refuse(hc, Verdict("deny", "high", "schema", (reason,), routed.spec.tier))
            return _text_result(reason, error=True)
        hc, judged = self._judged(name, arguments, routed)
        answer = adapter.pre(hc, judged=judged)
        if answer.behavior == "defer":
            asked = await self._ask(ctx, params, answer, routed)
            if asked is not None:
                return asked
            answer = adapter.pre(hc, judged=judged)  # decided meanwhile: from the decision
            if answer.behavior == "defer":
                return self._pending(answer, routed)
        if answer.behavior == "deny" and self._retry_in_doubt(answer, routed):
            answer = adapter.pre(hc, judged=judged)  # approved again: claimed afresh below
        if answer.behavior != "allow":
            return self._refused(answer)
        sent = dict(answer.updated_input) if answer.updated_input is not None else arguments
        try:
            result = await self.upstreams[routed.upstream].call_tool(routed.original, sent)
        except BaseException as exc:  # the transport failed, or the client cancelled the
            # call: whether it ran is unknown
            doubt = {
                "client": CLIENT,
                "session_id": hc.session_id,
                "call": hc.call().to_json(),
                "outcome": "in_doubt",
                "error": f"{type(exc).__name__}: {exc}",
                **({"request": answer.request_id} if answer.request_id else {}),
            }

            def record_doubt() -> None:
                adapter.store.record(SESSION_OUTCOME, doubt, run_id=hc.run_id)

            if not isinstance(exc, Exception):  # cancelled: recorded if it can be, then on
                with contextlib.suppress(Exception):
                    self._after_verdict(answer, record_doubt)
                raise
            self._after_verdict(answer, record_doubt)
            return _text_result(
                f"signoff: the {routed.upstream} server failed during the call ({exc}); "
                "whether it ran is unknown, and it is not retried",
                error=True,
            )

        self.record_outcome(hc, answer, result)
        if routed.changed is not None and answer.request_id:
            # a person approved a call of the changed tool and it ran: the change is trusted
            self.pins.trust(routed.seen)
            self.adapter_store().record(
                MCP_TOOL_PINNED,
                {"tool": name, "server": routed.upstream, "pin": routed.seen.pin},
                request_id=answer.request_id,
            )
            self._repinned(routed, f"a person approved request {answer.request_id}, which ran")
        return result

    def _after_verdict(self, answer: Answer, write: Any) -> None:
        """A record of an allowed call's end: by the writer of its verdict when that is the
        recorder (`[record] allowed = "beside"`), so it comes after it; else now."""
        if answer.request_id is None and self.config.record_allowed == "beside":
            self.recorder.submit(write)
        else:
            write()

    def record_outcome(self, hc: HookCall, answer: Answer, result: Any) -> None:
        """What the upstream answered (a tool's result, a resource, a prompt), on the
        record: a claimed request is finished before the client hears it ran; an allowed
        call's outcome is held and committed with the next verdict (see `recorder`)."""
        adapter = self.adapter

        # allowed outright, in this process: `pre` kept no state for the call
        kept = (
            answer.request_id is not None
            or answer.verdict is None
            or answer.verdict.effect != "allow"
        )

        def post() -> None:
            response = result.model_dump(mode="json", by_alias=True, exclude_none=True)
            event: HookEvent = "post_failure" if getattr(result, "is_error", False) else "post"
            adapter.post(replace(hc, event=event, response=response), kept=kept)

        if answer.request_id is not None:
            post()
        elif self.config.record_allowed == "beside":
            self.recorder.submit(post)  # after its verdict, by the same writer
        else:
            try:  # once the answer is on its way: the loop's next turn
                loop: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
            except RuntimeError:  # not asyncio (trio): now, and written now
                loop = None
            if loop is None:
                self._hold(post)
                self.recorder.write_held_soon()
            else:
                loop.call_soon(self._hold, post, loop)

    def _hold(self, post: Any, loop: asyncio.AbstractEventLoop | None = None) -> None:
        """Put the outcome `post` records among the held ones; if none was held, the
        writer writes them in `LINGER` seconds unless a verdict took them meanwhile."""
        adapter = self.adapter
        adapter.holding_outcomes, adapter.held_first = True, False
        try:
            post()
        except BaseException as exc:  # an outcome not kept: no call runs from now on
            self.recorder.broken = exc
        finally:
            adapter.holding_outcomes = False
        if adapter.held_first and loop is not None:
            loop.call_later(LINGER, self.recorder.write_held_soon)

    def record_failure(self, hc: HookCall, answer: Answer, exc: BaseException) -> None:
        """The upstream refused or failed a read or a prompt (nothing it does changes
        anything), on the record as failed."""
        failed = {
            "client": CLIENT,
            "session_id": hc.session_id,
            "call": hc.call().to_json(),
            "outcome": "failed",
            "error": f"{type(exc).__name__}: {exc}",
            **({"request": answer.request_id} if answer.request_id else {}),
        }
        self.adapter_store().record(SESSION_OUTCOME, failed, run_id=hc.run_id)

    def gate(self, name: str, arguments: Mapping[str, Any]) -> tuple[HookCall, Answer]:
        """Judge a resource read or a prompt (recorded); raise the refusal as an MCP error
        unless it may go upstream."""
        from mcp.shared.exceptions import MCPError

        self.recorder.check()
        adapter = self.adapter
        hc, judged = self._judged(name, arguments)
        answer = adapter.pre(hc, judged=judged)
        if answer.behavior == "allow":
            return hc, answer
        if answer.behavior == "defer":
            text = self._pending_text(answer, answer.reason, then="read or get it again")
        else:
            text = answer.reason
        raise MCPError(types.INVALID_REQUEST, text)

    def _trusted_since(self, routed: Routed) -> Routed:
        """A changed tool that a person trusted since (`signoff mcp trust`) is pinned now."""
        if routed.changed is None or self.pins.pinned_as(routed.seen.name) != routed.seen.pin:
            return routed
        return self._repinned(routed, "signoff mcp trust")

    def _repinned(self, routed: Routed, how: str) -> Routed:
        """The tool as pinned now: its calls judged by the rules again; the requests still
        pending for its change are closed (`how`: what trusted it)."""
        name = routed.tool.name
        declared = declare(
            name,
            routed.seen.description,
            routed.tool.input_schema,
            Hints.of(routed.tool.annotations),
            self.config.tools.get(name),
            trusted=self.config.servers[routed.upstream].trusted,
        )
        self.routed[name] = replace(routed, changed=None, spec=declared)
        self._build_adapter()
        close_changed_requests(self.adapter_store(), name, actor="signoff mcp proxy", how=how)
        return self.routed[name]

    def _retry_in_doubt(self, answer: Answer, routed: Routed) -> bool:
        """A call in doubt (its proxy died mid-call, the claim lapsed) runs again only if
        its tool is declared idempotent; any other stays in doubt for a person."""
        if not answer.request_id or not routed.spec.idempotent:
            return False
        store = self.adapter_store()
        store.sweep_leases()
        if store.get_request(answer.request_id).state != "in_doubt":
            return False
        store.resolve_in_doubt(
            answer.request_id, "retry", actor="signoff mcp proxy (idempotent tool)"
        )
        return True

    # ------------------------------------------------------------------ asking

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
        return _text_result(self._pending_text(answer, answer.reason), error=True)

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
                return _text_result(
                    f"signoff: {who} answered instead of running it: {text}", error=False
                )
        return _text_result(answer.reason, error=True)

    def _input_schema(self, name: str) -> Mapping[str, Any] | None:
        routed = self.routed.get(name)
        return routed.tool.input_schema if routed is not None else None

    def server(self) -> Server[Any]:
        from .catalog import Catalog

        catalog = Catalog(self)
        return Server(
            "signoff-mcp-proxy",
            version="1",
            instructions="signoff gates the tool calls and reads of the servers behind it.",
            on_list_tools=self.list_tools,
            # over HTTP a call's input schema is looked up per call: from what was listed
            get_tool_input_schema=self._input_schema,
            on_call_tool=self.call_tool,
            on_list_resources=catalog.list_resources,
            on_list_resource_templates=catalog.list_resource_templates,
            on_read_resource=catalog.read_resource,
            on_list_prompts=catalog.list_prompts,
            on_get_prompt=catalog.get_prompt,
        )


async def serve_stdio(config: ProxyConfig, *, store_url: str | None = None) -> None:
    from .stdio import stdio_wire

    async with Proxy(config, store_url=store_url) as proxy:
        server = proxy.server()
        async with stdio_wire() as (read, write):
            await server.run(read, write, server.create_initialization_options())


LOOPBACK = ("127.0.0.1", "localhost", "::1")


async def serve_http(
    config: ProxyConfig,
    *,
    host: str = "127.0.0.1",
    port: int = 8766,
    store_url: str | None = None,
    ready: Any = None,
) -> None:
    """The proxy over streamable HTTP at http://HOST:PORT/mcp, on this machine only: it
    has no accounts, so whoever reaches it makes calls as the configured principal."""
    import uvicorn

    if host not in LOOPBACK:
        from ..exceptions import ConfigurationError

        raise ConfigurationError(
            f"signoff mcp proxy --http {host}: only a loopback address (127.0.0.1, localhost, "
            "::1); the proxy has no accounts of its own"
        )
    async with Proxy(config, store_url=store_url) as proxy:
        app = proxy.server().streamable_http_app(host=host)
        server = uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level="warning"))
        if ready is not None:
            ready(server)
        await server.serve()


__all__ = ["CLIENT", "Proxy", "Routed", "client_config_paths", "serve_http", "serve_stdio"]
