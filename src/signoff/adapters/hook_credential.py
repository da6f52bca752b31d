"""The HTTP hook's own credential, made by `signoff install claude-code --http`.

Claude Code's HTTP hooks send `Authorization: Bearer $SIGNOFF_HOOK_TOKEN`; the server
takes only a hook's token there (an account of role ``hook``, see signoff.accounts), never
a person's. Install makes one per user and machine, `claude-code-hook@HOST`: its token is
kept beside the key file (`hook-token`, 0600, in `$SIGNOFF_CONFIG_DIR` or the user's
config directory, as out of the agent's tools' reach), and registered in the store the
server reads (which keeps only a sealed hash of it). Installing for another store
registers the same token there too, so one `SIGNOFF_HOOK_TOKEN` serves every project of
the user. Uninstall removes the account install made; the token file stays for the other
stores that know it.
"""

from __future__ import annotations

import os
import re
import socket
from pathlib import Path

from ..accounts import Accounts
from ..exceptions import ConfigurationError, InvalidInput
from ..keys import config_dir

TOKEN_FILE = "hook-token"
TOKEN_ENV = "SIGNOFF_HOOK_TOKEN"


def token_path() -> Path:
    """Beside the key file: `$SIGNOFF_CONFIG_DIR`, else the user settings directory."""
    return config_dir() / TOKEN_FILE


def export_line() -> str:
    return f'export {TOKEN_ENV}="$(cat {token_path()})"'


def default_name() -> str:
    host = re.sub(r"[^A-Za-z0-9.-]", "-", socket.gethostname()).strip(".-") or "host"
    return f"claude-code-hook@{host}"[:64]


def _read(path: Path) -> str | None:
    try:
        text = path.read_text("utf-8").strip()
    except FileNotFoundError:
        return None
    if not text:
        raise ConfigurationError(f"{path} is empty: delete it and install again")
    return text


def _write(path: Path, token: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(token + "\n")


def ensure(store_url: str) -> tuple[str, bool]:
    """The hook's account in the store at `store_url`: (its name, whether made now). Its
    token is the one in `token_path()`, made there if missing. Refuses, naming what to do,
    a token file that is not a hook's and a name taken by another token in the store."""
    path = token_path()
    token = _read(path)
    accounts = Accounts(store_url)
    try:
        if token is not None:
            account = accounts.authenticate(token)
            if account is not None and account.is_hook:
                return account.name, False
            if account is not None:
                raise ConfigurationError(
                    f"{path} holds the token of {account.name}, a {account.role}, not a "
                    "hook's: a person's token must not be in the agent's environment. "
                    "Delete the file and install again"
                )
            name = token[3:].rpartition("_")[0] if token.startswith("so_") else ""
        else:
            name = default_name()
        if accounts.get(name) is not None:
            raise ConfigurationError(
                f"the store {store_url} has an account {name!r} with another token than "
                f"{path}: remove it (signoff users remove {name}) and install again"
            )
        try:
            made = accounts.add(name, "hook", token=token)
        except InvalidInput as exc:
            raise ConfigurationError(f"{path}: {exc}; delete the file and install again") from exc
        if token is None:
            _write(path, made)
        return name, True
    finally:
        accounts.close()


def remove(store_url: str, name: str) -> bool:
    """Remove the hook account install made (whether it was there)."""
    accounts = Accounts(store_url)
    try:
        account = accounts.get(name)
        if account is None or not account.is_hook:
            return False
        accounts.remove(name)
        return True
    finally:
        accounts.close()


__all__ = ["TOKEN_ENV", "default_name", "ensure", "export_line", "remove", "token_path"]
