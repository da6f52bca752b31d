"""Every check `signoff audit verify` makes, each broken on its own.

For each check there is one way of changing the stored data (direct SQL on SQLite and on
PostgreSQL, or the anchor file) after which exactly that check fires: the report names
its entry and says its words, and no other check's. Where a check sits behind the MAC
check (the anchor, the checkpoint, the recorded end), the test re-keys the entries it
changes with the real audit key, as only a holder of the key could: that is what leaves
the check under test as the only one that can see the change. Taking any one check out
of `store/chain.py` makes its row here fail.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from signoff.audit import verify_lines, verify_store
from signoff.keys import Keys, load_keys
from signoff.models import Grant
from signoff.store.anchor import anchor_path
from signoff.store.chain import GENESIS_HASH, chain_hash, keyed_entry
from store_helpers import Backend

ENTRIES = 8  # 7 verdicts and a grant; closing the store anchors entry 8


def _history(db: Backend) -> str:
    """The log, written and closed (anchored at entry 8); the anchor's location."""
    store = db.open()
    for n in range(ENTRIES - 1):
        store.record("verdict", {"n": n, "call": {"name": "ls"}}, run_id="run-1")
    store.add_grant(Grant("Bash(ls)", "project", id="g1"))
    location = store._anchor_location  # type: ignore[attr-defined]
    store.close()
    assert isinstance(location, str)
    return location


def _rows(db: Backend) -> list[tuple[int, str, str, str]]:
    return [
        (int(r[0]), str(r[1]), str(r[2]), str(r[3]))
        for r in db.sql("SELECT seq, entry, prev_hash, hash FROM signoff_events ORDER BY seq")
    ]


def _rekeyed(entry: str, keys: Keys | None = None, **changes: object) -> str:
    """The entry with `changes` to its fields, MACed anew (with the real key by default)."""
    doc = json.loads(entry)
    doc.pop("mac", None)
    doc.pop("n", None)
    doc.update(changes)
    return keyed_entry(doc, keys or load_keys())


def _plain(entry: str) -> str:
    doc = json.loads(entry)
    doc.pop("mac")
    doc.pop("n")
    return json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _rewrite(db: Backend, changed: dict[int, str], *, move_end: bool = True) -> None:
    """Put the `changed` entry texts in and re-hash the chain from the first of them on,
    as anyone who can write the database can; `move_end`: also the recorded end (and
    SQLite's checkpoint), so that only the other checks see it."""
    start = min(changed)
    prev = GENESIS_HASH
    for seq, entry, _, hash_ in _rows(db):
        if seq < start:
            prev = hash_
            continue
        entry = changed.get(seq, entry)
        hash_ = chain_hash(prev, entry)
        db.sql(
            "UPDATE signoff_events SET entry = ?, prev_hash = ?, hash = ? WHERE seq = ?",
            (entry, prev, hash_, seq),
        )
        prev = hash_
    if not move_end:
        return
    if db.kind == "sqlite":
        db.sql(
            "UPDATE signoff_chain SET hash = (SELECT hash FROM signoff_events "
            "WHERE signoff_events.seq = signoff_chain.seq) WHERE id = 1"
        )
    else:
        db.sql("UPDATE signoff_chain SET hash = ? WHERE id = 1", (prev,))


def _no_anchor(location: str) -> None:
    os.unlink(anchor_path(location))


def _entry(db: Backend, seq: int) -> str:
    return next(entry for s, entry, _, _ in _rows(db) if s == seq)


# ----------------------------------------------------------------------------- the breaks


def missing(db: Backend, location: str) -> None:
    db.sql("DELETE FROM signoff_events WHERE seq = 4")


def gap_linked_over(db: Backend, location: str) -> None:
    # the hole the store leaves when it writes on after a loss: entry 5 links to entry 3
    db.sql("DELETE FROM signoff_events WHERE seq = 4")
    _rewrite(db, {5: _entry(db, 5)})
    _no_anchor(location)


def out_of_order(db: Backend, location: str) -> None:
    first = _rows(db)[0]
    db.sql(
        "INSERT INTO signoff_events (seq, ts, kind, request_id, run_id, entry, prev_hash, hash) "
        "VALUES (0, 0, 'verdict', NULL, 'run-1', ?, ?, ?)",
        (first[1], first[2], first[3]),
    )


def unlinked(db: Backend, location: str) -> None:
    db.sql("UPDATE signoff_events SET prev_hash = ? WHERE seq = 5", ("ab" * 32,))


def edited(db: Backend, location: str) -> None:
    db.sql("UPDATE signoff_events SET entry = replace(entry, '\"n\":2', '\"n\":20') WHERE seq = 3")


