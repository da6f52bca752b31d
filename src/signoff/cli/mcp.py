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


def cmd_pins(args: argparse.Namespace) -> int:
    import json
    import time

    from ..escape import escape_untrusted
    from ..mcp.pins import Pins

    pins = Pins(os.path.abspath(args.workspace))
    if args.tool is None:
        entries = pins.entries()
        if args.json:
            print(json.dumps([_entry_json(e) for e in entries], indent=2, sort_keys=True))
            return 0
        if not entries:
            print(f"no pinned MCP tools in {pins.path} (the proxy pins each tool it lists)")
            return 0
        width = max(len(e.name) for e in entries)
        for e in entries:
            pin = e.changed_pin if e.new and e.changed_pin else e.pin
            print(escape_untrusted(f"{e.name:<{width}}  {e.state:<7}  {pin[:16]}"))
        if any(e.changed_pin for e in entries):
            print(
                "NEW: not in its server's first listing (added or renamed since), not "
                "trusted yet; CHANGED: says something else than its pin. Their calls ask."
            )
            print("Read one with: signoff mcp pins TOOL")
        return 0
    entry = pins.entry(args.tool)
    if args.json:
        print(json.dumps(_entry_json(entry, diff=True), indent=2, sort_keys=True))
        return 0
    if entry.changed_pin is None:
        print(escape_untrusted(f"{entry.name} is as pinned ({entry.pin[:16]})."))
        return 0
    seen = time.strftime("%Y-%m-%d %H:%M", time.localtime(entry.changed_at or 0))
    if entry.new:
        print(
            escape_untrusted(
                f"{entry.name} is NEW since its server's tools were pinned (seen {seen}); "
                "all it says:"
            )
        )
    else:
        print(escape_untrusted(f"{entry.name} CHANGED since it was pinned (seen {seen}):"))
    print(escape_untrusted(entry.diff))
    print(
        "Its calls ask until it is trusted. If this is what you expect: "
        f"signoff mcp trust {entry.name} --pin {entry.changed_pin[:16]}"
    )
    return 0


def _entry_json(entry: Any, *, diff: bool = False) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "tool": entry.name,
        "pin": entry.pin or None,
        "state": entry.state.lower(),
        "changed": entry.changed_pin is not None,
        "changed_pin": entry.changed_pin,
        "changed_at": entry.changed_at,
    }
    if diff:
        doc["diff"] = entry.diff
    return doc


def cmd_trust(args: argparse.Namespace) -> int:
    from contextlib import closing

    from ..escape import escape_untrusted
    from ..i18n import plural
    from ..kinds import MCP_TOOL_PINNED
    from ..mcp.changes import close_changed_requests
    from ..mcp.config import SEPARATOR
    from ..mcp.pins import Pins
    from ._output import store_for
    from .runs import decider_for

    args.workspace = os.path.abspath(args.workspace)
    pins = Pins(args.workspace)
    # refused (unknown tool, nothing changed, another version than read) before the record
    entry = pins.trustable(args.tool, args.pin)
    with closing(store_for(args)) as store:
        actor = decider_for(args, need_admin=True).actor
        # on the record first: a trust that is not recorded does not happen
        store.record(
            MCP_TOOL_PINNED,
            {
                "tool": entry.name,
                "server": entry.name.split(SEPARATOR, 1)[0],
                "pin": entry.changed_pin,
                "previous": entry.pin or None,
                **({"new": True} if entry.new else {}),
                "by": "signoff mcp trust",
                "diff": entry.diff,
            },
            actor=actor,
        )
        before = pins.trust_change(args.tool, entry.changed_pin)  # the version recorded
        # the calls that asked for the change: closed, not left waiting in the inbox
        closed = close_changed_requests(store, entry.name, actor=actor, how="signoff mcp trust")
    now = (before.changed_pin or "")[:16]
    was = "new" if before.new else before.pin[:16]
    print(
        escape_untrusted(
            f"Trusted {before.name}: pinned {now} (was {was}); its calls are judged by the "
            f"rules{'' if before.new else ' again'}."
        )
    )
    if closed:
        print(
            f"Closed {plural(len(closed), 'pending request')} for the change "
            f"({', '.join(closed)}): the same call made again is judged by the rules."
        )
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

    pins = _command(
        mcp_sub,
        "pins",
        help="the pinned MCP tools, and the diff of one that changed or is new",
        description="List the upstream tools the proxy pinned (all the client is shown of "
        "each: name, title, description, schemas, annotations, _meta; hashed in "
        ".signoff/mcp/pins.json), which of them changed since, and which are new since "
        "their server's first listing; with TOOL, show what changed (or all a new tool "
        "says), as a diff, and the command that trusts it.",
        examples=("signoff mcp pins", "signoff mcp pins files__write_file"),
    )
    pins.add_argument(
        "tool", nargs="?", default=None, help="one tool, SERVER__TOOL (default: list them all)"
    )
    pins.add_argument("--workspace", default=".", help="the project (default: .)")
    pins.add_argument("--json", action="store_true", help="print JSON")
    pins.set_defaults(func=cmd_pins)

    trust = _command(
        mcp_sub,
        "trust",
        help="pin a changed or new tool after reading its diff",
        description="Pin the changed (or new) version of an upstream tool that `signoff mcp "
        "pins TOOL` showed, so that its calls are judged by the rules instead of asking. "
        "On the record (mcp.tool_pinned, with the diff and who trusted it). Needs an admin "
        "(or the store's local user). With --pin, only the version you read is trusted: "
        "a tool that changed again since is refused.",
        examples=(
            "signoff mcp trust files__write_file --pin 3fa2c1d09b7e4a55",
            "signoff mcp trust notes__append",
        ),
    )
    trust.add_argument("tool", help="the changed or new tool, SERVER__TOOL")
    trust.add_argument(
        "--pin",
        default=None,
        help="the changed version's pin as `signoff mcp pins TOOL` shows it (at least 12 "
        "characters; default: whatever version the proxy saw last)",
    )
    trust.add_argument("--workspace", default=".", help="the project (default: .)")
    trust.add_argument(
        "--db",
        default=None,
        help="store URL (default: $SIGNOFF_DB, else .signoff/signoff.db in the workspace)",
    )
    from .runs import add_identity

    add_identity(trust)
    trust.set_defaults(func=cmd_trust)


__all__ = ["register"]
