"""Approver accounts for the web inbox and the HTTP API.

Accounts live in their own tables next to the store (same database URL, own connection):

    signoff_accounts(name PRIMARY KEY, role, token_hash, salt, created_at)
    signoff_web_meta(key PRIMARY KEY, value)      kept for older databases: their session
                                                  secret is erased (see signoff.keys)
    signoff_web_sessions(id PRIMARY KEY, name, expires_at)   signed-in web sessions: a
                                                  cookie names one (by a hash of its nonce);
                                                  signing out deletes it, so the cookie and
                                                  its CSRF token are worthless from then on

A token is 32 random bytes shown once (`signoff users add`); only a salted SHA-256 of it is
kept (a random token needs no slow hash). The token starts with the account name so that a
lookup is one row: ``so_<name>_<secret>``. Roles: ``viewer`` (read), ``approver`` (decide),
``admin`` (decide, revoke grants, manage users), and ``hook``: a coding agent's hook, whose
token posts hook events (`POST /hooks/claude-code`) and nothing else. A hook's token lives
in the agent's environment, so it must open nothing a person's token opens: it cannot sign
in, read the API or decide, and no other token posts hook events. A hook is no person:
it does not end local mode (see `people`).
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, get_args

from .exceptions import (
    ConfigurationError,
    InvalidInput,
    NotFound,
    SignoffError,
    StoreUnavailable,
)
from .keys import Keys, load_keys
from .waits import lock_wait

Role = Literal["viewer", "approver", "admin", "hook"]
ROLES: tuple[Role, ...] = get_args(Role)
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$")
_TOKEN = re.compile(r"^so_([A-Za-z0-9][A-Za-z0-9._@-]{0,63})_([0-9a-f]{64})$")

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS signoff_accounts (name TEXT PRIMARY KEY, role TEXT NOT NULL, "
    "token_hash TEXT NOT NULL, salt TEXT NOT NULL, created_at DOUBLE PRECISION NOT NULL)",
    "CREATE TABLE IF NOT EXISTS signoff_web_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS signoff_web_sessions (id TEXT PRIMARY KEY, name TEXT NOT NULL, "
    "expires_at DOUBLE PRECISION NOT NULL)",
)


def valid_name(name: str) -> bool:
    """Whether `name` is an account name (letters, digits, `. _ @ -`, at most 64)."""
    return bool(_NAME.fullmatch(name))


@dataclass(frozen=True, slots=True)
class Account:
    name: str
    role: Role
    created_at: float = 0.0

    @property
    def roles(self) -> tuple[str, ...]:
        """Roles as `approvals.decide` and request `approvers` (`role:NAME`) see them."""
        return {
            "viewer": ("viewer",),
            "approver": ("approver",),
            "admin": ("admin", "approver"),
            "hook": ("hook",),
        }[self.role]

    @property
    def is_hook(self) -> bool:
        """A coding agent's hook: posts hook events, and nothing a person does."""
        return self.role == "hook"

    @property
    def can_decide(self) -> bool:
        return self.role in ("approver", "admin")

    @property
    def is_admin(self) -> bool:
        return self.role == "admin"

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "role": self.role, "created_at": self.created_at}


def _role(value: str) -> Role:
    for role in ROLES:
        if value == role:
            return role
    return "viewer"  # an unknown stored role grants nothing


def _session_id(nonce: str) -> str:
    return hashlib.sha256(f"session:{nonce}".encode()).hexdigest()


def _hash(salt: str, secret: str) -> str:
    return hashlib.sha256(f"{salt}:{secret}".encode()).hexdigest()


# An account row is sealed with the key (kept outside the database, see signoff.keys):
# `token_hash` holds "v2:DIGEST:KID:MAC", the MAC over name, role, salt and digest. Whoever
# can write the database but not read the key cannot add an account, change a role or
# move a token to another name; a row without a valid seal is no account at all.
_SEALED = "v2"


def _seal_message(name: str, role: str, salt: str, digest: str) -> str:
    return f"{name}\n{role}\n{salt}\n{digest}"


def _seal(name: str, role: str, salt: str, digest: str) -> str:
    mac = load_keys().mac("account", _seal_message(name, role, salt, digest))
    return f"{_SEALED}:{digest}:{mac}"


