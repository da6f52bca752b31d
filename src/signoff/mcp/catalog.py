"""The proxy's resources and prompts: listed from every upstream under their namespaced
names, a `resources/read` judged as a read and a `prompts/get` recorded (see `resources`
for the names and the judging). Subscriptions are not relayed: a client reads again.

    client --resources/read SERVER__URI-->  proxy  --verdict (recorded)-->
        allow   -> the upstream reads URI; the contents come back under SERVER__URI;
                   the outcome on the record
        deny    -> an error with signoff's reason; the upstream never hears of it
        ask     -> an error "pending: decide with `signoff approve ID`, then read again"
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar

import mcp.types as types
from mcp.shared.exceptions import MCPError

from ..exceptions import InvalidInput
from .resources import PROMPT, prompt_call, read_call, route, shown

if TYPE_CHECKING:
    from mcp import Client as McpClient

    from .core import Proxy

Page = TypeVar("Page")


class Catalog:
    """The resources and prompts handlers of one proxy."""

    def __init__(self, proxy: Proxy) -> None:
        self.proxy = proxy

    def _offering(self, what: str) -> list[tuple[str, McpClient]]:
        """The upstreams that say they offer `what` (resources, prompts)."""
        found = []
        for server, client in self.proxy.upstreams.items():
            try:
                caps = client.server_capabilities
            except Exception:  # not connected: it offers nothing now
                continue
            if getattr(caps, what, None) is not None:
                found.append((server, client))
        return found

    @staticmethod
    async def _pages(fetch: Callable[..., Awaitable[Page]]) -> list[Page]:
        """Every page of an upstream's listing (`fetch`: its client's list method)."""
        pages: list[Page] = []
        cursor: str | None = None
        while True:
            page = await fetch(cursor=cursor, cache_mode="refresh")
            pages.append(page)
            cursor = getattr(page, "next_cursor", None)
            if not cursor or len(pages) > 1000:
                return pages

    def _route(self, name: str, what: str) -> tuple[str, str]:
        try:
            return route(name, self.proxy.upstreams, what)
        except InvalidInput as exc:
            raise MCPError(types.INVALID_PARAMS, str(exc)) from None

    def _cwd(self, server: str) -> str:
        """The folder a server reads relative paths from (a remote one's: unknown, so the
        workspace's, as the policy reads them)."""
        workspace = self.proxy.config.workspace
        cwd = self.proxy.config.servers[server].cwd
        return os.path.join(workspace, cwd) if cwd else workspace

    # ------------------------------------------------------------------ resources

    async def list_resources(
        self, ctx: Any, params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        listed: list[types.Resource] = []
        for server, client in self._offering("resources"):
            pages = await self._pages(client.list_resources)
            for page in pages:
                listed += [
                    r.model_copy(update={"uri": shown(server, r.uri)}) for r in page.resources
                ]
        return types.ListResourcesResult(resources=listed)

    async def list_resource_templates(
        self, ctx: Any, params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        listed: list[types.ResourceTemplate] = []
        for server, client in self._offering("resources"):
            pages = await self._pages(client.list_resource_templates)
            for page in pages:
                listed += [
                    t.model_copy(update={"uri_template": shown(server, t.uri_template)})
                    for t in page.resource_templates
                ]
        return types.ListResourceTemplatesResult(resource_templates=listed)

    async def read_resource(
        self, ctx: Any, params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        server, uri = self._route(params.uri, "resource")
        name, arguments = read_call(server, uri, self._cwd(server))
        hc, answer = self.proxy.gate(name, arguments)
        try:
            result = await self.proxy.upstreams[server].read_resource(uri)
        except Exception as exc:
            self.proxy.record_failure(hc, answer, exc)
            raise
        self.proxy.record_outcome(hc, answer, result)
        # the contents name their URIs as the client reads them: through this proxy
        contents = [c.model_copy(update={"uri": shown(server, c.uri)}) for c in result.contents]
        return result.model_copy(update={"contents": contents})

    # ------------------------------------------------------------------ prompts

    async def list_prompts(
        self, ctx: Any, params: types.PaginatedRequestParams | None
    ) -> types.ListPromptsResult:
        listed: list[types.Prompt] = []
        for server, client in self._offering("prompts"):
            pages = await self._pages(client.list_prompts)
            for page in pages:
                listed += [
                    p.model_copy(update={"name": shown(server, p.name)}) for p in page.prompts
                ]
        return types.ListPromptsResult(prompts=listed)

    async def get_prompt(
        self, ctx: Any, params: types.GetPromptRequestParams
    ) -> types.GetPromptResult:
        server, prompt = self._route(params.name, "prompt")
        hc, answer = self.proxy.gate(PROMPT, prompt_call(server, prompt, params.arguments))
        try:
            result = await self.proxy.upstreams[server].get_prompt(prompt, params.arguments)
        except Exception as exc:
            self.proxy.record_failure(hc, answer, exc)
            raise
        self.proxy.record_outcome(hc, answer, result)
        return result


__all__ = ["Catalog"]