def not_json(db: Backend, location: str) -> None:
    _rewrite(db, {8: "{not json"}, move_end=False)


def columns(db: Backend, location: str) -> None:
    db.sql("UPDATE signoff_events SET kind = 'request.decided' WHERE seq = 2")


def no_mac(db: Backend, location: str) -> None:
    _rewrite(db, {6: _plain(_entry(db, 6))})


def mac_form(db: Backend, location: str) -> None:
    doc = json.loads(_entry(db, 6))
    doc["mac"] = "not a mac"
    _rewrite(db, {6: json.dumps(doc, sort_keys=True, separators=(",", ":"))})


def mac_wrong(db: Backend, location: str) -> None:
    doc = json.loads(_entry(db, 6))
    doc["data"]["n"] = 500
    _rewrite(db, {6: json.dumps(doc, sort_keys=True, separators=(",", ":"))})


OTHER_KEY = Keys("kgone", {"kgone": b"\x01" * 32}, source="another key file")


def lost_key(db: Backend, location: str) -> None:
    _rewrite(db, {6: _rekeyed(_entry(db, 6), OTHER_KEY)})
    _no_anchor(location)


def replayed(db: Backend, location: str) -> None:
    _rewrite(db, {6: _entry(db, 3)})


def anchor_first(db: Backend, location: str) -> None:
    _rewrite(db, {1: _rekeyed(_entry(db, 1), actor="mallory")})


def anchor_seq(db: Backend, location: str) -> None:
    _rewrite(db, {8: _rekeyed(_entry(db, 8), actor="mallory")})


def checkpoint_moved(db: Backend, location: str) -> None:
    db.sql("UPDATE signoff_chain SET seq = 5, hash = ? WHERE id = 1", ("cd" * 32,))


def anchor_ahead(db: Backend, location: str) -> None:
    db.sql("DELETE FROM signoff_events WHERE seq > 6")
    if db.kind == "sqlite":
        db.sql("UPDATE signoff_events SET head = 1 WHERE seq = 6")
    else:
        db.sql(
            "UPDATE signoff_chain SET seq = 6, "
            "hash = (SELECT hash FROM signoff_events WHERE seq = 6) WHERE id = 1"
        )


def checkpoint_ahead(db: Backend, location: str) -> None:
    db.sql("UPDATE signoff_chain SET seq = 20 WHERE id = 1")
    _no_anchor(location)


def end_mark_gone(db: Backend, location: str) -> None:
    db.sql("DELETE FROM signoff_events WHERE seq > 6")
    _no_anchor(location)


def appended(db: Backend, location: str) -> None:
    # a real, keyed entry 9, linked and hashed, but the store's end stays at 8
    last = _rows(db)[-1]
    entry = _rekeyed(_entry(db, 7), actor="mallory")
    db.sql(
        "INSERT INTO signoff_events (seq, ts, kind, request_id, run_id, entry, prev_hash, hash) "
        "VALUES (9, 0, 'verdict', NULL, 'run-1', ?, ?, ?)",
        (entry, last[3], chain_hash(last[3], entry)),
    )


def last_changed(db: Backend, location: str) -> None:
    # the last entry re-keyed and re-hashed; the head row still holds its old hash
    _rewrite(db, {8: _rekeyed(_entry(db, 8), actor="mallory")}, move_end=False)
    _no_anchor(location)


def anchor_garbage(db: Backend, location: str) -> None:
    Path(anchor_path(location)).write_text("{garbage")


def anchor_edited(db: Backend, location: str) -> None:
    path = Path(anchor_path(location))
    doc = json.loads(path.read_text())
    doc["seq"] = 3
    path.write_text(json.dumps(doc))


def grant_changed(db: Backend, location: str) -> None:
    (doc,) = db.sql("SELECT doc FROM signoff_grants WHERE id = 'g1'")[0]
    db.sql("UPDATE signoff_grants SET doc = ? WHERE id = 'g1'", (doc.replace("Bash(ls)", "Bash"),))


@dataclass(frozen=True)
class Check:
    brk: Callable[[Backend, str], None]
    seq: int | None  # the first bad entry the report names
    message: str  # exactly what it says ({anchor}: the anchor file, {keys}: the key source)
    on: tuple[str, ...] = ("sqlite", "postgres")


