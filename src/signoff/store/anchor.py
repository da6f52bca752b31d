"""The audit chain's head, anchored outside the store.

Whoever can write the database can cut the log's tail and move its end mark; no amount of
hashing inside the database shows that. So the head is also written to a small file next
to the key file (``<config>/anchors/<location hash>.json``, 0600), MACed with the audit key:
``{"location", "first", "seq", "hash", "mac"}`` where ``first`` is the hash of entry 1 (which
chain this is) and ``(seq, hash)`` an entry the chain must still hold. `verify_chain` checks
the chain against it; `signoff audit verify` moves it forward after a good check.

An anchor only moves forward, and never onto another chain: when the store at a location
was replaced (a different entry 1), the old anchor stays and verify says so until a person
resets it (`signoff keys reanchor`). One file per store location per machine:
with PostgreSQL each machine anchors what it wrote or verified.
"""

from __future__ import annotations

import contextlib
import json
import os

from ..digests import sha256_hex
from ..exceptions import IntegrityError
from ..keys import Keys, config_folder
from ..records import record
from ..waits import FileLock

ANCHOR_EVERY = 64  # a long-lived store anchors after this many appends (and on close)
ANCHOR_WAIT_S = 1.0  # the most a best-effort anchor (on close, every 64) waits for its lock


@record(frozen=True, slots=True)
class Anchor:
    first: str  # hash of entry 1
    seq: int
    hash: str


class AnchorKeyLost(IntegrityError):
    """The anchor's MAC names a key id the keys do not hold (lost, or a forged anchor)."""


def anchor_path(location: str) -> str:
    name = sha256_hex(location.encode("utf-8"))[:32]
    return os.path.join(config_folder(), "anchors", f"{name}.json")


def _message(location: str, anchor: Anchor) -> str:
    return json.dumps([location, anchor.first, anchor.seq, anchor.hash], separators=(",", ":"))


def read_anchor(keys: Keys, location: str) -> Anchor | None:
    """The anchor of this location, None if there is none; IntegrityError if it was
    edited (its MAC does not verify)."""
    path = anchor_path(location)
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except FileNotFoundError:
        return None
    try:
        doc = json.loads(text)
        anchor = Anchor(str(doc["first"]), int(doc["seq"]), str(doc["hash"]))
        mac = doc["mac"]
    except (ValueError, KeyError, TypeError) as exc:
        raise IntegrityError(f"the audit anchor {path} does not parse ({exc})") from exc
    kid = mac.split(":", 1)[0] if isinstance(mac, str) else ""
    if doc.get("location") == location and kid and kid not in keys.masters:
        raise AnchorKeyLost(
            f"the audit anchor {path} was made with key id {kid!r}, which {keys.source} "
            "does not hold"
        )
    if doc.get("location") != location or not keys.check("audit", _message(location, anchor), mac):
        raise IntegrityError(
            f"the audit anchor {path} does not verify with the audit key "
            "(edited, or made with a key that is no longer held)"
        )
    return anchor


def _new_private_file(folder: str) -> tuple[int, str]:
    """A new file in `folder` that only this user may read, opened for writing: what
    `tempfile.mkstemp` makes (tempfile, with shutil, would be most of what writing the
    anchor costs a hook process to import)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    for _ in range(100):
        name = os.path.join(folder, f".anchor-{os.urandom(8).hex()}")
        try:
            return os.open(name, flags, 0o600), name
        except FileExistsError:
            continue
    raise FileExistsError(f"no free name for a new anchor file in {folder}")


def write_anchor(
    keys: Keys, location: str, anchor: Anchor, *, reset: bool = False, wait: float | None = None
) -> bool:
    """Move the anchor forward to `anchor` (never back, never onto another chain unless
    `reset`); whether it was written. Another process holding the anchors' lock is waited
    for `wait` seconds at most (default: `waits.lock_wait()`), then LockTimeout."""
    path = anchor_path(location)
    folder = os.path.dirname(path)
    os.makedirs(folder, mode=0o700, exist_ok=True)
    lock = FileLock(os.path.join(folder, ".lock"), "the audit anchors' lock", 0o600)
    try:
        lock.acquire(wait)
        if not reset:
            try:
                old = read_anchor(keys, location)
            except IntegrityError:
                return False  # keep the evidence for verify
            if old is not None and (old.first != anchor.first or old.seq >= anchor.seq):
                return False
        doc = {
            "location": location,
            "first": anchor.first,
            "seq": anchor.seq,
            "hash": anchor.hash,
            "mac": keys.mac("audit", _message(location, anchor)),
        }
        fd, tmp = _new_private_file(folder)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(json.dumps(doc) + "\n")
            os.replace(tmp, path)
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
        return True
    finally:
        lock.close()
