"""The proxy served to clients: over stdio (what desktop clients launch) or streamable
HTTP on a loopback address."""

from __future__ import annotations

from typing import Any

from .config import ProxyConfig
from .core import Proxy


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


__all__ = ["LOOPBACK", "serve_http", "serve_stdio"]
