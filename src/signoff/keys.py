"""Secret keys, kept outside the store and the workspace.

Whoever can read a key can forge what it protects, so no key lives where the agent's tools
reach: not in the database, not under the workspace. The keys come from, first found:

    $SIGNOFF_KEY        one or more secrets, ``[KID=]HEX`` separated by commas, the first
                        is current (servers: every machine sharing a PostgreSQL store sets
                        the same value)
    $SIGNOFF_KEY_FILE   a key file (servers: a mounted secret)
    <config>/keys.json  the default key file, created 0600 on first use; <config> is
                        $SIGNOFF_CONFIG_DIR, else the user settings directory
                        ($XDG_CONFIG_HOME/signoff or ~/.config/signoff)

A key file holds master secrets by key id, and which one is current::

    {"v": 1, "current": "k3f9a…", "keys": {"k3f9a…": "<64 hex>", …}, "legacy": {…}}

Each purpose gets its own key derived from a master (HMAC(master, "signoff/<purpose>")):
``binding`` (a request's binding), ``decision`` (a decision's record), ``grant`` (a
remembered approval), ``audit`` (audit
entries and the anchor of the chain's head) and ``session`` (web sessions). Everything the
store keeps names its key id (``KID:HEX``), never the key, so after `signoff keys rotate`
new records use the new id and old ones still verify. ``legacy`` holds binding keys moved
out of the databases of older signoff versions (id ``L…``), used only to verify requests
those versions created; ``stores`` records, for each store location this file has served,
which legacy key (if any) it came with, so that a key planted later in a store's table is
never taken for one.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import stat
from collections.abc import Iterator, Mapping

from .digests import compare_digest, hmac_sha256, hmac_sha256_hex, sha256_hex
from .exceptions import ConfigurationError, IntegrityError
from .plainpath import joined

TYPE_CHECKING = False  # not typing's: see signoff/__init__.py

if TYPE_CHECKING:
    from pathlib import Path

SECRET_ENV = ("SIGNOFF_KEY", "SIGNOFF_KEY_FILE")  # never passed on to the agent's commands
PURPOSES = ("binding", "decision", "grant", "audit", "session")
KEY_FILE = "keys.json"
_KID = re.compile(r"^[A-Za-z0-9_-]{1,32}$")
_HEX = re.compile(r"^(?:[0-9a-f]{2}){16,}$")


class Keys:
    """Master secrets by key id, one of them current; derives a key per purpose."""

    def __init__(
        self,
        current: str,
        masters: Mapping[str, bytes],
        legacy: Mapping[str, bytes] | None = None,
        source: str = "keys",
        stores: Mapping[str, str | None] | None = None,
    ) -> None:
        if current not in masters:
            raise ConfigurationError(f"{source}: the current key id {current!r} has no key")
        self.current = current
        self.masters = dict(masters)
        self.legacy = dict(legacy or {})
        self.stores = dict(stores or {})  # store location -> its legacy key id (or None)
        self.source = source
        self.store_legacy_id: str | None = None  # the legacy key of the store using these
        self._derived: dict[tuple[str, str], bytes] = {}

    def for_store(self, legacy_id: str | None) -> Keys:
        """These keys, for a store whose older requests were bound with `legacy_id`."""
        copy = Keys(self.current, self.masters, self.legacy, self.source, self.stores)
        copy.store_legacy_id = legacy_id
        return copy

    @classmethod
    def generate(cls, source: str = "generated") -> Keys:
        """A fresh in-memory key (the memory store's: nothing outlives the process)."""
        kid = new_kid()
        return cls(kid, {kid: _secret()}, source=source)

    def key(self, purpose: str, kid: str | None = None) -> bytes:
        """The key for `purpose` under `kid` (default: the current one)."""
        kid = self.current if kid is None else kid
        found = self._derived.get((purpose, kid))
        if found is None:
            master = self.masters.get(kid)
            if master is None:
                raise IntegrityError(
                    f"made with key id {kid!r}, which {self.source} does "
                    "not hold (a forged record, or a key that was removed)"
                )
            found = hmac_sha256(master, f"signoff/{purpose}".encode())
            self._derived[(purpose, kid)] = found
        return found

    def mac(self, purpose: str, message: str, kid: str | None = None) -> str:
        """``KID:HEX``, the HMAC-SHA256 of `message` under the purpose's key."""
        kid = self.current if kid is None else kid
        tag = hmac_sha256_hex(self.key(purpose, kid), message.encode("utf-8"))
        return f"{kid}:{tag}"

    def check(self, purpose: str, message: str, tag: object) -> bool:
        """Whether `tag` is a `mac` of `message` under any key id this ring holds."""
        if not isinstance(tag, str) or ":" not in tag:
            return False
        kid = tag.split(":", 1)[0]
        if kid not in self.masters:
            return False
        return compare_digest(self.mac(purpose, message, kid), tag)

    def legacy_key(self, kid: str) -> bytes | None:
        return self.legacy.get(kid)

    def __repr__(self) -> str:  # never the material
        return f"Keys({self.source}, current={self.current!r}, ids={sorted(self.masters)})"


def new_kid() -> str:
    return "k" + os.urandom(4).hex()  # secrets.token_hex(4)


def _secret() -> bytes:
    """A new master secret: `secrets.token_bytes(32)`, which is `os.urandom` (secrets and
    tempfile are imported where a key is written, not by every process that reads one)."""
    return os.urandom(32)


def legacy_kid(key: bytes) -> str:
    """A legacy key's id: its fingerprint (the same key moved twice gets one id)."""
    return "L" + sha256_hex(b"signoff/legacy-id" + key)[:8]


# --------------------------------------------------------------------------- where


def config_dir() -> Path:
    """$SIGNOFF_CONFIG_DIR, else the directory of the user settings file."""
    from pathlib import Path

    return Path(config_folder())


def config_folder() -> str:
    """`config_dir()` as a string (pathlib is not imported by a hook process)."""
    env = os.environ.get("SIGNOFF_CONFIG_DIR")
    if env:
        return joined(env)
    from .settings import user_settings_file

    return os.path.dirname(user_settings_file())


def key_file_path() -> Path:
    from pathlib import Path

    return Path(key_file())


def key_file() -> str:
    env = os.environ.get("SIGNOFF_KEY_FILE")
    return joined(env) if env else joined(config_folder(), KEY_FILE)


# --------------------------------------------------------------------------- parsing


def parse_key_file(text: str, source: str) -> Keys:
    try:
        doc = json.loads(text)
    except ValueError as exc:
        raise ConfigurationError(f"{source}: not a key file (bad JSON: {exc})") from exc
    if not isinstance(doc, dict) or doc.get("v") != 1:
        raise ConfigurationError(f"{source}: not a key file (expected an object with v=1)")
    masters = _key_table(doc.get("keys"), source, "keys")
    legacy = _key_table(doc.get("legacy", {}), source, "legacy")
    current = doc.get("current")
    if not isinstance(current, str) or current not in masters:
        raise ConfigurationError(
            f"{source}: 'current' must name one of its keys "
            f"({', '.join(sorted(masters)) or 'none'})"
        )
    stores = doc.get("stores", {})
    if not isinstance(stores, dict) or not all(
        isinstance(v, str | None) and (v is None or v in legacy) for v in stores.values()
    ):
        raise ConfigurationError(
            f"{source}: 'stores' must map store locations to legacy key ids (or null)"
        )
    return Keys(current, masters, legacy, source, stores)


def _key_table(value: object, source: str, name: str) -> dict[str, bytes]:
    if not isinstance(value, dict):
        raise ConfigurationError(f"{source}: '{name}' must be an object of key id -> hex")
    table: dict[str, bytes] = {}
    for kid, hexkey in value.items():
        if not _KID.match(kid) or not isinstance(hexkey, str) or not _HEX.match(hexkey):
            raise ConfigurationError(
                f"{source}: {name}.{kid}: a key id is 1-32 letters, "
                "digits, - or _, and a key at least 32 hex digits"
            )
        table[kid] = bytes.fromhex(hexkey)
    return table


def parse_env_keys(value: str) -> Keys:
    """$SIGNOFF_KEY: ``[KID=]HEX[,[KID=]HEX…]``, the first is current."""
    masters: dict[str, bytes] = {}
    order: list[str] = []
    for n, part in enumerate(p.strip() for p in value.split(",")):
        kid, sep, hexkey = part.rpartition("=")
        hexkey = hexkey.strip().lower()
        if not _HEX.match(hexkey) or (sep and not _KID.match(kid.strip())):
            raise ConfigurationError(
                f"$SIGNOFF_KEY: key {n + 1} must be [KID=]HEX with at "
                "least 32 hex digits (e.g. from `openssl rand -hex 32`)"
            )
        key = bytes.fromhex(hexkey)
        kid = kid.strip() if sep else "e" + sha256_hex(b"signoff/env-id" + key)[:8]
        masters[kid] = key
        order.append(kid)
    return Keys(order[0], masters, source="$SIGNOFF_KEY")


def _dump(keys: Keys) -> str:
    doc = {
        "v": 1,
        "current": keys.current,
        "keys": {k: v.hex() for k, v in keys.masters.items()},
        "legacy": {k: v.hex() for k, v in keys.legacy.items()},
        "stores": keys.stores,
    }
    return json.dumps(doc, indent=2, sort_keys=True) + "\n"


# --------------------------------------------------------------------------- files


def load_keys(*, create: bool = True) -> Keys:
    """The keys named by the environment, else the key file (created on first use)."""
    env = os.environ.get("SIGNOFF_KEY")
    if env:
        return parse_env_keys(env)
    path = key_file()
    try:
        return _read(path)
    except FileNotFoundError:
        if os.environ.get("SIGNOFF_KEY_FILE"):
            raise ConfigurationError(
                f"key file {path} does not exist ($SIGNOFF_KEY_FILE names a file that "
                "signoff does not create)"
            ) from None
        if not create:
            raise MissingKeyFile(path) from None
    return _create(path)


class MissingKeyFile(ConfigurationError):
    """The key file does not exist, and was not to be made (see `load_keys`)."""

    def __init__(self, path: str) -> None:
        super().__init__(f"key file {path} does not exist")
        self.path = f"key file {path}"


def _read(path: str | Path) -> Keys:
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise ConfigurationError(f"key file {path} is not a regular file")
        if mode & 0o077:
            raise ConfigurationError(
                f"key file {path} is readable by others (mode {stat.S_IMODE(mode):o}); "
                f"make it private: chmod 600 {path}"
            )
        with os.fdopen(fd, encoding="utf-8") as handle:
            fd = -1
            return parse_key_file(handle.read(), f"key file {path}")
    finally:
        if fd >= 0:
            os.close(fd)


def _create(path: str | Path) -> Keys:
    """A new key file, race-safe: written whole under a temporary name, then linked into
    place (which fails if another process got there first: then its file is the one)."""
    kid = new_kid()
    keys = Keys(kid, {kid: _secret()}, source=f"key file {path}")
    try:
        os.makedirs(os.path.dirname(path) or ".", mode=0o700, exist_ok=True)
        _write_new(path, _dump(keys))
    except FileExistsError:
        return _read(path)
    except OSError as exc:
        raise ConfigurationError(
            f"cannot create the key file {path}: {exc.strerror or exc}"
        ) from exc
    return keys


def _write_new(path: str | Path, text: str, *, replace: bool = False) -> None:
    import tempfile

    fd, tmp = tempfile.mkstemp(prefix=".keys-", dir=os.path.dirname(path) or ".")  # mode 0600
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        if replace:
            os.replace(tmp, path)
        else:
            os.link(tmp, path)  # FileExistsError when another process won
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)


