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

Two breaks are not tampering and a person may accept them on purpose (`signoff keys
reanchor`, which writes a `keys.reanchored` entry pinning the chain before it): the gap a
store leaves when entries were lost from its end and it wrote on (the next entry links to
the last one present), and entries whose MAC names a key no key source holds any more.
Until a reanchor names them they fail verification like any other break.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable

from ..exceptions import InvalidInput
from ..keys import Keys
from ..kinds import KEYS_REANCHORED
from ..models import sha256_hex
from ..records import record
from .anchor import Anchor

TYPE_CHECKING = False  # not typing's: see signoff/__init__.py

if TYPE_CHECKING:
    from typing import Any

    ChainRows = Iterable[tuple[int, str, str, str, str, str | None]]  # see verify_chain
    Head = tuple[int, str] | None  # where the store recorded the chain's end
    Broken = tuple[int, str]  # the first bad seq and what is wrong there

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


_KID = re.compile(r"[A-Za-z0-9_-]{1,32}")


def _entry_problem(
    seq: int, doc: dict[str, Any], keys: Keys, keyed: bool, seen: set[str]
) -> tuple[str | None, str | None]:
    """Why a parsed entry fails the keyed check (None: it passes), and the key id its MAC
    names when the only problem is that no key source holds that id any more."""
    mac = doc.pop("mac", None)
    if mac is None:
        if keyed:
            return f"entry {seq} carries no MAC: it was not written by signoff (forged)", None
        return None, None
    kid = mac.split(":", 1)[0] if isinstance(mac, str) and ":" in mac else ""
    if not _KID.fullmatch(kid):
        return f"entry {seq}: its MAC is not of the form KID:HEX (forged)", None
    lost = kid not in keys.masters
    if not lost and not keys.check("audit", _ENCODER.encode(doc), mac):
        return (
            f"entry {seq}: its MAC does not verify with the audit key (forged or edited, "
            "then re-hashed)"
        ), None
    nonce = str(doc.get("n"))
    if nonce in seen:
        return f"entry {seq} is a copy of an earlier entry (replayed)", None
    seen.add(nonce)
    if lost:
        return (
            f"entry {seq}: its MAC names key id {kid!r}, which {keys.source} does not "
            "hold (forged, or the key was removed)"
        ), kid
    return None, None


@record(frozen=True, slots=True)
class Waiting:
    """A break that only `signoff keys reanchor` may accept, on purpose: entries lost
    before the store wrote on (a gap the chain links over), or an entry whose MAC names a
    key that no key source holds any more."""

    seq: int
    message: str
    gap: tuple[int, int] | None = None  # the missing sequence numbers, first and last
    lost_key: str | None = None


