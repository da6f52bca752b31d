"""`flush="soon"`: a record written before the call it judges runs, on disk moments later.

Real SQLite files, real PostgreSQL, real processes killed with SIGKILL. What is promised:
a "soon" record is in the store when `record` returns (another process reads it, and it
survives the writer being killed at once); the flush thread puts it on disk (fdatasync of
the WAL), checkpoints the WAL and anchors the chain off the caller's thread; a flush that
fails makes the store refuse every later write; "now" commits still wait for the disk.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from signoff.exceptions import ConfigurationError, InvalidInput
from signoff.store import Draft, open_store
from signoff.store import flusher as flusher_module
from signoff.store.anchor import ANCHOR_EVERY, read_anchor
from signoff.store.sqlite import CHECKPOINT_EVERY_COMMITS, SQLiteStore
from store_helpers import Backend

SRC = str(Path(__file__).resolve().parent.parent / "src")
VERDICT = {"call": {"name": "run", "arguments": {"cmd": "echo hi"}}, "verdict": "allow"}


def _sqlite(path: Path) -> SQLiteStore:
    store = open_store(str(path))
    assert isinstance(store, SQLiteStore)
    return store


def test_a_soon_record_is_read_by_another_store_at_once(db: Backend) -> None:
    writer, reader = db.open(), db.open()
    seq = writer.record("verdict", VERDICT, run_id="run_1", flush="soon")
    found = [e for e in reader.events_after(0) if e.seq == seq]
    assert found and found[0].kind == "verdict" and found[0].data["verdict"] == "allow"
    assert writer.flush(timeout=10)
    ok, bad, message = reader.verify_chain()
    assert ok, (bad, message)


def test_record_many_soon_is_one_commit_all_or_none(db: Backend) -> None:
    store = db.open()
    drafts = [Draft("verdict", None, "run_1", None, {"i": i}) for i in range(3)]
    seqs = store.record_many(drafts, flush="soon")
    assert [e.data["i"] for e in store.events_after(seqs[0] - 1)] == [0, 1, 2]
    with pytest.raises(InvalidInput, match="not allowed in JSON"):
        store.record_many([*drafts, Draft("verdict", None, None, None, {"x": float("nan")})])
    assert store.last_seq() == seqs[-1]


def test_a_soon_record_survives_its_writer_killed_right_after(tmp_path: Path) -> None:
    """The promise for a call allowed to run without a person: its verdict is in the store
    before the call runs, whatever happens to the process after (SIGKILL: no flush, no
    close, no atexit)."""
    db = tmp_path / "signoff.db"
    _sqlite(db).close()
    script = textwrap.dedent(
        f"""
        import os, signal, sys
        sys.path.insert(0, {SRC!r})
        from signoff.store import open_store
        store = open_store({str(db)!r})
        for i in range(50):
            store.record("verdict", {{"i": i}}, run_id="run_1", flush="soon")
        print("written", flush=True)
        os.kill(os.getpid(), signal.SIGKILL)
        """
    )
    proc = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False
    )
    assert proc.stdout.strip() == "written", proc.stderr
    assert proc.returncode == -signal.SIGKILL
    store = _sqlite(db)
    try:
        assert [e.data["i"] for e in store.events_after(0) if e.kind == "verdict"] == list(
            range(50)
        )
        ok, bad, message = store.verify_chain()
        assert ok, (bad, message)
    finally:
        store.close()


def test_the_flush_thread_fdatasyncs_the_wal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    synced: list[str] = []
    real = os.fdatasync

    def spy(fd: int) -> None:
        synced.append(os.readlink(f"/proc/self/fd/{fd}"))
        real(fd)

    monkeypatch.setattr(flusher_module.os, "fdatasync", spy)
    store = _sqlite(tmp_path / "signoff.db")
    try:
        store.record("verdict", VERDICT, flush="soon")
        assert store.flush(timeout=10)
        assert synced and set(synced) == {os.path.realpath(f"{store.file}-wal")}
        before = len(synced)
        store.record("verdict", VERDICT, flush="soon")
        assert store.flush(timeout=10)
        assert len(synced) > before  # every soon commit is flushed, not only the first
    finally:
        store.close()


def test_commits_of_the_same_moment_share_a_flush_and_a_waiter_does_not_wait_out_the_window(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    synced: list[int] = []
    real = os.fdatasync
    monkeypatch.setattr(flusher_module.os, "fdatasync", lambda fd: (synced.append(fd), real(fd)))
    # a window far longer than the test: only a waiter (flush, close) can cut it short
    monkeypatch.setattr(flusher_module, "FLUSH_WITHIN_S", 3600.0)
    store = _sqlite(tmp_path / "signoff.db")
    try:
        for _ in range(20):
            store.record("verdict", VERDICT, flush="soon")
        assert not synced  # told, and waiting for the window (or a waiter)
        assert store.flush(timeout=30)  # hurried: on disk now, not in an hour
        assert len(synced) == 1  # twenty commits, one fdatasync
        store.record("verdict", VERDICT, flush="soon")
    finally:
        store.close()
    assert len(synced) == 2  # close flushed the last one at once


def test_now_commits_wait_for_the_disk_and_soon_ones_do_not(tmp_path: Path) -> None:
    store = _sqlite(tmp_path / "signoff.db")
    try:
        store.record("verdict", VERDICT, flush="soon")
        assert store._conn.execute("PRAGMA synchronous").fetchone() == (1,)  # NORMAL
        store.record("verdict", VERDICT)  # "now", the default
        assert store._conn.execute("PRAGMA synchronous").fetchone() == (2,)  # FULL
        store.record_many([Draft("verdict", None, None, None, VERDICT)])
        assert store._conn.execute("PRAGMA synchronous").fetchone() == (2,)
    finally:
        store.close()


def test_a_failed_flush_stops_every_later_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(fd: int) -> None:
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(flusher_module.os, "fdatasync", broken)
    store = _sqlite(tmp_path / "signoff.db")
    try:
        seq = store.record("verdict", VERDICT, flush="soon")
        assert store.flush(timeout=10)  # it ran, and failed
        for write in (
            lambda: store.record("verdict", VERDICT, flush="soon"),
            lambda: store.record("verdict", VERDICT),
        ):
            with pytest.raises(ConfigurationError, match="flushing its WAL to disk failed"):
                write()
        assert store.last_seq() == seq  # nothing more was written
    finally:
        monkeypatch.undo()
        store.close()


def test_close_flushes_what_is_waiting(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    synced: list[int] = []
    real = os.fdatasync
    monkeypatch.setattr(flusher_module.os, "fdatasync", lambda fd: (synced.append(fd), real(fd)))
    store = _sqlite(tmp_path / "signoff.db")
    store.record("verdict", VERDICT, flush="soon")  # makes the flush thread
    assert store.flush(timeout=10)
    flusher = store._flusher
    assert flusher is not None
    flusher._closed = True  # its thread stops without flushing: only close can flush now
    flusher._due.set()
    flusher._thread.join()
    flusher._closed = False
    synced.clear()
    store.record("verdict", VERDICT, flush="soon")
    assert not synced and flusher._waiting == 1  # written, not flushed
    store.close()
    assert synced and flusher._waiting == 0  # on disk before close returned


def test_the_wal_is_checkpointed_off_the_callers_thread(tmp_path: Path) -> None:
    """The caller's connection leaves checkpoints to the flush thread (its own only at
    the backstop, 1000 pages, which these records stay under): the events still reach the
    database file, and the WAL is reused from its start."""
    store = _sqlite(tmp_path / "signoff.db")
    try:
        store.record("verdict", VERDICT, flush="soon")
        assert store.flush(timeout=10)
        size = os.path.getsize(store.file)
        for _ in range(CHECKPOINT_EVERY_COMMITS * 4):
            store.record("verdict", VERDICT, flush="soon")
        deadline = time.monotonic() + 30
        while os.path.getsize(store.file) <= size and time.monotonic() < deadline:
            store.record("verdict", VERDICT, flush="soon")  # the next flush's upkeep
            time.sleep(0.05)
        assert os.path.getsize(store.file) > size, "no checkpoint reached the database file"
        assert store._checkpointer is not None  # the flush thread's own connection did it
    finally:
        store.close()


def test_the_chain_is_anchored_by_the_flush_thread(tmp_path: Path) -> None:
    store = _sqlite(tmp_path / "signoff.db")
    try:
        for _ in range(ANCHOR_EVERY * 3):
            store.record("verdict", VERDICT, flush="soon")
        assert store.flush(timeout=30)
        # the upkeep follows the flush on the same thread: give it its moment
        deadline = time.monotonic() + 30
        anchored = None
        while anchored is None and time.monotonic() < deadline:
            if store._anchor_location is not None:
                anchored = read_anchor(store._keys, store._anchor_location)
            time.sleep(0.01)
        assert anchored is not None and anchored.seq >= ANCHOR_EVERY
    finally:
        store.close()


def test_a_memory_store_takes_soon_as_now() -> None:
    store = open_store("memory:")
    seq = store.record("verdict", VERDICT, flush="soon")
    assert store.flush(timeout=0) is True
    assert store.events_after(seq - 1)[0].kind == "verdict"


def test_a_soon_record_reaches_the_postgres_server_at_once(tmp_path: Path) -> None:
    """PostgreSQL: committed without waiting for the flush (the server's WAL writer
    flushes it), and in the server when `record` returns."""
    db = Backend("postgres", tmp_path)
    try:
        store = db.open()
        seq = store.record("verdict", VERDICT, flush="soon")
        rows: list[Any] = db.sql("SELECT kind, entry FROM signoff_events WHERE seq = ?", (seq,))
        assert rows and rows[0][0] == "verdict"
        assert json.loads(rows[0][1])["data"]["verdict"] == "allow"
    finally:
        db.close()
