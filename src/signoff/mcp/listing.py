"""The upstreams' tools as the client sees them: listed, checked against their pins (a
change, or a tool new since the server's first listing, makes every call of the tool ask,
see `pins` and `changes`), declared; and a version trusted since, taken at the tool's next
call."""

from __future__ import annotations

from dataclasses import replace

import anyio
import mcp.types as types
from mcp import Client as McpClient

from ..kinds import MCP_TOOL_CHANGED, MCP_TOOL_PINNED
from .changes import close_changed_requests
from .config import SEPARATOR
from .declare import Hints, declare
from .pins import Held, Pins, Seen
from .recording import ProxyParts, RecordingAdapter
from .routed import Routed


class Listing(ProxyParts):
    """The proxy's tools, from its upstreams (see `Proxy`)."""

    upstreams: dict[str, McpClient]
    routed: dict[str, Routed]
    pins: Pins
    _told: set[tuple[str, str]]
    _adapter: RecordingAdapter | None
    _listing: anyio.Lock

    def _build_adapter(self) -> None:
        raise NotImplementedError

    async def refresh(self) -> None:
        """List every upstream's tools, check them against their pins, declare them. One
        listing at a time: an upstream answering two out of order cannot leave the
        proxy judging calls by the older one."""
        async with self._listing:
            await self._refresh()

    async def _refresh(self) -> None:
        routed: dict[str, Routed] = {}
        for server, client in self.upstreams.items():
            tools: dict[str, types.Tool] = {}
            cursor: str | None = None
            while True:
                page = await client.list_tools(cursor=cursor, cache_mode="refresh")
                for tool in page.tools:  # a name listed twice: the client is shown the last
                    tools[f"{server}{SEPARATOR}{tool.name}"] = tool
                cursor = page.next_cursor
                if not cursor:
                    break
            shown = {name: tool.model_copy(update={"name": name}) for name, tool in tools.items()}
            # the pin covers all the client is shown of a tool, as it is shown
            seen = {
                name: Seen.of(tool.model_dump(mode="json", by_alias=True, exclude_none=True))
                for name, tool in shown.items()
            }
            held = self._check_pins(server, list(seen.values()))
            for name, tool in tools.items():
                spec = declare(
                    name,
                    tool.description or "",
                    tool.input_schema,
                    Hints.of(tool.annotations),
                    self.config.tools.get(name),
                    trusted=self.config.servers[server].trusted,
                )
                why = held.get(name)
                if why is not None:  # whatever would allow it, a person decides
                    spec = replace(spec, always_ask=True)
                routed[name] = Routed(
                    server,
                    tool.name,
                    shown[name],
                    spec,
                    seen[name],
                    why.diff if why is not None else None,
                    new=why is not None and why.new,
                )
        if routed == self.routed and self._adapter is not None:
            return  # nothing changed: the policy and its compiled rules are kept
        self.routed = routed
        self._build_adapter()

    def _check_pins(self, server: str, seen: list[Seen]) -> dict[str, Held]:
        """The listing against the pins; what was pinned now, and each held version the
        first time this proxy sees it, on the record."""
        held, pinned = self.pins.check_listing(server, seen)
        store = self.adapter_store()
        pins = {tool.name: tool.pin for tool in seen}
        for name in pinned:
            store.record(MCP_TOOL_PINNED, {"tool": name, "server": server, "pin": pins[name]})
        for name, why in held.items():
            if (name, pins[name]) in self._told:
                continue
            self._told.add((name, pins[name]))
            data = {"tool": name, "server": server, "pin": pins[name], "diff": why.diff}
            store.record(MCP_TOOL_CHANGED, {**data, **({"new": True} if why.new else {})})
        return held

    def _trusted_since(self, routed: Routed) -> Routed:
        """A changed tool that a person trusted since (`signoff mcp trust`) is pinned now."""
        if routed.changed is None or self.pins.pinned_as(routed.seen.name) != routed.seen.pin:
            return routed
        return self._repinned(routed, "signoff mcp trust")

    def _repinned(self, routed: Routed, how: str) -> Routed:
        """The tool as pinned now: its calls judged by the rules again; the requests still
        pending for its change are closed (`how`: what trusted it). If a listing found it
        otherwise meanwhile (an approved call ran long), that version stays held, its diff
        now from the version pinned."""
        name = routed.tool.name
        current = self.routed.get(name)
        if current is None:  # listed since without it: it stays gone
            return routed
        if current.seen.pin != routed.seen.pin:
            why = self._check_pins(routed.upstream, [current.seen]).get(name)
            if why is not None:
                spec = replace(current.spec, always_ask=True)
                self.routed[name] = replace(current, changed=why.diff, new=why.new, spec=spec)
                self._build_adapter()
            return self.routed[name]
        routed = current
        declared = declare(
            name,
            routed.seen.description,
            routed.tool.input_schema,
            Hints.of(routed.tool.annotations),
            self.config.tools.get(name),
            trusted=self.config.servers[routed.upstream].trusted,
        )
        self.routed[name] = replace(routed, changed=None, new=False, spec=declared)
        self._build_adapter()
        close_changed_requests(self.adapter_store(), name, actor="signoff mcp proxy", how=how)
        return self.routed[name]


__all__ = ["Listing"]
