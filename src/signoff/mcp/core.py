"""The `Proxy`: its upstream connections and the gate of every call (see `proxy` for the
whole picture); its parts are `listing`, `asking`, `recording` and `routed`."""

from __future__ import annotations

import contextlib
import itertools
import os
import sys
from collections.abc import Mapping
from contextlib import AsyncExitStack
from typing import TYPE_CHECKING, Any

import anyio
import mcp.types as types
from mcp import Client as McpClient
from mcp import StdioServerParameters
from mcp.server import Server, ServerRequestContext

from ..adapters.core import Answer, HookCall, HookOptions, request_id
from ..adapters.core import Client as AdapterClient
from ..audit.outcomes import Writer
from ..exceptions import NotFound
from ..kinds import MCP_TOOL_PINNED, WRITER_ENDED
from ..models import Verdict
from .asking import Asking
from .changes import changed_verdict
from .config import SEPARATOR, ProxyConfig, Upstream
from .listing import Listing
from .pins import Pins
from .recorder import RecordBroken, Recorder
from .recording import OutcomeRecording, RecordingAdapter
from .resources import RESOURCE, RESOURCE_FILE, SPECS, as_file_read
from .routed import (
    CLIENT,
    Routed,
    changed_files,
    client_config_paths,
    preview,
    properties,
    text_result,
    unknown_arguments,
)
from .stdio import upstream_transport

if TYPE_CHECKING:
    from ..store import Store

_STRICTNESS = {"allow": 0, "notify": 1, "ask": 2, "deny": 3}


class Proxy(Listing, Asking, OutcomeRecording):
    """The upstream connections, their tools as signoff declarations, and the gate."""

    def __init__(self, config: ProxyConfig, *, store_url: str | None = None) -> None:
        self.config = config
        self.store_url = store_url
        self.upstreams: dict[str, McpClient] = {}
        self.routed: dict[str, Routed] = {}
        self._stack = AsyncExitStack()
        self._adapter: RecordingAdapter | None = None
        self._store: Store | None = None
        self.pins = Pins(config.workspace)
        # what the recorder writes (held outcomes, verdicts written beside their call) is
        # waited for by nothing: it need not wait for the disk either (Store.record)
        self.recorder = Recorder(
            lambda drafts: self.adapter_store().record_many(drafts, flush="soon")
        )
        self._told: set[tuple[str, str]] = set()  # changes already on the record
        self._listing = anyio.Lock()  # one upstream listing at a time (`refresh`)
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
        if self.recorder.problem is not None:
            sys.stderr.write(
                f"signoff mcp proxy: the record is incomplete: {self.recorder.problem}\n"
            )
        if self._adapter is not None:  # it judged: calls left without outcome are in doubt
            try:
                self.adapter_store().record(WRITER_ENDED, {"writer": self.writer, "client": CLIENT})
            except Exception as exc:  # its process ending says the same, on this machine
                sys.stderr.write(f"signoff mcp proxy: could not record its end: {exc}\n")
        if self._store is not None:
            self._store.close()

    def adapter_store(self) -> Store:
        if self._store is None:
            from ..store import open_store

            self._store = open_store(self.store_url, workspace=self.config.workspace)
        return self._store

    def _build_adapter(self) -> None:
        routed = self.routed
        if self._adapter is not None:
            self._adapter.close()
        self._adapter = RecordingAdapter(
            self.recorder,
            self.config.record_allowed == "beside",
            self.writer,
            AdapterClient(
                name=CLIENT,
                specs={**SPECS, **{name: r.spec for name, r in routed.items()}},
                preview=preview(routed),
                protected=lambda ws, home: client_config_paths(ws, home),
                changed_files=changed_files(routed),
                answer_input=lambda call, answer: None,
            ),
            self.config.workspace,
            options=HookOptions(ask="defer", defer_expiry=self.config.expiry),
            store=self.adapter_store(),
        )

    @property
    def adapter(self) -> RecordingAdapter:
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
            cwd=self._cwd_of(name),
        )

    def _cwd_of(self, name: str) -> str:
        """Where the upstream that has this tool runs: what its relative paths mean (a
        local server started with its own `cwd`), else the workspace."""
        routed = self.routed.get(name)
        up = self.config.servers.get(routed.upstream) if routed is not None else None
        if up is None or up.command is None or not up.cwd:
            return self.config.workspace
        return os.path.join(self.config.workspace, os.path.expanduser(up.cwd))

    def _judged(
        self, name: str, arguments: Mapping[str, Any], routed: Routed | None = None
    ) -> tuple[HookCall, Verdict]:
        """The call and its verdict, worked out once: a call that asks gets an id (its
        digest and generation), so a retry finds its request. A call of a changed tool
        asks for the change (see `changes`), under an id of that version. A resource read
        whose URI reads as paths is judged as a read of them too (see `resources`)."""
        hc = self._hook_call(name, arguments, "")
        verdict = self.adapter.judge(hc)
        file_read = as_file_read(arguments) if name == RESOURCE else None
        if file_read is not None:
            read = self.adapter.judge(self._hook_call(RESOURCE_FILE, file_read, ""))
            if _STRICTNESS[read.effect] > _STRICTNESS[verdict.effect]:
                verdict = read
        version = ""
        if routed is not None and routed.changed is not None:
            verdict = changed_verdict(name, verdict, new=routed.new)
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
            return text_result(str(exc), error=True)
        except Exception as exc:  # the store failed: a verdict not recorded lets nothing run
            return text_result(
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
            return text_result(
                f"signoff: no tool {name!r} behind this proxy (tools are SERVER{SEPARATOR}TOOL)",
                error=True,
            )
        routed = self._trusted_since(routed)
        adapter = self.adapter
        unknown = unknown_arguments(routed.tool.input_schema, arguments)
        if unknown:  # not judged, so not sent: smuggled past the declaration otherwise
            reason = (
                f"signoff denied this call: argument {unknown[0]!r} is not in the input "
                f"schema of {name} (its arguments: {', '.join(properties(routed)) or 'none'})"
            )
            hc = self._hook_call(name, arguments, "")
            adapter.refuse(hc, Verdict("deny", "high", "schema", (reason,), routed.spec.tier))
            return text_result(reason, error=True)
        hc, judged = self._judged(name, arguments, routed)
        answer = adapter.pre(hc, judged=judged)
        if answer.behavior == "defer":
            asked = await self._ask(ctx, params, answer, routed)
            if asked is not None:
                return asked
            moved = self._changed_while_waiting(routed)
            if moved is not None:
                return moved
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
            if not isinstance(exc, Exception):  # cancelled: recorded if it can be, then on
                with contextlib.suppress(Exception):
                    self.record_doubt(hc, answer, exc)
                raise
            self.record_doubt(hc, answer, exc)
            return text_result(
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

    def _changed_while_waiting(self, routed: Routed) -> types.CallToolResult | None:
        """A call waited for a person inside the call (`[ask] via = "url"`) while a listing
        found its tool changed, renamed or gone: it was judged, and decided, for the tool
        as it was, so it is not sent to the tool as it is now. Nothing is claimed: the
        retry is judged for the tool as it is (a change asks)."""
        now = self.routed.get(routed.tool.name)
        if now is not None and now.seen.pin == routed.seen.pin:
            return None
        return text_result(
            f"signoff: the tool {routed.tool.name} changed while this call waited for a "
            "person, who decided on the tool as it was; it has NOT run. Retry the call: "
            "it is judged for the tool as it is now.",
            error=True,
        )

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


__all__ = ["CLIENT", "Proxy", "Routed", "client_config_paths"]
