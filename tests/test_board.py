"""The task board and mailboxes: one contract, SQLite (a real file) and PostgreSQL (the real
server, a fresh schema per test). Every test body runs on both."""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path

import pytest

from signoff.board import Board
from signoff.exceptions import (
    AlreadyClaimed,
    ConfigurationError,
    ConflictError,
    InvalidInput,
    NotAuthorized,
    NotFound,
)
from signoff.store import open_store
from store_helpers import Backend

NOW = 1_800_000_000.0


@pytest.fixture(name="backend", params=["sqlite", "postgres"])
def backend_fixture(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backend]:
    b = Backend(request.param, tmp_path)
    try:
        yield b
    finally:
        b.close()


@pytest.fixture(name="board")
def board_fixture(backend: Backend) -> Board:
    return Board(backend.open())


def kinds(board: Board) -> list[str]:
    return [e.kind for e in board.store.events_after(0, 1000)]


# ----------------------------------------------------------------------------- tasks


def test_add_get_list(board: Board, backend: Backend) -> None:
    design = board.add_task("Design the API", id="design", agent="lead", now=NOW)
    assert (design.state, design.version, design.owner, design.created_by) == (
        "open",
        1,
        None,
        "lead",
    )
    board.add_task("Write docs", id="docs", now=NOW)
    tests = board.add_task("Write tests", id="tests", depends_on=["docs", "design"], now=NOW)
    assert tests.depends_on == ("design", "docs")  # sorted
    again = Board(backend.open())  # another store object, the same data
    assert again.get_task("tests") == tests
    assert [t.id for t in again.list_tasks()] == ["design", "docs", "tests"]
    assert [t.id for t in again.list_tasks(state="open", limit=2)] == ["design", "docs"]
    assert again.list_tasks(state="done") == []
    generated = board.add_task("No id given")
    assert generated.id.startswith("task_") and board.get_task(generated.id) == generated


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"id": "design"}, ConflictError, "task 'design' already exists"),
        ({"id": "x", "depends_on": ["nope"]}, NotFound, "depends on 'nope', which does not"),
        ({"id": "x", "depends_on": ["x"]}, InvalidInput, "name the task itself"),
        ({"id": "x", "depends_on": ["design", "design"]}, InvalidInput, "repeat"),
        ({"id": "x", "depends_on": "design"}, InvalidInput, "not one string"),
        ({"id": "has space"}, InvalidInput, "'has space' is not a task id"),
        ({"id": "-x"}, InvalidInput, "is not a task id"),
        ({"id": "x", "agent": "bad\nname"}, InvalidInput, "control character"),
        ({"id": "x", "agent": ""}, InvalidInput, "agent must be a non-empty string"),
    ],
)
def test_add_refuses_bad_input(
    board: Board, kwargs: dict[str, object], error: type[Exception], match: str
) -> None:
    board.add_task("Design", id="design")
    with pytest.raises(error, match=match):
        board.add_task("Another", **kwargs)  # type: ignore[arg-type]
    assert [t.id for t in board.list_tasks()] == ["design"]  # nothing half-written
    with pytest.raises(InvalidInput, match="control character"):
        board.add_task("two\nlines")
    with pytest.raises(InvalidInput, match="title"):
        board.add_task("")


def test_claim_one_owner_at_a_time(board: Board) -> None:
    board.add_task("Design", id="design", now=NOW)
    claim = board.claim_task("design", agent="ann", version=1, lease_seconds=60, now=NOW + 1)
    assert claim.token and "token" not in repr(claim)
    assert (claim.task.state, claim.task.owner, claim.task.version) == ("claimed", "ann", 2)
    assert claim.task.lease_expires_at == NOW + 61
    assert board.get_task("design") == claim.task
    for agent, version in (("bob", 2), ("bob", 1), ("ann", 2)):
        with pytest.raises(AlreadyClaimed, match="already claimed by ann"):
            board.claim_task("design", agent=agent, version=version, now=NOW + 2)


def test_a_stale_version_is_refused(board: Board) -> None:
    board.add_task("Design", id="design")
    claim = board.claim_task("design", agent="ann", version=1)
    board.release_task("design", agent="ann", token=claim.token)
    assert board.get_task("design").version == 3
    with pytest.raises(ConflictError, match="at version 3, not 1: it changed since you read it"):
        board.claim_task("design", agent="bob", version=1)
    again = board.claim_task("design", agent="bob", version=3)
    with pytest.raises(ConflictError, match="at version 4, not 3"):
        board.complete_task("design", agent="bob", token=again.token, version=3)
    assert board.complete_task("design", agent="bob", token=again.token, version=4).version == 5