@contextlib.contextmanager
def _updating(path: Path) -> Iterator[None]:
    """Serialise read-modify-write of a key file between processes (within a deadline:
    see signoff.waits)."""
    from .waits import FileLock

    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    lock = FileLock(f"{path}.lock", "the key file's lock", 0o600)
    try:
        lock.acquire()
        yield
    finally:
        lock.close()


def _writable_file() -> Path:
    if os.environ.get("SIGNOFF_KEY"):
        raise ConfigurationError(
            "the keys come from $SIGNOFF_KEY: change that value (put the "
            "new key first, keep the old ones after it)"
        )
    return key_file_path()


def rotate() -> Keys:
    """A new current key; the old ones stay so that what they made still verifies."""
    path = _writable_file()
    with _updating(path):
        try:
            keys = _read(path)
        except FileNotFoundError:
            return _create(path)
        kid = new_kid()
        masters = {**keys.masters, kid: _secret()}
        rotated = Keys(kid, masters, keys.legacy, keys.source, keys.stores)
        _write_new(path, _dump(rotated), replace=True)
    return rotated


def register_store(location: str, old_key: bytes | None) -> tuple[Keys, str | None]:
    """The first time this key file serves the store at `location`, remember whether the
    store came with a binding key of an older signoff (`old_key`, moved here as a legacy
    key). Later a key found in that store is ignored: it can only have been planted there.
    Returns the keys and the store's legacy key id."""
    path = key_file_path()
    with _updating(path):
        keys = load_keys()
        if location in keys.stores:
            return keys, keys.stores[location]
        kid = legacy_kid(old_key) if old_key is not None else None
        legacy = {**keys.legacy, kid: old_key} if kid is not None and old_key else keys.legacy
        keys = Keys(keys.current, keys.masters, legacy, keys.source, {**keys.stores, location: kid})
        _write_new(path, _dump(keys), replace=True)
    return keys, kid


__all__ = [
    "PURPOSES",
    "Keys",
    "MissingKeyFile",
    "config_dir",
    "key_file_path",
    "load_keys",
    "register_store",
    "rotate",
]