class ChainWalk:
    """One pass over the chain's rows (seq order) and its recorded end.

    Every check returns at the first hard break (edited, deleted, inserted, reordered,
    forged, copied, cut). A gap the store left on purpose (the next entry links to the
    last one present) and an entry keyed by a lost key are collected in `waiting` instead:
    a later `keys.reanchored` entry, written with a key held now, that pins the chain
    just before it (its `head`) and names them, accepts them. The first break is
    reported: one no reanchor accepted, or a hard one (the walk stops there, so a
    reanchor beyond it is never reached: the report then names that break too)."""

    def __init__(
        self,
        *,
        keys: Keys | None = None,
        anchor: Anchor | None = None,
        checkpoint: tuple[int, str] | None = None,
    ) -> None:
        self.keys = keys
        self.anchor = anchor
        self.checkpoint = checkpoint
        self.waiting: list[Waiting] = []
        self.accepted: list[int] = []  # seqs of the reanchor entries that accepted a break
        self.last = 0  # the last entry seen (its seq) and its hash
        self.prev = GENESIS_HASH
        self.count = 0
        self.broken: Broken | None = None  # the first hard break, once `run` is done
        self._keyed = False
        self._seen: set[str] = set()

    def run(
        self, rows: ChainRows, head: Head, *, ends: bool = True
    ) -> tuple[bool, int | None, str]:
        broken = self._walk(rows)
        if broken is None and ends:
            broken = self._ends(head)
        self.broken = broken
        first = self.waiting[0] if self.waiting else None
        if first is not None and (broken is None or first.seq < broken[0]):
            # a reanchor that would accept it may lie beyond a hard break: name both
            also = f"; further on, {broken[1]}" if broken is not None else ""
            return False, first.seq, first.message + also
        if broken is not None:
            return False, broken[0], broken[1]
        message = f"{self.count} entries verified"
        if self.accepted:
            seqs = ", ".join(str(s) for s in self.accepted)
            message += f" (with breaks accepted on purpose by the reanchor at entry {seqs})"
        return True, None, message

    def _walk(self, rows: ChainRows) -> Broken | None:
        expected = 1
        for seq, entry, prev_hash, hash_, kind, request_id in rows:
            if seq < expected:
                return seq, f"entry {seq} is out of order (expected {expected})"
            if prev_hash != self.prev:
                if seq > expected:
                    return expected, f"entry {expected} is missing (next is {seq})"
                return (
                    seq,
                    f"entry {seq} does not link to entry {seq - 1} "
                    "(deleted, inserted or reordered)",
                )
            if seq > expected:  # linked over the hole: left by the store after a loss
                message = f"entry {expected} is missing (next is {seq})"
                self.waiting.append(Waiting(expected, message, gap=(expected, seq - 1)))
            if chain_hash(prev_hash, entry) != hash_:
                return seq, f"entry {seq} was edited: its hash does not match its content"
            try:
                doc = json.loads(entry)
            except ValueError:
                return seq, f"entry {seq} is not valid JSON"
            if (
                not isinstance(doc, dict)
                or doc.get("kind") != kind
                or doc.get("request_id") != request_id
            ):
                return seq, f"entry {seq}: its columns disagree with its hashed content"
            vouched = self.keys is None  # an exported file: its hashes are all there is
            if self.keys is not None:
                self._keyed = self._keyed or "mac" in doc
                had_mac = "mac" in doc
                problem, lost = _entry_problem(seq, doc, self.keys, self._keyed, self._seen)
                if lost is not None and problem is not None:
                    self.waiting.append(Waiting(seq, problem, lost_key=lost))
                elif problem is not None:
                    return seq, problem
                vouched = had_mac and lost is None
            broken = self._against_anchor(seq, hash_)
            if broken is not None:
                return broken
            if kind == KEYS_REANCHORED and vouched:
                self._accept(seq, doc)
            self.prev, self.last = hash_, seq
            self.count += 1
            expected = seq + 1
        return None

    def _against_anchor(self, seq: int, hash_: str) -> Broken | None:
        anchor = self.anchor
        if anchor is not None and (
            (seq == 1 and hash_ != anchor.first) or (seq == anchor.seq and hash_ != anchor.hash)
        ):
            return (
                seq,
                f"entry {seq} is not the one anchored outside the store (the "
                "log was rewritten, or replaced, up to here)",
            )
        checkpoint = self.checkpoint
        if checkpoint is not None and seq == checkpoint[0] and hash_ != checkpoint[1]:
            return (
                seq,
                f"entry {seq} is not the one the chain's checkpoint recorded "
                "(the log was rewritten up to here)",
            )
        return None

    def _accept(self, seq: int, doc: dict[str, Any]) -> None:
        """A reanchor entry: it accepts the breaks it names, and the gap right before it,
        if it pins the chain as it stands (the entry before it, by seq and hash)."""
        data = doc.get("data")
        if not isinstance(data, dict):
            return
        head = data.get("head")
        if not isinstance(head, dict) or (head.get("seq"), head.get("hash")) != (
            self.last,
            self.prev,
        ):
            return
        gaps = {tuple(g) for g in data.get("gaps", ()) if isinstance(g, list)}
        gaps.add((self.last + 1, seq - 1))
        lost = {k for k in data.get("lost_keys", ()) if isinstance(k, str)}
        kept = [
            w
            for w in self.waiting
            if not ((w.gap is not None and w.gap in gaps) or (w.lost_key in lost))
        ]
        if len(kept) < len(self.waiting):
            self.accepted.append(seq)
        self.waiting = kept

    def _ends(self, head: Head) -> Broken | None:
        """The chain's last entry against where the store (and the anchor) say it ends."""
        last = self.last
        anchor, checkpoint = self.anchor, self.checkpoint
        if anchor is not None and anchor.seq > last:
            return (
                last + 1,
                f"entries {last + 1}..{anchor.seq} (at least) were deleted "
                "from the end (the anchor outside the store holds entry "
                f"{anchor.seq})",
            )
        if checkpoint is not None and checkpoint[0] > last:
            return (
                last + 1,
                f"entries {last + 1}..{checkpoint[0]} (at least) were deleted from the end",
            )
        if head is None:
            if last == 0:
                return None
            return (
                last + 1,
                f"entry {last + 1} and any after it were deleted from the "
                f"end (entry {last} is not marked as the last)",
            )
        head_seq, head_hash = head
        if head_seq > last:
            return last + 1, f"entries {last + 1}..{head_seq} were deleted from the end"
        if head_seq < last:
            return (
                head_seq + 1,
                f"entries after {head_seq} were appended outside the store (the store "
                f"recorded entry {head_seq} as the last, the chain goes on to {last})",
            )
        if last and head_hash != self.prev:
            return (
                last,
                f"entry {last} was changed after it was written: its hash is not the one "
                "the store recorded for the chain's last entry",
            )
        return None


def verify_chain(
    rows: ChainRows,
    head: Head,
    checkpoint: tuple[int, str] | None = None,
    *,
    keys: Keys | None = None,
    anchor: Anchor | None = None,
) -> tuple[bool, int | None, str]:
    """Check (seq, entry, prev_hash, hash, kind, request_id) rows in seq order against the
    recorded head (None: the entries exist but none is marked as the last one), an
    optional checkpoint, an earlier (seq, hash) the chain must still hold, the entries'
    MACs when `keys` are given, and the anchor kept outside the store."""
    walk = ChainWalk(keys=keys, anchor=anchor, checkpoint=checkpoint)
    return walk.run(rows, head)
