"""The audit hash chain: ``hash = sha256(prev_hash + entry)``, pure functions only.

``entry`` is the canonical JSON text of an event (its sequence number is implied by its
place in the chain). Verification walks the entries in sequence order and compares the
last one with what the store recorded of the chain's end, so it detects an edited, deleted
(anywhere, the tail included), inserted or reordered entry and names the first bad one.

The end is recorded as a head ``(seq, hash)``: PostgreSQL and memory keep it in a row of its
own (on PostgreSQL that row also orders the appends). SQLite marks it on the last entry
itself (migration 0008; the mark moves within the page the append writes anyway), and
keeps a checkpoint ``(seq, hash)`` row that the first entry and every 64th move, so a log
emptied or cut below the checkpoint is caught even though its end mark went with it.

A plain hash chain can be recomputed by anyone who can write the database, so every entry
is also keyed: it carries ``"mac"`` (``KID:HEX``, the HMAC of the entry without it, under the
audit key kept outside the store, see signoff.keys) and a random ``"n"`` that makes each
entry unique, so a copied entry shows too. Entries of an older signoff have no MAC; they are
accepted only before the first keyed one. The head is also anchored outside the store
(store/anchor.py), which catches a cut tail whose end mark was moved.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable

from ..exceptions import InvalidInput
from ..keys import Keys
from ..models import sha256_hex
from .anchor import Anchor

TYPE_CHECKING = False  # not typing's: see signoff/__init__.py

if TYPE_CHECKING:
    from typing import Any

GENESIS_HASH = "0" * 64


def chain_hash(prev_hash: str, entry: str) -> str:
    return sha256_hex(prev_hash + entry)


_ENCODER = json.JSONEncoder(
    sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
)


def keyed_entry(doc: dict[str, Any], keys: Keys) -> str:
    """The entry text of event `doc`, with its nonce and MAC: the canonical JSON of the
    doc with `"mac"`, the MAC being of the canonical JSON of the doc without it."""
    nonce = os.urandom(8).hex()  # what secrets.token_hex(8) is, without its imports
    try:
        before = {k: v for k, v in doc.items() if k < "mac"}
        after = {k: v for k, v in doc.items() if k > "n"}
        if len(before) + len(after) != len(doc) or "n" in doc:  # a key between: the long way
            doc["n"] = nonce
            doc["mac"] = keys.mac("audit", _ENCODER.encode(doc))
            return _ENCODER.encode(doc)
        # The keys sort around "mac" and "n": the text without the MAC is the one with it
        # less `"mac":...,`, so each key is encoded once (an event: actor, data, kind |
        # mac, n | request_id, run_id, ts, v).
        head = _ENCODER.encode(before)[:-1] + ("," if before else "")
        tail = _ENCODER.encode({"n": nonce, **after})[1:]
        mac = keys.mac("audit", head + tail)
        doc["n"], doc["mac"] = nonce, mac
        return f'{head}"mac":{_ENCODER.encode(mac)},{tail}'
    except (TypeError, ValueError) as exc:
        raise InvalidInput(f"event: not JSON ({exc})") from exc


def _entry_problem(
    seq: int, doc: dict[str, Any], keys: Keys, keyed: bool, seen: set[str]
) -> str | None:
    """Why a parsed entry fails the keyed check (None: it passes)."""
    mac = doc.pop("mac", None)
    if mac is None:
        if keyed:
            return f"entry {seq} carries no MAC: it was not written by signoff (forged)"
        return None
    if not keys.check("audit", _ENCODER.encode(doc), mac):
        kid = str(mac).split(":", 1)[0]
        if kid not in keys.masters:
            return (
                f"entry {seq}: its MAC names key id {kid!r}, which {keys.source} does not "
                "hold (forged, or the key was removed)"
            )
        return (
            f"entry {seq}: its MAC does not verify with the audit key (forged or edited, "
            "then re-hashed)"
        )
    nonce = str(doc.get("n"))
    if nonce in seen:
        return f"entry {seq} is a copy of an earlier entry (replayed)"
    seen.add(nonce)
    return None


def verify_chain(
    rows: Iterable[tuple[int, str, str, str, str, str | None]],
    head: tuple[int, str] | None,
    checkpoint: tuple[int, str] | None = None,
    *,
    keys: Keys | None = None,
    anchor: Anchor | None = None,
) -> tuple[bool, int | None, str]:
    """Check (seq, entry, prev_hash, hash, kind, request_id) rows in seq order against the
    recorded head (None: the entries exist but none is marked as the last one), an
    optional checkpoint, an earlier (seq, hash) the chain must still hold, the entries'
    MACs when `keys` are given, and the anchor kept outside the store."""
    expected_seq = 1
    prev = GENESIS_HASH
    keyed = False
    seen: set[str] = set()
    for seq, entry, prev_hash, hash_, kind, request_id in rows:
        if seq != expected_seq:
            if seq > expected_seq:
                return False, expected_seq, f"entry {expected_seq} is missing (next is {seq})"
            return False, seq, f"entry {seq} is out of order (expected {expected_seq})"
        if prev_hash != prev:
            return (
                False,
                seq,
                f"entry {seq} does not link to entry {seq - 1} (deleted, inserted or reordered)",
            )
        if chain_hash(prev_hash, entry) != hash_:
            return False, seq, f"entry {seq} was edited: its hash does not match its content"
        try:
            doc = json.loads(entry)
        except ValueError:
            return False, seq, f"entry {seq} is not valid JSON"
        if doc.get("kind") != kind or doc.get("request_id") != request_id:
            return False, seq, f"entry {seq}: its columns disagree with its hashed content"
        if keys is not None:
            keyed = keyed or "mac" in doc
            problem = _entry_problem(seq, doc, keys, keyed, seen)
            if problem is not None:
                return False, seq, problem
        if anchor is not None and (
            (seq == 1 and hash_ != anchor.first) or (seq == anchor.seq and hash_ != anchor.hash)
        ):
            return (
                False,
                seq,
                f"entry {seq} is not the one anchored outside the store (the "
                "log was rewritten, or replaced, up to here)",
            )
        if checkpoint is not None and seq == checkpoint[0] and hash_ != checkpoint[1]:
            return (
                False,
                seq,
                f"entry {seq} is not the one the chain's checkpoint recorded "
                "(the log was rewritten up to here)",
            )
        prev = hash_
        expected_seq += 1
    last = expected_seq - 1
    if anchor is not None and anchor.seq > last:
        return (
            False,
            last + 1,
            f"entries {last + 1}..{anchor.seq} (at least) were deleted "
            "from the end (the anchor outside the store holds entry "
            f"{anchor.seq})",
        )
    if checkpoint is not None and checkpoint[0] > last:
        return (
            False,
            last + 1,
            f"entries {last + 1}..{checkpoint[0]} (at least) were deleted from the end",
        )
    if head is None:
        if last == 0:
            return True, None, "0 entries verified"
        return (
            False,
            last + 1,
            f"entry {last + 1} and any after it were deleted from the "
            f"end (entry {last} is not marked as the last)",
        )
    head_seq, head_hash = head
    if head_seq != last or (last and head_hash != prev):
        if head_seq > last:
            return False, last + 1, f"entries {last + 1}..{head_seq} were deleted from the end"
        return False, head_seq + 1, f"entry {head_seq + 1} was appended outside the store"
    return True, None, f"{last} entries verified"
