"""Entries lost from the end of the log leave a gap; new entries never take their numbers.

A SQLite write-ahead log torn or corrupted after its last commits (a power cut, a bad
disk), or a PostgreSQL server that lost its last asynchronous commits, gives back a log
that is whole but shorter: its new end is a consistent earlier state, so nothing inside
the database says entries are missing. The anchor outside the store does: it holds a
later entry. Before, the next entries reused the lost numbers (and their hashes then
differed from the anchored ones); now the store numbers the next entry after the
anchored one, so the loss stays a visible gap (`entry N is missing (next is M)`) that
only `signoff keys reanchor` accepts, on purpose and on the record. Real SQLite files
with a really corrupted WAL, real processes ended without a checkpoint, real PostgreSQL.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from signoff.audit import verify_store
from signoff.store import open_store
from signoff.store.anchor import read_anchor
from signoff.store.sqlite import SQLiteStore
from store_helpers import Backend

pytestmark = pytest.mark.slow  # writers in other processes, a WAL corrupted and recovered
SRC = str(Path(__file__).resolve().parent.parent / "src")
PAGE = 4096  # SQLite's default page size: a WAL frame is a 24-byte header and one page

# A hook's way of writing: one verdict, the anchor moved on close, and the process ends
# without the checkpoint a last close would run (SQLiteStore.close(process_ends=True)),
# so the entry stays in the WAL file only.
HOOK_LIKE = textwrap.dedent(
    """
    import os, sys
    sys.path.insert(0, {src!r})
    from signoff.store import open_store
    store = open_store({db!r})
    store.record("verdict", {{"n": {n}}}, run_id="run-1")
    store.close(process_ends=True)
    os._exit(0)
    """
)


def _hook_like(db: Path, n: int) -> None:
    script = HOOK_LIKE.format(src=SRC, db=str(db), n=n)
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr


def _corrupt_wal_from(wal: Path, frame: int) -> None:
    """Flip bytes in the page of WAL frame `frame` (0-based): its checksum no longer
    matches, and SQLite's recovery drops it and every frame after it."""
    with open(wal, "r+b") as handle:
        at = 32 + frame * (24 + PAGE) + 24 + PAGE // 2
        handle.seek(at)
        data = handle.read(16)
        handle.seek(at)
        handle.write(bytes(b ^ 0xFF for b in data))


def _frames(wal: Path) -> int:
    return (wal.stat().st_size - 32) // (24 + PAGE)


def test_a_corrupted_wal_leaves_a_gap_not_reused_numbers(tmp_path: Path) -> None:
    db = tmp_path / "signoff.db"
    with open_store(str(db)) as store:  # closed last: checkpointed into the file itself
        for n in range(3):
            store.record("verdict", {"n": n}, run_id="run-1")
    for n in range(3, 9):
        _hook_like(db, n)  # entries 4..9, in the WAL only
    wal = Path(f"{db}-wal")
    assert _frames(wal) >= 6
    location = f"sqlite:{os.path.realpath(db)}"
    with open_store(str(db)) as store:
        anchor = read_anchor(store._keys, location)  # type: ignore[attr-defined]
    assert anchor is not None and anchor.seq == 9
    _hook_like(db, 99)  # and once more, so that the WAL is left behind again
    _corrupt_wal_from(wal, _frames(wal) // 2)

    store = open_store(str(db))
    assert isinstance(store, SQLiteStore)
    try:
        kept = store.last_seq()
        assert 3 <= kept < 10, kept  # the corruption cost entries: the log is shorter
        seq = store.record("verdict", {"n": "after"}, run_id="run-1")
        assert seq == 11  # after the anchored 10, not kept + 1
        report = verify_store(store)
        assert (report.ok, report.first_bad_seq) == (False, kept + 1)
        assert report.message == f"entry {kept + 1} is missing (next is 11)"
    finally:
        store.close()

    done = subprocess.run(
        [sys.executable, "-m", "signoff", "keys", "reanchor", "--db", str(db), "--json"],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": SRC},
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["gaps"] == [[kept + 1, 10]]
    with open_store(str(db)) as store:
        report = verify_store(store)
        assert report.ok, report.message
        assert store.record("verdict", {"n": "later"}, run_id="run-1") == 13


def test_a_postgres_log_that_lost_its_last_commits_leaves_a_gap(tmp_path: Path) -> None:
    """As the server looks after losing its last asynchronous commits: the events and the
    chain-head row both end earlier, consistently."""
    db = Backend("postgres", tmp_path)
    try:
        with open_store(db.url) as store:
            for n in range(8):
                store.record("verdict", {"n": n}, run_id="run-1", flush="soon")
        db.sql("DELETE FROM signoff_events WHERE seq > 5")
        db.sql(
            "UPDATE signoff_chain SET seq = 5, prev = NULL, "
            "hash = (SELECT hash FROM signoff_events WHERE seq = 5) WHERE id = 1"
        )
        store = db.open()
        assert store.record("verdict", {"n": "after"}, run_id="run-1") == 9
        report = verify_store(store)
        assert (report.ok, report.first_bad_seq, report.message) == (
            False,
            6,
            "entry 6 is missing (next is 9)",
        )
    finally:
        db.close()


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
def test_a_store_replaced_on_purpose_starts_at_one(tmp_path: Path, kind: str) -> None:
    """The anchor of another chain (a store deleted and made anew) is no floor: the new
    log starts at entry 1, verify says the store is not the anchored one, and a reanchor
    anchors the new chain, on its record."""
    db = Backend(kind, tmp_path)
    try:
        with open_store(db.url) as store:
            for n in range(4):
                store.record("verdict", {"n": n})
        db.sql("DELETE FROM signoff_events")
        if kind == "postgres":
            db.sql(
                "UPDATE signoff_chain SET seq = 0, prev = NULL, hash = ? WHERE id = 1", ("0" * 64,)
            )
        else:
            db.sql("UPDATE signoff_chain SET seq = 0, hash = ? WHERE id = 1", ("0" * 64,))
        store = db.open()
        assert store.record("verdict", {"n": "new"}) == 1
        report = verify_store(store)
        assert (report.ok, report.first_bad_seq) == (False, 1)
        assert "not the one anchored outside the store" in report.message
        done = store.reanchor("ann")  # type: ignore[attr-defined]
        assert (done.seq, done.gaps, done.lost_keys) == (2, (), ())
        assert verify_store(store).ok
    finally:
        db.close()
