"""Who decides at the command line, and on what authority.

A name on the command line is not an identity. The deciding commands (`approve`,
`reject`, `edit`, `skip`, `answer`, `resolve`, `revert`, `grant add|revoke`) resolve
their decider here:

- Without `--as`: the OS user that runs the command, by its uid (not `$USER`, which
  anyone can set), with the roles `[approvers]` in the settings gives that name.
- `--as NAME` (or `$SIGNOFF_ACTOR` naming someone else) needs NAME's credentials: the
  token of NAME's account (`signoff users add`), read from `--token-file PATH`, from
  `$SIGNOFF_TOKEN`, or typed at a hidden prompt when stdin is a terminal. The decider is
  then NAME with the account's roles; a viewer's token decides nothing.
- Or the OS user is the store's **local admin**: the owner of the SQLite store file (who
  can read and write it anyway). It may act for NAME without NAME's token, with the admin
  role, and is recorded as `local-admin:USER as NAME` in the decision and the audit log,
  never as NAME alone. A PostgreSQL store has no local admin: `--as` needs a token.

Anything else is refused before the store is touched: nothing is decided.
"""

from __future__ import annotations

import contextlib
import getpass
import os
import pwd
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from .accounts import Accounts, valid_name
from .exceptions import InvalidInput, NotAuthorized

How = Literal["os-user", "token", "local-admin"]
TOKEN_ENV = "SIGNOFF_TOKEN"
ACTOR_ENV = "SIGNOFF_ACTOR"
LOCAL_ADMIN_ROLES = ("admin", "approver")


@dataclass(frozen=True, slots=True)
class Decider:
    actor: str  # as recorded in the decision and the audit log
    roles: tuple[str, ...]
    how: How


def os_user() -> str:
    """The name of the effective uid; `$USER` and `$LOGNAME` are not consulted."""
    uid = os.geteuid()
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:  # a uid without a passwd entry (some containers)
        return f"uid:{uid}"


def sqlite_file(url: str) -> Path | None:
    """The file of a SQLite store URL or path; None for PostgreSQL and memory stores."""
    if url in ("memory:", "memory://", ":memory:") or url.startswith(
        ("postgresql://", "postgres://")
    ):
        return None
    if url.startswith("sqlite:"):
        return Path(url[len("sqlite:///") :]) if url.startswith("sqlite:///") else None
    return None if "://" in url else Path(url)


def local_admin(url: str) -> str | None:
    """The OS user's name if it owns the store's file, else None."""
    path = sqlite_file(url)
    if path is None:
        return None
    try:
        owner = path.resolve().stat().st_uid
    except OSError:
        return None
    return os_user() if owner == os.geteuid() else None


def read_token(token_file: str | None, *, name: str, interactive: bool) -> str | None:
    """The token given for `name`: --token-file, else $SIGNOFF_TOKEN, else a hidden prompt
    when `interactive`; None when there is none."""
    if token_file:
        try:
            text = Path(token_file).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise InvalidInput(f"--token-file {token_file}: cannot read it ({exc})") from exc
        token = text.strip()
        if not token:
            raise InvalidInput(f"--token-file {token_file}: the file is empty")
        return token
    token = os.environ.get(TOKEN_ENV, "").strip()
    if token:
        return token
    if interactive:
        with contextlib.suppress(EOFError):
            typed = getpass.getpass(f"Token for {name} (from `signoff users add`): ").strip()
            return typed or None
    return None


def _stdin_is_terminal() -> bool:
    try:
        return sys.stdin is not None and sys.stdin.isatty()
    except (ValueError, OSError):
        return False


def resolve_decider(
    url: str,
    claimed: str | None,
    *,
    token_file: str | None = None,
    settings_roles: dict[str, list[str]] | None = None,
    need_admin: bool = False,
    interactive: bool | None = None,
) -> Decider:
    """Who decides, given the store `url`, the name claimed with --as (or None), and the
    roles the settings' `[approvers]` table gives local names. `need_admin`: a token must
    be an admin's (grants)."""
    me = os_user()
    table = settings_roles or {}
    name = claimed if claimed is not None else os.environ.get(ACTOR_ENV) or None
    if name is not None and not valid_name(name):
        raise InvalidInput(
            f"--as {name!r}: not an account name (letters, digits, . _ @ -, "
            "at most 64, starting with a letter or digit); nothing was decided"
        )
    if name is None or (name == me and token_file is None and not os.environ.get(TOKEN_ENV)):
        return Decider(me, tuple(table.get(me, ())), "os-user")
    ask = _stdin_is_terminal() if interactive is None else interactive
    admin = local_admin(url)
    token = read_token(token_file, name=name, interactive=ask and admin is None)
    if token is not None:
        return _by_token(url, name, token, need_admin=need_admin)
    if admin is not None:
        return Decider(f"local-admin:{admin} as {name}", LOCAL_ADMIN_ROLES, "local-admin")
    raise NotAuthorized(
        f"--as {name}: {me} may not decide as {name} without {name}'s credentials; give "
        f"{name}'s token with --token-file FILE or ${TOKEN_ENV} (or type it at the prompt "
        "on a terminal), or run it as the store's local admin (the owner of the store "
        "file). Nothing was decided."
    )


def _by_token(url: str, name: str, token: str, *, need_admin: bool) -> Decider:
    accounts = Accounts(url)
    try:
        account = accounts.authenticate(token)
    finally:
        accounts.close()
    if account is None:
        raise NotAuthorized(
            f"--as {name}: the token is not valid (no account has it); nothing was decided"
        )
    if account.name != name:
        raise NotAuthorized(
            f"--as {name}: the token is {account.name}'s, not {name}'s; nothing was decided"
        )
    if not account.can_decide:
        raise NotAuthorized(f"--as {name}: {name} is a {account.role} and may not decide")
    if need_admin and not account.is_admin:
        raise NotAuthorized(f"--as {name}: only an admin may do this; {name} is an {account.role}")
    return Decider(account.name, account.roles, "token")


__all__ = [
    "ACTOR_ENV",
    "TOKEN_ENV",
    "Decider",
    "local_admin",
    "os_user",
    "read_token",
    "resolve_decider",
]
