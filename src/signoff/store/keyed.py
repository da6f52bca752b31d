"""The store's keys and the audit log's protection, mixed into `engine.Engine`.

The keys come from outside the store (signoff.keys); the store keeps key ids only. A
binding key that an older signoff kept in the store's own table is moved out on first open.
Audit entries are MACed (store/chain.py); the chain's head is anchored outside the store
(store/anchor.py) now and then, on close and after a good verify.
"""

from __future__ import annotations

import os
from contextlib import AbstractContextManager, suppress

from ..exceptions import IntegrityError, SignoffError
from ..keys import Keys, load_keys, register_store
from . import chain
from .anchor import ANCHOR_EVERY, Anchor, read_anchor, write_anchor
from .base import Row
from .integrity import check_request, read_grant, signed_grant

TYPE_CHECKING = False  # not typing's: see signoff/__init__.py

if TYPE_CHECKING:
    from .base import Flush
    from .engine import Tx

MAX_REQUESTS_CHECKED = 10_000_000


class KeyedLog:
    _keys: Keys  # kept outside the store (see signoff.keys); the store holds key ids only
    _anchor_location: str | None = None  # where the chain's head is anchored (None: nowhere)
    _since_anchor: int = 0  # entries appended since this store last anchored

    def _write(self, flush: Flush = "now") -> AbstractContextManager[Tx]:
        raise NotImplementedError

    def _read(self) -> AbstractContextManager[Tx]:
        raise NotImplementedError

    def _load_keys(self, keys: Keys | None = None) -> None:
        """Take the keys from outside the store. A binding key that an older signoff kept
        in the store's own table is moved out to the key file (only the first time the key
        file sees this store: later, such a row was planted) and erased from the store."""
        with self._read() as tx:
            found = tx.meta_get("binding_key")
        old_key = bytes.fromhex(found) if found is not None else None
        legacy_id: str | None = None
        if keys is None:
            keys = load_keys()
            if self._anchor_location is not None and not os.environ.get("SIGNOFF_KEY"):
                legacy_id = keys.stores.get(self._anchor_location)
                if self._anchor_location not in keys.stores:
                    keys, legacy_id = register_store(self._anchor_location, old_key)
        self._keys = keys.for_store(legacy_id)
        if found is not None:
            with self._write() as tx:
                if legacy_id is not None:
                    self._sign_older_grants(tx)
                tx.meta_delete("binding_key")
            self._erased()

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
                write_anchor(self._keys, self._anchor_location, tip)
        except (OSError, SignoffError):
            pass

    def verify_chain(self) -> tuple[bool, int | None, str]:
        """(ok, first bad seq or None, message): detects edited, deleted, inserted,
        reordered, forged or copied entries, and a tail cut below the anchor; a good
        chain's head is then anchored outside the store."""
        anchor: Anchor | None = None
        if self._anchor_location is not None:
            try:
                anchor = read_anchor(self._keys, self._anchor_location)
            except IntegrityError as exc:
                return False, None, str(exc)
        with self._read() as tx:
            head, checkpoint = tx.chain_end()
            result = chain.verify_chain(
                tx.chain_rows(), head, checkpoint, keys=self._keys, anchor=anchor
            )
            tip = tx.chain_tip() if result[0] else None
        if tip is not None and self._anchor_location is not None:
            with suppress(OSError):
                write_anchor(self._keys, self._anchor_location, tip)
        return result

    def reset_anchor(self) -> Anchor | None:
        """Anchor this chain's head even if the anchor holds another chain (a person
        replaced the store on purpose); the new anchor, or None with nothing to anchor."""
        if self._anchor_location is None:
            return None
        with self._read() as tx:
            tip = tx.chain_tip()
        if tip is not None:
            write_anchor(self._keys, self._anchor_location, tip, reset=True)
        return tip

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