def _keys() -> Keys | None:
    try:
        return load_keys()
    except SignoffError:
        return None


def _unseal(name: str, row: tuple[Any, ...], keys: Keys | None = None) -> str | None:
    """The token digest of a row whose seal verifies, else None (`keys` loaded once by a
    caller that checks many rows; else read here)."""
    role, sealed, salt = row[0], row[1], row[2]
    if not (isinstance(sealed, str) and isinstance(role, str) and isinstance(salt, str)):
        return None
    version, _, rest = sealed.partition(":")
    digest, _, mac = rest.partition(":")
    if version != _SEALED or not digest or role not in ROLES:
        return None
    try:
        keys = keys or load_keys()
        ok = keys.check("account", _seal_message(name, role, salt, digest), mac)
    except SignoffError:
        return None
    return digest if ok else None


class Accounts:
    """Accounts over `memory:`, a SQLite path (or sqlite:/// URL) or postgresql://."""

    def __init__(self, url: str | Path) -> None:
        target = str(url)
        self._lock = threading.RLock()
        self._memory: dict[str, tuple[str, str, str, float]] | None = None
        self._meta: dict[str, str] = {}
        self._sessions: dict[str, tuple[str, float]] = {}  # memory: id -> (name, expires)
        self._kind: Literal["memory", "sqlite", "postgres"]
        self._conn: Any = None
        self._url = target
        self._in_tx = False
        if target in ("memory:", "memory://", ":memory:"):
            self._kind, self._memory = "memory", {}
        elif target.startswith(("postgresql://", "postgres://")):
            self._kind = "postgres"
            self._conn = self._connect()
        else:
            path = target[len("sqlite:///") :] if target.startswith("sqlite:///") else target
            self._kind = "sqlite"
            Path(path).parent.mkdir(parents=True, exist_ok=True)
            wait = lock_wait()  # each wait on a lock ends at a deadline (signoff.waits)
            self._conn = sqlite3.connect(
                path, timeout=wait, isolation_level=None, check_same_thread=False
            )
            self._conn.execute(f"PRAGMA busy_timeout = {int(wait * 1000)}")
            self._conn.execute("PRAGMA journal_mode = WAL")
        if self._conn is not None:
            for statement in _SCHEMA:
                self._sql(statement)

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    # ------------------------------------------------------------------ sql

    def _connect(self) -> Any:
        import psycopg

        from .store.postgres import session

        try:  # each wait on a lock ends at a deadline, as the store's (signoff.waits)
            return psycopg.connect(
                self._url, connect_timeout=5, **session(psycopg, self._url, lock_wait())
            )
        except psycopg.Error as exc:
            raise StoreUnavailable(
                f"accounts: cannot reach PostgreSQL: {' '.join(str(exc).split())}"
            ) from None

    def _pg(self) -> Any:
        """The PostgreSQL connection, made again if the server dropped the last one (a
        restart): the first use after it failed (StoreUnavailable), this one works."""
        if self._conn.broken or self._conn.closed:
            self._conn.close()
            self._conn = self._connect()
        return self._conn

    def _sql(self, statement: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        with self._lock:
            if self._conn is None:
                raise ConfigurationError("accounts: the connection is closed")
            if self._kind == "postgres":
                return self._pg_sql(statement.replace("?", "%s"), params)
            return list(self._conn.execute(statement, params).fetchall())

    def _pg_sql(self, statement: str, params: tuple[Any, ...]) -> list[tuple[Any, ...]]:
        import psycopg

        # a read outside a transaction is tried once more on a new connection when the
        # server dropped the old one (a restart); a write's fate is unknown: not retried
        again = not self._in_tx and statement.startswith("SELECT")
        while True:
            try:
                cur = self._pg().execute(statement, params)
                return list(cur.fetchall()) if cur.description else []
            except (psycopg.OperationalError, psycopg.InterfaceError) as exc:
                if not self._conn.broken and not self._conn.closed:
                    raise  # the statement failed, not the connection
                if again:
                    again = False
                    continue
                raise StoreUnavailable(
                    f"accounts: PostgreSQL: {' '.join(str(exc).split())}"
                ) from None

    @contextmanager
    def _tx(self) -> Iterator[None]:
        with self._lock:
            if self._kind == "postgres":
                import psycopg

                try:
                    with self._pg().transaction():
                        self._in_tx = True
                        try:
                            yield
                        finally:
                            self._in_tx = False
                except (psycopg.OperationalError, psycopg.InterfaceError) as exc:
                    if not self._conn.broken and not self._conn.closed:
                        raise
                    raise StoreUnavailable(
                        f"accounts: PostgreSQL: {' '.join(str(exc).split())}"
                    ) from None
            elif self._kind == "sqlite":
                self._conn.execute("BEGIN IMMEDIATE")
                try:
                    yield
                except BaseException:
                    self._conn.execute("ROLLBACK")
                    raise
                self._conn.execute("COMMIT")
            else:
                yield

    # ------------------------------------------------------------------ accounts

    def add(self, name: str, role: str, *, token: str | None = None) -> str:
        """Create an account; returns its token (shown once, never stored). `token`: one
        made before (`so_<name>_<64 hex>`), registered in this store too (a hook's token,
        kept on the agent's machine, answered by every store its hook posts to)."""
        if not _NAME.match(name):
            raise InvalidInput(
                f"account name {name!r}: use letters, digits, . _ @ - "
                "(at most 64, starting with a letter or digit)"
            )
        if role not in ROLES:
            raise InvalidInput(f"role {role!r}: expected one of {', '.join(ROLES)}")
        secret = secrets.token_hex(32)  # hex: no "_", so the name parses back
        if token is not None:
            match = _TOKEN.fullmatch(token)
            if match is None or match.group(1) != name:
                raise InvalidInput(
                    f"the token given for account {name!r} is not one of its tokens "
                    f"(so_{name}_ followed by 64 hex digits)"
                )
            secret = match.group(2)
        salt = secrets.token_hex(16)
        row = (name, role, _seal(name, role, salt, _hash(salt, secret)), salt, time.time())
        with self._tx():
            if self.get(name) is not None:
                raise InvalidInput(f"account {name!r} already exists (remove it first)")
            if self._memory is not None:
                self._memory[name] = row[1:]
            else:
                self._sql(
                    "INSERT INTO signoff_accounts (name, role, token_hash, salt, "
                    "created_at) VALUES (?, ?, ?, ?, ?)",
                    row,
                )
        return f"so_{name}_{secret}"

    def remove(self, name: str) -> None:
        with self._tx():
            if self._row(name) is None:  # sealed or not: a planted row can be removed too
                raise NotFound(f"no account named {name!r}")
            if self._memory is not None:
                del self._memory[name]
                for sid in [k for k, v in self._sessions.items() if v[0] == name]:
                    del self._sessions[sid]
            else:
                self._sql("DELETE FROM signoff_accounts WHERE name = ?", (name,))
                self._sql("DELETE FROM signoff_web_sessions WHERE name = ?", (name,))

    def get(self, name: str) -> Account | None:
        """The account, if its row is sealed with the key (a row written into the database
        by anyone else is not an account, and a role changed there is no role)."""
        row = self._row(name)
        if row is None or _unseal(name, row) is None:
            return None
        return Account(name, _role(row[0]), row[3])

    def _row(self, name: str) -> tuple[Any, ...] | None:
        if self._memory is not None:
            return self._memory.get(name)
        rows = self._sql(
            "SELECT role, token_hash, salt, created_at FROM signoff_accounts WHERE name = ?",
            (name,),
        )
        return rows[0] if rows else None

    def list(self) -> list[Account]:
        """Accounts whose rows are sealed with the key (see `unsealed` for the others)."""
        keys = _keys()
        return [Account(n, _role(r[0]), r[3]) for n, r in self._rows() if _unseal(n, r, keys)]

    def unsealed(self) -> tuple[str, ...]:
        """Names of rows that are no account: written without the key (or by an older
        signoff, before accounts were sealed: remove and add them again)."""
        keys = _keys()
        return tuple(n for n, r in self._rows() if _unseal(n, r, keys) is None)

    def _rows(self) -> tuple[tuple[str, tuple[Any, ...]], ...]:
        if self._memory is not None:
            return tuple(sorted(self._memory.items()))
        rows = self._sql(
            "SELECT name, role, token_hash, salt, created_at FROM signoff_accounts ORDER BY name"
        )
        return tuple((r[0], tuple(r[1:])) for r in rows)

    def count(self) -> int:
        if self._memory is not None:
            return len(self._memory)
        return int(self._sql("SELECT COUNT(*) FROM signoff_accounts")[0][0])

    def people(self) -> int:
        """Rows that are not hooks: people, or rows nobody sealed (a planted row, of any
        role but hook, counts: it ends local mode, which fails closed). While there are
        none, the web inbox runs in local mode."""
        if self._memory is not None:
            return sum(1 for row in self._memory.values() if row[0] != "hook")
        rows = self._sql("SELECT COUNT(*) FROM signoff_accounts WHERE role <> 'hook'")
        return int(rows[0][0])

    def authenticate(self, token: str) -> Account | None:
        """The account a token belongs to, or None (constant-time comparison)."""
        if not token.startswith("so_") or token.count("_") < 2:
            return None
        name, _, secret = token[3:].rpartition("_")
        row = self._row(name) if _NAME.match(name) else None
        if row is None:
            _hash("0" * 32, secret)  # same work whether or not the name exists
            return None
        role, _sealed, salt, created = row
        expected = _unseal(name, row)
        if expected is None or not isinstance(salt, str):
            _hash("0" * 32, secret)
            return None
        if not hmac.compare_digest(_hash(salt, secret), expected):
            return None
        return Account(name, _role(role), created)

    # ------------------------------------------------------------------ web sessions

    def open_session(self, name: str, nonce: str, expires_at: float) -> None:
        """A signed-in session of `name`, named by its cookie's nonce (kept hashed: the
        database alone opens no session; the cookie is signed with a key kept outside it).
        Sessions that ran out are swept here."""
        sid, now = _session_id(nonce), time.time()
        with self._tx():
            if self._memory is not None:
                for old in [k for k, v in self._sessions.items() if v[1] <= now]:
                    del self._sessions[old]
                self._sessions[sid] = (name, expires_at)
                return
            self._sql("DELETE FROM signoff_web_sessions WHERE expires_at <= ?", (now,))
            self._sql(
                "INSERT INTO signoff_web_sessions (id, name, expires_at) VALUES (?, ?, ?)",
                (sid, name, expires_at),
            )

    def session_open(self, name: str, nonce: str) -> bool:
        """Whether `name`'s session with this nonce is signed in (not ended, not run out)."""
        sid = _session_id(nonce)
        if self._memory is not None:
            found = self._sessions.get(sid)
            return found is not None and found[0] == name and found[1] > time.time()
        rows = self._sql(
            "SELECT 1 FROM signoff_web_sessions WHERE id = ? AND name = ? AND expires_at > ?",
            (sid, name, time.time()),
        )
        return bool(rows)

    def end_session(self, nonce: str) -> None:
        """Sign a session out: its cookie, and the CSRF token made from it, open nothing."""
        sid = _session_id(nonce)
        if self._memory is not None:
            self._sessions.pop(sid, None)
        else:
            self._sql("DELETE FROM signoff_web_sessions WHERE id = ?", (sid,))

    # ------------------------------------------------------------------ secrets

    def secret(self, key: str = "session_secret") -> bytes:
        """The key that signs web sessions. It lives outside the database (see
        signoff.keys): whoever reads the database must not be able to forge a session. A
        secret an older signoff kept in the database is erased on first use."""
        if self._conn is not None:
            with self._tx():
                found = self._sql("SELECT 1 FROM signoff_web_meta WHERE key = ?", (key,))
                if found:
                    if self._kind == "sqlite":
                        self._sql("PRAGMA secure_delete = ON")
                    self._sql("DELETE FROM signoff_web_meta WHERE key = ?", (key,))
            if found and self._kind == "sqlite":
                self._sql("VACUUM")  # no copy left in a free page or the log
                self._sql("PRAGMA wal_checkpoint(TRUNCATE)")
        purpose = "session" if key == "session_secret" else key
        return load_keys().key(purpose)


__all__ = ["ROLES", "Account", "Accounts", "Role", "valid_name"]
