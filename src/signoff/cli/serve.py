"""CLI: `signoff serve`, `signoff users add|list|remove`, `signoff notify`."""

from __future__ import annotations

import argparse
import ipaddress
import socket
import threading
from contextlib import closing
from pathlib import Path
from typing import Any

from ..accounts import ROLES, Accounts
from ..exceptions import ConfigurationError
from ..i18n import plural
from ..settings import load_settings
from ..store import open_store


def _url(args: argparse.Namespace) -> str:
    from ..web.app import store_url_of

    return store_url_of(args.db, Path(args.workspace).resolve())


def is_loopback(host: str) -> bool:
    if host in ("localhost", "ip6-localhost"):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        try:
            return all(
                ipaddress.ip_address(info[4][0]).is_loopback
                for info in socket.getaddrinfo(host, None)
            )
        except (OSError, ValueError):
            return False


def check_bind(host: str, accounts: Accounts) -> None:
    """Refuse a non-loopback address while there is no account (anyone could decide)."""
    if not is_loopback(host) and accounts.people() == 0:
        raise ConfigurationError(
            f"refusing to listen on {host}: there are no accounts of people yet (a hook's "
            "is none), so anyone who can reach it could approve calls. Create one first: "
            "signoff users add NAME --role admin (or bind 127.0.0.1)"
        )


def listen(host: str, port: int) -> socket.socket:
    """A listening socket with TCP_NODELAY (else Nagle + delayed ACK add 40 ms to every
    keep-alive response under uvloop)."""
    family, kind, proto, _, address = socket.getaddrinfo(
        host.strip("[]"), port, type=socket.SOCK_STREAM
    )[0]
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.bind(address)
    sock.listen(128)
    return sock


def cmd_serve(args: argparse.Namespace) -> int:
    import uvicorn

    from ..notify import Notifier
    from ..web.app import create_app
    from ..web.limits import DEFAULT_MAX_BODY

    url = _url(args)
    workspace = Path(args.workspace).resolve()
    accounts = Accounts(url)
    check_bind(args.host, accounts)
    base = args.base_url or f"http://{args.host}:{args.port}"
    settings = load_settings(workspace)
    store = open_store(url)
    app = create_app(
        url,
        workspace=workspace,
        settings=settings,
        store=store,
        accounts=accounts,
        base_url=base,
        forbid_self_approval=True if args.no_self_approval else None,
        max_body=args.max_body or DEFAULT_MAX_BODY,
        worker=not args.no_worker,
    )
    stop = threading.Event()
    notifier = Notifier.from_settings(store, settings, base_url=base)
    thread = None
    if notifier.destinations:
        thread = threading.Thread(
            target=notifier.run, kwargs={"stop": stop.is_set}, name="signoff-notify", daemon=True
        )
        thread.start()
    print(
        f"signoff: serving {url} on {base}"
        + ("" if accounts.people() else " (local mode: no accounts, loopback only)")
    )
    if args.no_worker:
        print(
            "signoff: --no-worker: a decided run moves on only when `signoff resume RUN` "
            "or a `signoff worker` on this store picks it up"
        )
    else:
        print("signoff: runs resume here as soon as their decisions are in (--no-worker: off)")
    sock = listen(args.host, args.port)
    server = uvicorn.Server(
        uvicorn.Config(app, log_level=args.log_level, timeout_graceful_shutdown=5)
    )
    try:
        server.run(sockets=[sock])
    finally:
        sock.close()
        stop.set()
        if thread is not None:
            thread.join(timeout=5)
        store.close()
        accounts.close()
    return 0


def cmd_notify(args: argparse.Namespace) -> int:
    from ..notify import Notifier

    settings = load_settings(Path(args.workspace).resolve())
    with closing(open_store(_url(args))) as store:
        notifier = Notifier.from_settings(store, settings, base_url=args.base_url or "")
        if not notifier.destinations:
            print("notify: no [notifications] channels configured")
            return 0
        sent = notifier.run_once() if args.once else notifier.run()
    print(f"notify: {plural(sent, 'delivery attempt')} finished")
    return 0


LOCAL_MODE_ENDS = (
    "This is the first account, so local mode is over: the web inbox (signoff serve on this "
    "store, running or not) now asks everyone for a token, you too. Open its page, "
    "/login, and paste the token above; add one for each person with "
    "signoff users add NAME --role approver."
)


HOOK_ADDED = (
    "A hook's token posts a coding agent's hook events to this server (POST "
    "/hooks/claude-code) and opens nothing else. Set it where the agent runs: "
    "export SIGNOFF_HOOK_TOKEN=<the token above>."
)


