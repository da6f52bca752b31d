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

The modules of `signoff.mcp` that serve the proxy import the `mcp` package (the `mcp`
extra); nothing else in signoff does. The `Proxy` is in `core` (its parts: `listing`,
`asking`, `recording`, `routed`), serving it in `serve`; this module names them.
"""

from __future__ import annotations

from .core import CLIENT, Proxy, Routed, client_config_paths
from .serve import LOOPBACK, serve_http, serve_stdio

__all__ = [
    "CLIENT",
    "LOOPBACK",
    "Proxy",
    "Routed",
    "client_config_paths",
    "serve_http",
    "serve_stdio",
]
