"""Framework adapters built by path share the process's open store for that file
(`signoff.adapters.stores`), and open another when sharing would be wrong."""

from __future__ import annotations

from pathlib import Path

import pytest

from signoff.adapters import stores
from signoff.adapters.frameworks import Guard
from signoff.adapters.stores import shared_store, sqlite_file
from signoff.exceptions import NotFound
from signoff.models import ToolCall
from signoff.store import open_store


@pytest.mark.parametrize(
    ("target", "file"),
    [
        ("a/s.db", "a/s.db"),
        ("sqlite:///a/s.db", "a/s.db"),
        ("sqlite:////abs/s.db", "/abs/s.db"),
        ("sqlite:", None),
        ("memory:", None),
        (":memory:", None),
        ("postgresql://u@h/db", None),
        ("redis://h", None),
    ],
)
def test_which_targets_name_a_sqlite_file(target: str, file: str | None) -> None:
    assert sqlite_file(target) == file


def test_adapters_built_by_path_share_one_store(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    first = Guard("testfw", store=str(db), workspace=tmp_path)
    again = Guard("testfw", store=db, workspace=tmp_path)  # a Path, the same file
    url = Guard("testfw", store=f"sqlite:///{db}", workspace=tmp_path)
    assert first.store is again.store is url.store
    other = Guard("testfw", store=str(tmp_path / "other.db"), workspace=tmp_path)
    assert other.store is not first.store


def test_a_store_passed_in_and_memory_stores_are_not_shared(tmp_path: Path) -> None:
    mine = open_store(str(tmp_path / "s.db"))
    assert Guard("testfw", store=mine, workspace=tmp_path).store is mine
    assert shared_store(str(tmp_path / "s.db"), workspace=tmp_path) is not mine
    one = Guard("testfw", store="memory:", workspace=tmp_path)
    two = Guard("testfw", store="memory:", workspace=tmp_path)
    assert one.store is not two.store


def test_what_one_adapter_writes_the_next_one_reads(tmp_path: Path) -> None:
    db = str(tmp_path / "s.db")
    first = Guard("testfw", store=db, workspace=tmp_path)
    call = ToolCall("wire", {"to": "bob"}, "c1")
    asked = first.ask(call, first.judge(call, thread="t1"), thread="t1")
    del first
    fresh = Guard("testfw", store=db, workspace=tmp_path)
    assert fresh.store.get_request(asked.id).state == "pending"
    assert fresh.run("t1").pending[0].request_id == asked.id


def test_a_closed_store_is_opened_again(tmp_path: Path) -> None:
    db = str(tmp_path / "s.db")
    first = Guard("testfw", store=db, workspace=tmp_path)
    first.store.close()
    fresh = Guard("testfw", store=db, workspace=tmp_path)
    assert fresh.store is not first.store
    assert fresh.store.last_seq() >= 0  # usable


def test_a_replaced_file_is_opened_again(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    first = Guard("testfw", store=str(db), workspace=tmp_path)  # kept open: its file lives on
    call = ToolCall("wire", {"to": "bob"}, "c1")
    asked = first.ask(call, first.judge(call, thread="t1"), thread="t1")
    for leftover in tmp_path.glob("s.db*"):
        leftover.unlink()
    open_store(str(db)).close()  # a new, empty file at the same path
    fresh = Guard("testfw", store=str(db), workspace=tmp_path)
    assert fresh.store is not first.store
    with pytest.raises(NotFound):
        fresh.store.get_request(asked.id)
    assert first.store.get_request(asked.id).state == "pending"  # the old one, unlinked


def test_a_forked_process_opens_its_own(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db = str(tmp_path / "s.db")
    first = Guard("testfw", store=db, workspace=tmp_path)
    monkeypatch.setattr(stores.os, "getpid", lambda: -1)  # as a child of fork() sees it
    assert Guard("testfw", store=db, workspace=tmp_path).store is not first.store


def test_only_the_last_files_used_are_kept_open(tmp_path: Path) -> None:
    first = Guard("testfw", store=str(tmp_path / "0.db"), workspace=tmp_path)
    for i in range(1, stores.KEPT + 1):  # KEPT other files: the first one drops off the list
        Guard("testfw", store=str(tmp_path / f"{i}.db"), workspace=tmp_path)
    assert Guard("testfw", store=str(tmp_path / "0.db"), workspace=tmp_path).store is not (
        first.store
    )
    assert first.store.last_seq() >= 0  # not closed under the adapter that holds it
    last = Guard("testfw", store=str(tmp_path / f"{stores.KEPT}.db"), workspace=tmp_path)
    assert Guard("testfw", store=str(tmp_path / f"{stores.KEPT}.db"), workspace=tmp_path).store is (
        last.store
    )


def test_a_relative_path_and_the_default_store_are_the_same_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SIGNOFF_DB", raising=False)
    default = Guard("testfw", workspace=tmp_path)
    relative = Guard("testfw", store=".signoff/signoff.db", workspace=tmp_path)
    assert relative.store is default.store


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
    with pytest.raises(Exception, match="closed"):  # sqlite3.ProgrammingError
        own.list_runs()
