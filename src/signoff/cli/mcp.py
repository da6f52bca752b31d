"""`signoff mcp proxy`: signoff in front of MCP servers (see docs/mcp.md)."""

from __future__ import annotations

import argparse
import os
import signal
import sys
from typing import Any

DEFAULT_CONFIG = os.path.join(".signoff", "mcp.toml")


def _exit(signum: int, frame: Any) -> None:
    raise SystemExit(128 + signum)


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
    # A client stopping the proxy sends SIGTERM: unwind, so the record is written out.
    signal.signal(signal.SIGTERM, _exit)
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


def cmd_install(args: argparse.Namespace) -> int:
    from ..mcp.install import install

    report = install(args.client, args.workspace, user=args.user)
    for line in report.lines:
        print(line)
    for line in report.warnings:
        sys.stderr.write(f"signoff: warning: {line}\n")
    return 0


def cmd_uninstall(args: argparse.Namespace) -> int:
    from ..mcp.install import uninstall

    report = uninstall(args.client, args.workspace, user=args.user)
    for line in report.lines:
        print(line)
    for line in report.warnings:
        sys.stderr.write(f"signoff: warning: {line}\n")
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

    clients = ("claude-code", "cursor", "claude-desktop")
    for name, func, help in (
        ("install", cmd_install, "route a client's MCP servers through the proxy"),
        ("uninstall", cmd_uninstall, "undo exactly what install did"),
    ):
        parser = mcp_sub.add_parser(name, help=help)
        parser.add_argument("client", choices=clients)
        parser.add_argument("--workspace", default=".", help="the project (default: .)")
        parser.add_argument(
            "--user", action="store_true", help="cursor: ~/.cursor/mcp.json, not the project's"
        )
        parser.set_defaults(func=func)


__all__ = ["register"]