def test_dependencies_must_be_done_first(board: Board) -> None:
    board.add_task("Design", id="design")
    board.add_task("Docs", id="docs")
    board.add_task("Tests", id="tests", depends_on=["design", "docs"])
    with pytest.raises(ConflictError, match=r"waiting on design \(open\), docs \(open\)"):
        board.claim_task("tests", agent="bob", version=1)
    design = board.claim_task("design", agent="ann", version=1)
    with pytest.raises(ConflictError, match=r"design \(claimed by ann\)"):
        board.claim_task("tests", agent="bob", version=1)
    board.complete_task("design", agent="ann", token=design.token)
    docs = board.claim_task("docs", agent="ann", version=1)
    board.release_task("docs", agent="ann", token=docs.token)  # released is not done
    with pytest.raises(ConflictError, match=r"waiting on docs \(open\)"):
        board.claim_task("tests", agent="bob", version=1)
    docs = board.claim_task("docs", agent="cy", version=3)
    board.complete_task("docs", agent="cy", token=docs.token)
    assert board.claim_task("tests", agent="bob", version=1).task.owner == "bob"


def test_only_the_owner_with_its_token_completes_or_releases(board: Board) -> None:
    board.add_task("Design", id="design")
    claim = board.claim_task("design", agent="ann", version=1)
    for verb in (board.complete_task, board.release_task):
        with pytest.raises(NotAuthorized, match=r"claimed by ann .*, not bob"):
            verb("design", agent="bob", token=claim.token)
        with pytest.raises(NotAuthorized, match="not ann's claim token"):
            verb("design", agent="ann", token="guessed")
        with pytest.raises(NotAuthorized, match="no claim token"):
            verb("design", agent="ann", token=None)  # type: ignore[arg-type]
    assert board.get_task("design").version == 2  # refusals change nothing
    released = board.release_task("design", agent="ann", token=claim.token)
    assert (released.state, released.owner, released.version) == ("open", None, 3)
    with pytest.raises(ConflictError, match="is open, not claimed by ann"):
        board.complete_task("design", agent="ann", token=claim.token)
    second = board.claim_task("design", agent="ann", version=3)
    with pytest.raises(NotAuthorized, match="not ann's claim token"):  # an old claim's token
        board.complete_task("design", agent="ann", token=claim.token)
    done = board.complete_task("design", agent="ann", token=second.token, result={"pr": 7})
    assert (done.state, done.owner, done.result, done.version) == ("done", "ann", {"pr": 7}, 5)
    assert board.get_task("design").result == {"pr": 7}
    with pytest.raises(ConflictError, match="is done"):
        board.complete_task("design", agent="ann", token=second.token)
    with pytest.raises(ConflictError, match="is done \\(by ann\\): nothing to claim"):
        board.claim_task("design", agent="bob", version=5)


def test_the_store_keeps_no_token(board: Board, backend: Backend) -> None:
    board.add_task("Design", id="design")
    claim = board.claim_task("design", agent="ann", version=1)
    rows = backend.sql("SELECT * FROM signoff_tasks")
    assert claim.token not in repr(rows)
    assert all(claim.token not in e[5] for e in backend.events())


def test_results_are_json_and_bounded(board: Board) -> None:
    board.add_task("Design", id="design")
    claim = board.claim_task("design", agent="ann", version=1)
    with pytest.raises(InvalidInput):
        board.complete_task("design", agent="ann", token=claim.token, result=math.nan)
    with pytest.raises(InvalidInput, match="over 65536 bytes"):
        board.complete_task("design", agent="ann", token=claim.token, result="x" * 70_000)
    assert board.get_task("design").state == "claimed"


def test_a_lapsed_lease_frees_the_task(board: Board) -> None:
    board.add_task("Design", id="design", now=NOW)
    ann = board.claim_task("design", agent="ann", version=1, lease_seconds=10, now=NOW)
    with pytest.raises(AlreadyClaimed):
        board.claim_task("design", agent="bob", version=2, now=NOW + 9.9)
    with pytest.raises(ConflictError, match=r"ann's lease lapsed at .*; claim it again"):
        board.complete_task("design", agent="ann", token=ann.token, now=NOW + 10)
    bob = board.claim_task("design", agent="bob", version=2, now=NOW + 10)
    assert (bob.task.owner, bob.task.version) == ("bob", 3)
    with pytest.raises(NotAuthorized, match="claimed by bob"):
        board.complete_task("design", agent="ann", token=ann.token, now=NOW + 11)
    events = board.store.events_after(0, 100)
    assert [e.kind for e in events] == [
        "task.created",
        "task.claimed",
        "task.lapsed",
        "task.claimed",
    ]
    assert events[2].data["owner"] == "ann" and events[3].data["lapsed"] == "ann"


def test_sweep_and_renew(board: Board) -> None:
    for tid in ("a", "b"):
        board.add_task(tid.upper(), id=tid, now=NOW)
    a = board.claim_task("a", agent="ann", version=1, lease_seconds=10, now=NOW)
    b = board.claim_task("b", agent="bob", version=1, lease_seconds=10, now=NOW)
    renewed = board.renew_task("b", agent="bob", token=b.token, now=NOW + 8)
    assert (renewed.lease_expires_at, renewed.version) == (NOW + 18, 3)
    with pytest.raises(NotAuthorized):
        board.renew_task("b", agent="ann", token=a.token, now=NOW + 8)
    assert board.sweep_tasks(now=NOW + 9) == []
    assert board.sweep_tasks(now=NOW + 10) == ["a"]
    swept = board.get_task("a")
    assert (swept.state, swept.owner, swept.version) == ("open", None, 3)
    assert board.get_task("b").owner == "bob"
    assert board.sweep_tasks(now=NOW + 18) == ["b"]
    assert kinds(board)[-2:] == ["task.lapsed", "task.lapsed"]
    assert board.claim_task("a", agent="cy", version=3, now=NOW + 20).task.owner == "cy"