def cmd_users(args: argparse.Namespace) -> int:
    url = _url(args)
    if args.users_command != "add":  # list and remove only read what is there
        from ..exceptions import ConfigurationError
        from ..store.exists import describe, store_exists
        from ._output import store_flags

        if not store_exists(url):
            raise ConfigurationError(
                f"no signoff store at {describe(url)}: check --workspace or --db, or create "
                f"one there with: signoff migrate{store_flags(args)}"
            )
    accounts = Accounts(url)
    try:
        if args.users_command == "add":
            first = accounts.people() == 0 and args.role != "hook"
            token = accounts.add(args.name, args.role)
            print(f"Added {args.name} ({args.role}). Their token (shown once, keep it secret):")
            print(token)
            if args.role == "hook":
                print(HOOK_ADDED)
            if first:
                print(LOCAL_MODE_ENDS)
        elif args.users_command == "remove":
            accounts.remove(args.name)
            print(f"Removed {args.name}.")
        else:
            from ..channels.render import escape_untrusted

            found = accounts.list()
            unsealed = accounts.unsealed()
            if not found and not unsealed:
                print("No accounts (the server runs in local mode, loopback only).")
            for account in found:
                print(f"{account.name}\t{account.role}")
            for name in unsealed:  # nobody can sign in as these
                print(
                    f"{escape_untrusted(name)}\tNOT AN ACCOUNT: written without the key "
                    "(or by an older signoff); remove it, add it again if it is yours"
                )
    finally:
        accounts.close()
    return 0


def _positive_bytes(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: give a number of bytes, at least 1")
    return value


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--db",
        default=None,
        help="store URL (default: $SIGNOFF_DB, else .signoff/signoff.db in the workspace)",
    )
    parser.add_argument("--workspace", default=".", help="workspace root (default: .)")


def register(sub: Any) -> None:
    from ._output import HelpFormatter  # keeps the examples line for line

    serve = sub.add_parser(
        "serve",
        help="the web inbox and HTTP API",
        description="Serve the web inbox (decide requests in a browser, review changes, "
        "read the audit log) and its HTTP API, over the workspace's store.",
        epilog="examples:\n  signoff serve\n  signoff serve --host 0.0.0.0 --port 9000",
        formatter_class=HelpFormatter,
    )
    _common(serve)
    serve.add_argument(
        "--host",
        default="127.0.0.1",
        help="address to listen on; an address other than 127.0.0.1 needs an account first "
        "(default: 127.0.0.1, this machine only)",
    )
    serve.add_argument("--port", type=int, default=8765, help="port to listen on (default: 8765)")
    serve.add_argument(
        "--base-url",
        default="",
        help="public URL used in notification links (default: http://HOST:PORT)",
    )
    serve.add_argument(
        "--no-self-approval",
        action="store_true",
        help="a requester may not approve their own request",
    )
    serve.add_argument(
        "--no-worker",
        action="store_true",
        help="do not resume runs in this server: leave that to `signoff worker` or "
        "`signoff resume` (default: the server resumes a run once its decisions are in)",
    )
    serve.add_argument(
        "--log-level",
        default="info",
        choices=("critical", "error", "warning", "info", "debug", "trace"),
        help="how much the web server logs (default: info)",
    )
    serve.add_argument(
        "--max-body",
        type=_positive_bytes,
        default=None,
        metavar="BYTES",
        help="largest request body accepted; bigger ones get 413 (default 1048576, 1 MiB)",
    )
    serve.set_defaults(func=cmd_serve)

    notify = sub.add_parser(
        "notify",
        help="deliver notifications from the events feed",
        description="Deliver the notifications of [notify] in the settings (webhooks, "
        "mail) for new requests and decisions, from the store's events, until Ctrl-C.",
        epilog="example:\n  signoff notify --base-url https://signoff.example.com",
        formatter_class=HelpFormatter,
    )
    _common(notify)
    notify.add_argument("--once", action="store_true", help="deliver what is waiting, then stop")
    notify.add_argument(
        "--base-url",
        default="",
        help="the web inbox's public URL, for links in notifications (default: no links)",
    )
    notify.set_defaults(func=cmd_notify)

    users = sub.add_parser(
        "users",
        help="approver accounts for the web inbox and API",
        description="Accounts of the people who decide in the web inbox and the API. "
        "Without any, the web inbox is open to this machine only (local mode).",
        epilog="examples:\n  signoff users add alice --role approver\n  signoff users list",
        formatter_class=HelpFormatter,
    )
    users_sub = users.add_subparsers(dest="users_command", metavar="ACTION")
    add = users_sub.add_parser(
        "add",
        help="create an account and print its token once",
        description="Create an account and print its token, once: the person logs in "
        "with it (keep it like a password).",
        epilog="example:\n  signoff users add alice --role approver",
        formatter_class=HelpFormatter,
    )
    _common(add)
    add.add_argument("name", help="the account's name, as shown on decisions")
    add.add_argument(
        "--role",
        choices=ROLES,
        default="approver",
        help="approver decides requests; admin also revokes grants and manages accounts; viewer "
        "only reads; hook only posts a coding agent's hook events (signoff install "
        "claude-code --http makes one) (default: approver)",
    )
    remove = users_sub.add_parser(
        "remove",
        help="delete an account (its sessions end)",
        description="Delete an account: its token stops working and its sessions end.",
        epilog="example:\n  signoff users remove alice",
        formatter_class=HelpFormatter,
    )
    _common(remove)
    remove.add_argument("name", help="the account to delete")
    lst = users_sub.add_parser(
        "list",
        help="list accounts",
        description="List the accounts and their roles (never their tokens).",
        epilog="example:\n  signoff users list",
        formatter_class=HelpFormatter,
    )
    _common(lst)
    users.set_defaults(func=cmd_users, users_command="list", db=None, workspace=".")


__all__ = ["check_bind", "is_loopback", "register"]
