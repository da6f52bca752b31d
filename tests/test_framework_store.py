"""The store a framework adapter opens from a path: opened once per process and database
file, so that an adapter built afresh at each resume reuses it (`shared_store`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from signoff.adapters.frameworks import Guard
from signoff.adapters.stores import shared_store
from signoff.store import open_store


def test_guards_on_one_file_share_its_store(tmp_path: Path) -> None:
    first = Guard("testfw", store=str(tmp_path / "s.db"), workspace=tmp_path)
    second = Guard("testfw", store=f"sqlite:///{tmp_path / 's.db'}", workspace=tmp_path)
    other = Guard("testfw", store=tmp_path / "other.db", workspace=tmp_path)
    assert second.store is first.store
    assert other.store is not first.store


def test_a_relative_path_and_the_default_store_are_the_same_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SIGNOFF_DB", raising=False)
    default = Guard("testfw", workspace=tmp_path)
    relative = Guard("testfw", store=".signoff/signoff.db", workspace=tmp_path)
    assert relative.store is default.store


def test_a_replaced_database_file_is_opened_again(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    first = shared_store(str(db), workspace=tmp_path)
    first.close()
    for suffix in ("", "-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    open_store(str(db)).close()  # a new file at the same path
    again = shared_store(str(db), workspace=tmp_path)
    assert again is not first
    assert again.list_runs() == []  # usable: not the closed store of the deleted file


def test_memory_stores_are_never_shared(tmp_path: Path) -> None:
    assert shared_store("memory:", workspace=tmp_path) is not shared_store(
        "memory:", workspace=tmp_path
    )


def test_use_store_closes_only_a_store_nobody_else_uses(tmp_path: Path) -> None:
    db = str(tmp_path / "s.db")
    shared = Guard("testfw", store=db, workspace=tmp_path)
    worker_store = open_store(db)
    shared.use_store(worker_store)
    assert shared.store is worker_store
    later = Guard("testfw", store=db, workspace=tmp_path)
    assert later.store.list_runs() == []  # the shared store is still open
    own = open_store(str(tmp_path / "own.db"))
    private = Guard("testfw", store=own, workspace=tmp_path)
    private.use_store(worker_store)
    try:
        own.list_runs()
    except Exception as exc:  # closed: sqlite3.ProgrammingError
        assert "closed" in str(exc)
    else:
        raise AssertionError("the guard's own store was left open")
