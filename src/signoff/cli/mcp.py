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


class _Examples(argparse.HelpFormatter):
    """Keeps the examples (the epilog) line for line, as they are to be typed."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        if text.startswith("example"):
            return "".join(indent + line for line in text.splitlines(keepends=True))
        return super()._fill_text(text, width, indent)


def _command(
    sub: Any, name: str, *, help: str, description: str, examples: tuple[str, ...]
) -> argparse.ArgumentParser:
    lines = "\n".join(f"  {e}" for e in examples)
    parser: argparse.ArgumentParser = sub.add_parser(
        name,
        help=help,
        description=description,
        epilog=f"example{'s' if len(examples) > 1 else ''}:\n{lines}",
        formatter_class=_Examples,
    )
    return parser


CLIENTS = ("claude-code", "cursor", "claude-desktop")


def register(sub: Any) -> None:
    mcp = _command(
        sub,
        "mcp",
        help="signoff in front of MCP servers",
        description="One gate in front of every MCP server, for every MCP client: the "
        "proxy lists the upstream servers' tools as SERVER__TOOL and judges every call "
        "(see docs/mcp.md).",
        examples=("signoff mcp proxy", "signoff mcp install claude-code"),
    )
    mcp_sub = mcp.add_subparsers(dest="mcp_command", required=True)
    proxy = _command(
        mcp_sub,
        "proxy",
        help="serve the configured MCP servers' tools, every call judged by signoff",
        description="Start the upstream servers named in .signoff/mcp.toml and serve their "
        "tools over stdio (what desktop clients launch) or streamable HTTP. A denied call "
        "never reaches the upstream; an asked one waits for `signoff approve`, then the "
        "same call is retried.",
        examples=(
            "signoff mcp proxy --config .signoff/mcp.toml",
            "signoff mcp proxy --http 127.0.0.1:8766",
        ),
    )
    proxy.add_argument(
        "--config", default=DEFAULT_CONFIG, help=f"the proxy's settings (default: {DEFAULT_CONFIG})"
    )
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
        help="serve streamable HTTP at http://HOST:PORT/mcp (loopback only) instead of "
        "stdio (default: stdio)",
    )
    proxy.set_defaults(func=cmd_proxy)

    for name, func, help, description in (
        (
            "install",
            cmd_install,
            "route a client's MCP servers through the proxy",
            "Move the servers in the client's MCP configuration into .signoff/mcp.toml and "
            "leave one server in their place, signoff, which runs the proxy; the rest of the "
            "client's file is kept.",
        ),
        (
            "uninstall",
            cmd_uninstall,
            "undo exactly what install did",
            "Put the client's MCP configuration and .signoff/mcp.toml back as they were "
            "before install (byte for byte when untouched since; else only signoff's entry "
            "is taken out).",
        ),
    ):
        parser = _command(
            mcp_sub,
            name,
            help=help,
            description=description,
            examples=(f"signoff mcp {name} claude-code", f"signoff mcp {name} cursor --user"),
        )
        parser.add_argument("client", choices=CLIENTS, help="the MCP client")
        parser.add_argument("--workspace", default=".", help="the project (default: .)")
        parser.add_argument(
            "--user", action="store_true", help="cursor: ~/.cursor/mcp.json, not the project's"
        )
        parser.set_defaults(func=func)


__all__ = ["register"]
