"""The store's keys and the audit log's protection, mixed into `engine.Engine`.

The keys come from outside the store (signoff.keys); the store keeps key ids only. A
binding key that an older signoff kept in the store's own table is moved out on first open.
Audit entries are MACed (store/chain.py); the chain's head is anchored outside the store
(store/anchor.py) now and then, on close and after a good verify.
"""

from __future__ import annotations

import json
import os
from contextlib import AbstractContextManager, suppress

from ..exceptions import ConfigurationError, IntegrityError, SignoffError
from ..keys import Keys, MissingKeyFile, load_keys, register_store
from ..kinds import KEYS_REANCHORED
from ..lazylog import get_logger
from ..records import record
from ..waits import LockTimeout, lock_wait
from . import chain
from .anchor import ANCHOR_EVERY, ANCHOR_WAIT_S, Anchor, AnchorKeyLost, read_anchor, write_anchor
from .base import Draft, Row, clock
from .integrity import check_request, read_grant, signed_grant

TYPE_CHECKING = False  # not typing's: see signoff/__init__.py

if TYPE_CHECKING:
    from .base import Flush
    from .engine import Tx

MAX_REQUESTS_CHECKED = 10_000_000
log = get_logger(__name__)


@record(frozen=True, slots=True)
class Reanchored:
    """What `KeyedLog.reanchor` wrote and accepted."""

    seq: int  # its `keys.reanchored` entry
    first_gap: int  # the first number after the chain it pinned (a gap up to `seq` if less)
    gaps: tuple[tuple[int, int], ...]  # numbers lost between entries, each first..last
    lost_keys: tuple[str, ...]  # key ids of entries whose MAC no key source can check now


def _key_id(entry: str | None) -> str | None:
    """The key id an entry's MAC names (None: no entry, or an older signoff's unkeyed one)."""
    if entry is None:
        return None
    try:
        mac = json.loads(entry).get("mac")
    except (ValueError, AttributeError):
        return None  # verify names it
    return mac.split(":", 1)[0] if isinstance(mac, str) and ":" in mac else None