def test_every_transition_is_on_the_record(board: Board) -> None:
    board.add_task("Design", id="design", agent="lead")
    claim = board.claim_task("design", agent="ann", version=1)
    board.release_task("design", agent="ann", token=claim.token)
    claim = board.claim_task("design", agent="bob", version=3)
    board.complete_task("design", agent="bob", token=claim.token, result="ok")
    events = board.store.events_after(0, 100)
    assert [(e.kind, e.actor, e.data["task"]) for e in events] == [
        ("task.created", "lead", "design"),
        ("task.claimed", "ann", "design"),
        ("task.released", "ann", "design"),
        ("task.claimed", "bob", "design"),
        ("task.completed", "bob", "design"),
    ]
    assert events[-1].data == {"task": "design", "version": 5, "result": "ok"}
    ok, _, _ = board.store.verify_chain()
    assert ok


def test_the_memory_store_is_refused() -> None:
    with pytest.raises(ConfigurationError, match="needs a SQLite or PostgreSQL store"):
        Board(open_store("memory:"))


# ----------------------------------------------------------------------------- mail


def test_mail_reaches_only_its_recipients(board: Board) -> None:
    board.send("ann", "for bob", to="bob", now=NOW)
    board.send("bob", "for ann", to="ann", now=NOW)
    board.send("ann", "for everyone", now=NOW)
    board.send("cy", "for cy herself", to="cy", now=NOW)
    got = {a: [m.body for m in board.read(a).messages] for a in ("ann", "bob", "cy", "dee")}
    assert got == {
        "ann": ["for ann"],  # not her own message to everyone
        "bob": ["for bob", "for everyone"],
        "cy": ["for everyone", "for cy herself"],
        "dee": ["for everyone"],
    }
    bob = board.read("bob").messages
    assert [(m.sender, m.to) for m in bob] == [("ann", "bob"), ("ann", None)]
    assert bob[0].to_json() == {
        "seq": 1,
        "from": "ann",
        "to": "bob",
        "body": "for bob",
        "sent_at": NOW,
    }


def test_a_batch_comes_back_until_acknowledged(board: Board, backend: Backend) -> None:
    for n in range(5):
        board.send("ann", f"m{n}", to="bob")
    first = board.read("bob", limit=2)
    assert [m.body for m in first.messages] == ["m0", "m1"]
    assert (first.after, first.through) == (0, 2)
    assert Board(backend.open()).read("bob", limit=2) == first  # another process: the same
    assert board.ack("bob", first.through) == 2
    second = board.read("bob", limit=10)
    assert [m.body for m in second.messages] == ["m2", "m3", "m4"] and second.after == 2
    assert board.ack("bob", 1) == 2  # never backwards
    assert board.read("bob").messages == second.messages
    assert board.ack("bob", second.through) == 5
    empty = board.read("bob")
    assert (empty.messages, empty.after, empty.through) == ((), 5, 5)
    assert [m.body for m in board.read("cy").messages] == []  # cursors are per agent
    with pytest.raises(InvalidInput, match="message 9 does not exist \\(the last is 5\\)"):
        board.ack("bob", 9)
    with pytest.raises(InvalidInput, match="through must be a whole number"):
        board.ack("bob", -1)
    acked = [e for e in board.store.events_after(0, 100) if e.kind == "mail.acked"]
    assert [(e.actor, e.data) for e in acked] == [
        ("bob", {"from": 0, "through": 2}),
        ("bob", {"from": 2, "through": 5}),
    ]


def test_sent_mail_is_on_the_record(board: Board) -> None:
    sent = board.send("ann", "héllo", to="bob")
    (event,) = board.store.events_after(0, 10)
    assert (event.kind, event.actor) == ("mail.sent", "ann")
    assert event.data["seq"] == sent.seq and event.data["to"] == "bob"
    assert event.data["chars"] == 5 and len(event.data["digest"]) == 64


@pytest.mark.parametrize(
    ("sender", "body", "to", "match"),
    [
        ("", "x", None, "sender must be a non-empty string"),
        ("ann", "x", "bo\x1bb", "recipient 'bo\\\\x1bb' holds a control character"),
        ("ann", 5, None, "a message body is text, not int"),
        ("ann", "x" * 70_000, None, "70000 bytes long"),
        ("ann", "\ud800", None, "not valid text"),
    ],
)
def test_send_refuses_bad_input(
    board: Board, sender: str, body: object, to: str | None, match: str
) -> None:
    with pytest.raises(InvalidInput, match=match):
        board.send(sender, body, to=to)  # type: ignore[arg-type]
    assert board.read("bob").messages == ()
