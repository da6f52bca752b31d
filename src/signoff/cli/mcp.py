"""`signoff mcp proxy`: signoff in front of MCP servers (see docs/mcp.md)."""

from __future__ import annotations

import argparse
import os
from typing import Any

DEFAULT_CONFIG = os.path.join(".signoff", "mcp.toml")


def cmd_proxy(args: argparse.Namespace) -> int:
    import anyio

    try:
        from ..mcp.proxy import serve_http, serve_stdio
    except ImportError as exc:  # the extra is not installed
        raise SystemExit(
            f"signoff mcp proxy needs the mcp package: pip install 'signoff[mcp]' ({exc})"
        ) from None
    from ..mcp.config import load_config

    config = load_config(args.config, workspace=args.workspace)
    if args.http is None:
        anyio.run(lambda: serve_stdio(config, store_url=args.db))
        return 0
    host, _, port = args.http.rpartition(":")
    if not port.isdigit():
        raise SystemExit(f"signoff mcp proxy: --http {args.http!r} is not HOST:PORT")
    host = host.strip("[]") or "127.0.0.1"
    print(f"signoff mcp proxy: serving on http://{args.http}/mcp", flush=True)
    anyio.run(lambda: serve_http(config, host=host, port=int(port), store_url=args.db))
    return 0


def register(sub: Any) -> None:
    mcp = sub.add_parser("mcp", help="signoff in front of MCP servers")
    mcp_sub = mcp.add_subparsers(dest="mcp_command", required=True)
    proxy = mcp_sub.add_parser(
        "proxy", help="serve the configured MCP servers' tools, every call judged by signoff"
    )
    proxy.add_argument("--config", default=DEFAULT_CONFIG, help=f"default: {DEFAULT_CONFIG}")
    proxy.add_argument(
        "--workspace", default=None, help="the project (default: the folder holding .signoff/)"
    )
    proxy.add_argument(
        "--db",
        default=None,
        help="store URL (default: $SIGNOFF_DB, else .signoff/signoff.db in the workspace)",
    )
    proxy.add_argument(
        "--http",
        metavar="HOST:PORT",
        default=None,
        help="serve streamable HTTP at http://HOST:PORT/mcp (loopback only) instead of stdio",
    )
    proxy.set_defaults(func=cmd_proxy)


__all__ = ["register"]