CHECKS: dict[str, Check] = {
    "a missing entry": Check(missing, 4, "entry 4 is missing (next is 5)"),
    "a gap the chain links over": Check(gap_linked_over, 4, "entry 4 is missing (next is 5)"),
    "an entry out of order": Check(out_of_order, 0, "entry 0 is out of order (expected 1)"),
    "an entry that does not link": Check(
        unlinked, 5, "entry 5 does not link to entry 4 (deleted, inserted or reordered)"
    ),
    "an edited entry": Check(edited, 3, "entry 3 was edited: its hash does not match its content"),
    "an entry that is not JSON": Check(not_json, 8, "entry 8 is not valid JSON"),
    "columns that disagree": Check(
        columns, 2, "entry 2: its columns disagree with its hashed content"
    ),
    "an entry without a MAC": Check(
        no_mac, 6, "entry 6 carries no MAC: it was not written by signoff (forged)"
    ),
    "a MAC of the wrong form": Check(
        mac_form, 6, "entry 6: its MAC is not of the form KID:HEX (forged)"
    ),
    "a MAC that does not verify": Check(
        mac_wrong,
        6,
        "entry 6: its MAC does not verify with the audit key (forged or edited, then re-hashed)",
    ),
    "a MAC under a key not held": Check(
        lost_key,
        6,
        "entry 6: its MAC names key id 'kgone', which {keys} does not hold "
        "(forged, or the key was removed)",
    ),
    "a replayed entry": Check(replayed, 6, "entry 6 is a copy of an earlier entry (replayed)"),
    "entry 1 is not the anchored one": Check(
        anchor_first,
        1,
        "entry 1 is not the one anchored outside the store (the log was rewritten, "
        "or replaced, up to here)",
    ),
    "the anchored entry was rewritten": Check(
        anchor_seq,
        8,
        "entry 8 is not the one anchored outside the store (the log was rewritten, "
        "or replaced, up to here)",
    ),
    "the checkpoint does not match": Check(
        checkpoint_moved,
        5,
        "entry 5 is not the one the chain's checkpoint recorded (the log was rewritten up to here)",
        on=("sqlite",),
    ),
    "a cut below the anchor": Check(
        anchor_ahead,
        7,
        "entries 7..8 (at least) were deleted from the end (the anchor outside the store "
        "holds entry 8)",
    ),
    "a cut below the checkpoint": Check(
        checkpoint_ahead,
        9,
        "entries 9..20 (at least) were deleted from the end",
        on=("sqlite",),
    ),
    "a cut that took the end mark": Check(
        end_mark_gone,
        7,
        "entry 7 and any after it were deleted from the end (entry 6 is not marked as the last)",
        on=("sqlite",),
    ),
    "a cut below the recorded head": Check(
        end_mark_gone, 7, "entries 7..8 were deleted from the end", on=("postgres",)
    ),
    "an entry appended outside the store": Check(
        appended,
        9,
        "entries after 8 were appended outside the store (the store recorded entry 8 as "
        "the last, the chain goes on to 9)",
    ),
    "the last entry changed under the recorded head": Check(
        last_changed,
        8,
        "entry 8 was changed after it was written: its hash is not the one the store "
        "recorded for the chain's last entry",
        on=("postgres",),
    ),
    "an anchor that does not parse": Check(
        anchor_garbage,
        None,
        "the audit anchor {anchor} does not parse (Expecting property name enclosed in "
        "double quotes: line 1 column 2 (char 1))",
    ),
    "an anchor edited": Check(
        anchor_edited,
        None,
        "the audit anchor {anchor} does not verify with the audit key (edited, or made "
        "with a key that is no longer held)",
    ),
    "a grant changed in the database": Check(
        grant_changed,
        None,
        "1 request or grant was changed in the database: a binding, decision record or "
        "grant MAC does not verify",
    ),
}


@pytest.mark.parametrize("name", sorted(CHECKS))
def test_each_check_fires_alone(db: Backend, name: str) -> None:
    check = CHECKS[name]
    if db.kind not in check.on:
        pytest.skip(f"{db.kind} keeps no such record")
    location = _history(db)
    store = db.open()
    assert verify_store(store).ok
    check.brk(db, location)
    report = verify_store(store)
    expected = check.message.format(anchor=anchor_path(location), keys=load_keys().source)
    assert (report.ok, report.first_bad_seq, report.message) == (False, check.seq, expected)


# ----------------------------------------------------------------------------- files


def test_an_exported_file_that_does_not_end_at_the_head_given(db: Backend) -> None:
    _history(db)
    lines = [
        json.dumps({**json.loads(entry), "seq": seq, "prev_hash": prev, "hash": hash_})
        for seq, entry, prev, hash_ in _rows(db)
    ]
    head = _rows(db)[-1][3]
    assert verify_lines(lines, head=head).ok
    report = verify_lines(lines[:-1], head=head)
    assert (report.ok, report.first_bad_seq) == (False, 8)
    assert report.message.startswith("the file ends at entry 7 with hash ")
    assert report.message.endswith("entries were cut from the end, or the last one was changed")