class KeyedLog:
    _keys: Keys  # kept outside the store (see signoff.keys); the store holds key ids only
    _anchor_location: str | None = None  # where the chain's head is anchored (None: nowhere)
    _since_anchor: int = 0  # entries appended since this store last anchored
    _keys_lost: str | None = None  # why it takes no writes: its log's key is not held
    _label: str = "the store"  # how messages name it

    def _write(self, flush: Flush = "now") -> AbstractContextManager[Tx]:
        raise NotImplementedError

    def _read(self) -> AbstractContextManager[Tx]:
        raise NotImplementedError

    def _load_keys(self, keys: Keys | None = None) -> None:
        """Take the keys from outside the store. A binding key that an older signoff kept
        in the store's own table is moved out to the key file (only the first time the key
        file sees this store: later, such a row was planted) and erased from the store.

        A log whose last entry names a key that the keys do not hold (the key file was
        deleted, or replaced by a new one) takes no writes (`_keys_lost`): a new key
        under it would leave a chain that no longer verifies. No key file is made for it
        either; a person restores the key or runs `signoff keys reanchor`."""
        with self._read() as tx:
            found = tx.meta_get("binding_key")
            logged = _key_id(tx.last_entry())  # the key id of the log's last entry
            tip = tx.chain_tip()
        old_key = bytes.fromhex(found) if found is not None else None
        legacy_id: str | None = None
        if keys is None:
            try:
                keys = load_keys(create=logged is None)
            except MissingKeyFile as exc:  # read, and say why nothing is written
                keys = Keys.generate(source=f"{exc.path} (missing)")
            held = logged is None or logged in keys.masters  # else: not this store's keys
            if held and self._anchor_location is not None and not os.environ.get("SIGNOFF_KEY"):
                legacy_id = keys.stores.get(self._anchor_location)
                if self._anchor_location not in keys.stores:
                    keys, legacy_id = register_store(self._anchor_location, old_key)
        self._keys = keys.for_store(legacy_id)
        if logged is not None and logged not in keys.masters:
            self._keys_lost = (
                f"{self._label}: its audit log is keyed with key id {logged!r}, which "
                f"{keys.source} does not hold; nothing is written until you restore that "
                "key file, or accept a new key on purpose with `signoff keys reanchor`"
            )
            log.info("%s", self._keys_lost)
            return
        self._floor(tip)
        if found is not None:
            with self._write() as tx:
                if legacy_id is not None:
                    self._sign_older_grants(tx)
                tx.meta_delete("binding_key")
            self._erased()

    def _refuse_if_keys_lost(self) -> None:
        if self._keys_lost is not None:
            raise ConfigurationError(self._keys_lost)

    def _floor(self, tip: Anchor | None) -> None:
        """Entries the anchor outside the store holds that this chain lost from its end (a
        write-ahead log torn by a power cut, a server that lost its last asynchronous
        commits, a cut): the next entry leaves their numbers unused, so the loss shows as
        a gap (`_leave_gap`) instead of being papered over by new entries."""
        if self._anchor_location is None or tip is None:
            return
        try:
            anchor = read_anchor(self._keys, self._anchor_location)
        except IntegrityError:
            return  # verify says so
        if anchor is None or anchor.first != tip.first or anchor.seq <= tip.seq:
            return  # up to date, or another chain (a store replaced: verify says so)
        log.info(
            "%s: the audit log ends at entry %d, but entry %d was anchored outside the store: "
            "entries %d..%d were lost, and new entries leave their numbers unused",
            self._label,
            tip.seq,
            anchor.seq,
            tip.seq + 1,
            anchor.seq,
        )
        self._leave_gap(anchor.seq)

    def _leave_gap(self, seq: int) -> None:
        """Make the next entry's number at least `seq` + 1 (each backend)."""

    def _sign_older_grants(self, tx: Tx) -> None:
        """An older signoff's grants carry no MAC; they are signed once, when its store is
        first moved to the key file (as it was left: the same trust as its legacy key)."""
        for doc, _ in tx.list_grants(None, None):
            try:
                grant, problem = read_grant(self._keys, doc)
            except (ValueError, SignoffError):
                continue  # unreadable: it stays untrusted, and verify names it
            if problem is not None and "carries no MAC" in problem:
                tx.grant_doc(grant.id, signed_grant(self._keys, grant))

    def _erased(self) -> None:
        """After a secret was deleted from the store: make sure no copy of it is left
        in free pages or a log (SQLite: secure delete and a WAL checkpoint)."""

    # ------------------------------------------------------------------ anchor

    def _maybe_anchor(self) -> None:
        if self._since_anchor >= ANCHOR_EVERY:
            self._anchor()

    def _anchor(self) -> None:
        """Anchor the chain's current head outside the store (best effort: a config
        directory that cannot be written leaves only the keyed chain)."""
        if self._anchor_location is None or not self._since_anchor:
            return
        self._since_anchor = 0
        try:
            with self._read() as tx:
                tip = tx.chain_tip()
            if tip is not None:
                wait = min(ANCHOR_WAIT_S, lock_wait())
                write_anchor(self._keys, self._anchor_location, tip, wait=wait)
        except (OSError, SignoffError):
            pass

    def verify_chain(self) -> tuple[bool, int | None, str]:
        """(ok, first bad seq or None, message): detects edited, deleted, inserted,
        reordered, forged or copied entries, and a tail cut below the anchor; a good
        chain's head is then anchored outside the store."""
        anchor: Anchor | None = None
        unreadable: str | None = None  # an anchor made with a key no longer held
        if self._anchor_location is not None:
            try:
                anchor = read_anchor(self._keys, self._anchor_location)
            except AnchorKeyLost as exc:
                unreadable = str(exc)  # the chain's own entries say more, if the key is lost
            except IntegrityError as exc:
                return False, None, str(exc)
        with self._read() as tx:
            head, checkpoint = tx.chain_end()
            walk = chain.ChainWalk(keys=self._keys, anchor=anchor, checkpoint=checkpoint)
            result = walk.run(tx.chain_rows(), head)
            tip = tx.chain_tip() if result[0] else None
        if unreadable is not None and not any(w.lost_key for w in walk.waiting):
            return False, None, unreadable  # the log's keys are held: the anchor was forged
        if tip is not None and self._anchor_location is not None:
            with suppress(OSError, LockTimeout):  # best effort: the next verify moves it
                write_anchor(self._keys, self._anchor_location, tip)
        return result

    def reanchor(self, actor: str, *, now: float | None = None) -> Reanchored:
        """On purpose (`signoff keys reanchor`): accept the breaks that are not tampering,
        record that on the chain and anchor its head anew. Accepted: entries whose MAC
        names a key no longer held (the key file was lost: the current key signs from
        here on), entries lost from the end (the gap the store left), and an anchor that
        holds another chain (a store replaced on purpose). The `keys.reanchored` entry
        names them and pins the chain before it (seq and hash), so verify accepts exactly
        these and nothing changed later. Any other break (IntegrityError) is tampering:
        nothing is written."""
        ts = clock(now)
        with self._write() as tx:
            tx.lock_chain()  # the chain cannot move between the walk and the entry
            walk = chain.ChainWalk(keys=self._keys)
            walk.run(tx.chain_rows(), None, ends=False)
            if walk.broken is not None:
                raise IntegrityError(
                    f"{self._label}: the audit chain does not verify (entry {walk.broken[0]}: "
                    f"{walk.broken[1]}); a reanchor accepts a lost key, entries lost from the "
                    "end and a store replaced on purpose, never a log changed in the database"
                )
            gaps = [w.gap for w in walk.waiting if w.gap is not None]
            lost = sorted({w.lost_key for w in walk.waiting if w.lost_key is not None})
            data = {
                "head": {"seq": walk.last, "hash": walk.prev},
                "gaps": [list(g) for g in gaps],
                "lost_keys": lost,
                "key": self._keys.current,
            }
            draft = Draft(KEYS_REANCHORED, None, None, actor, data)
            entry = chain.keyed_entry(draft.doc(ts), self._keys)
            (seq,) = tx.append([(draft, entry)], ts)
            tip = tx.chain_tip()
        self._keys_lost = None
        if tip is not None and self._anchor_location is not None:
            write_anchor(self._keys, self._anchor_location, tip, reset=True)
        return Reanchored(seq, walk.last + 1, tuple(gaps), tuple(lost))

    def verify_requests(self) -> list[tuple[str, str]]:
        """(id, what is wrong) for every stored request whose binding or decision record,
        and every active grant whose MAC, does not verify: rows changed in the database
        behind signoff's back."""
        with self._read() as tx:
            rows = tx.list_requests(None, None, None, MAX_REQUESTS_CHECKED)
            grants = tx.list_grants(None, None)
        problems: list[tuple[str, str]] = []
        for doc, _ in grants:
            try:
                grant, problem = read_grant(self._keys, doc)
                where = grant.id
            except (ValueError, SignoffError) as exc:
                where, problem = "grant", f"a stored grant does not parse: {exc}"
            if problem is not None:
                problems.append((where, problem))
        for cols in reversed(rows):  # oldest first
            try:
                problem = check_request(Row.from_columns(cols).request, self._keys)
            except SignoffError as exc:
                problem = str(exc)
            if problem is not None:
                problems.append((str(cols[0]), problem))
        return problems
