"""The upstreams' tools as the client sees them: listed, checked against their pins (a
change makes every call of the tool ask, see `changes`), declared; and a change trusted
since, taken at the tool's next call."""

from __future__ import annotations

from dataclasses import replace

from mcp import Client as McpClient

from ..kinds import MCP_TOOL_CHANGED, MCP_TOOL_PINNED
from .changes import close_changed_requests
from .config import SEPARATOR
from .declare import Hints, declare
from .pins import Pins, Seen
from .recording import ProxyParts, RecordingAdapter
from .routed import Routed


class Listing(ProxyParts):
    """The proxy's tools, from its upstreams (see `Proxy`)."""

    upstreams: dict[str, McpClient]
    routed: dict[str, Routed]
    pins: Pins
    _told: set[tuple[str, str]]
    _adapter: RecordingAdapter | None

    def _build_adapter(self) -> None:
        raise NotImplementedError

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


__all__ = ["Listing"]
