"""The task board and the mailboxes across real processes (multiprocessing, spawn), on SQLite
and PostgreSQL.

8 processes add a task with the same id (one does, 7 are told it exists), then claim the
same task at the same version: exactly one owns it, the other 7 are told who does. 4 agents
read their mailboxes (one of them from two processes at once) while 2 senders post to them
and to everyone: nobody ever gets another agent's mail, a batch not acknowledged comes back
first, and every message reaches everyone it is for. An owner killed with SIGKILL mid-task
keeps it until its lease lapses; then it is claimable again and the dead owner's token is
worthless.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import signal
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from signoff.board import Board
from signoff.exceptions import AlreadyClaimed, NotAuthorized
from store_helpers import Backend

CLAIMERS = 8
AGENTS = ("c0", "c1", "c2", "c3")
PER_SENDER = 40


def _claimer(url: str, index: int, barrier: Any, out: Any) -> None:
    from signoff.board import open_board
    from signoff.exceptions import ConflictError

    try:
        with open_board(url) as board:
            barrier.wait(timeout=60)
            try:
                board.add_task("Added by everyone at once", id="dup", agent=f"a{index}")
                out.put(("added", index, ""))
            except ConflictError as exc:
                out.put(("not added", index, str(exc)))
            try:
                claim = board.claim_task("t", agent=f"a{index}", version=1)
                out.put(("won", index, claim.task.owner))
            except ConflictError as exc:
                out.put(("lost", index, str(exc)))
    except Exception as exc:  # reported, never swallowed
        out.put(("error", index, f"{type(exc).__name__}: {exc}"))


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
def test_one_of_many_claimers_wins(kind: str, tmp_path: Path) -> None:
    backend = Backend(kind, tmp_path)
    try:
        board = Board(backend.open())
        board.add_task("The contested task", id="t")
        ctx = mp.get_context("spawn")
        barrier, out = ctx.Barrier(CLAIMERS), ctx.Queue()
        procs = [
            ctx.Process(target=_claimer, args=(backend.url, i, barrier, out))
            for i in range(CLAIMERS)
        ]
        for p in procs:
            p.start()
        results = [out.get(timeout=120) for _ in range(2 * CLAIMERS)]
        for p in procs:
            p.join(timeout=60)
        assert [r for r in results if r[0] == "error"] == []
        assert len([r for r in results if r[0] == "added"]) == 1
        for refused in (r for r in results if r[0] == "not added"):
            assert refused[2] == "task 'dup' already exists"
        (winner,) = [r for r in results if r[0] == "won"]
        owner = f"a{winner[1]}"
        assert board.get_task("t").owner == owner
        for lost in (r for r in results if r[0] == "lost"):
            assert f"already claimed by {owner}" in lost[2]
        claimed = [e for e in board.store.events_after(0, 100) if e.kind == "task.claimed"]
        assert [e.actor for e in claimed] == [owner]
    finally:
        backend.close()


def _sender(url: str, name: str, barrier: Any, finished: Any, out: Any) -> None:
    from signoff.board import open_board

    try:
        with open_board(url) as board:
            barrier.wait(timeout=60)
            for n in range(PER_SENDER):
                to = None if n % 5 == 0 else AGENTS[n % len(AGENTS)]
                board.send(name, f"{name}:{n}", to=to)
        with finished.get_lock():
            finished.value += 1
        out.put(("sent", name, ""))
    except Exception as exc:
        out.put(("error", name, f"{type(exc).__name__}: {exc}"))


def _consumer(
    url: str, agent: str, reader: int, expected: int, barrier: Any, finished: Any, out: Any
) -> None:
    """Read until every message for `agent` arrived. An agent with one reader leaves every
    third batch unacknowledged (a crash before ack): it must come back, from its start. Two
    readers of one mailbox share its messages: each stops once the senders are done and the
    mailbox is empty."""
    from signoff.board import open_board

    got: set[str] = set()
    problems: list[str] = []
    crashes = agent != "c0"  # c0's two readers acknowledge each other's batches
    try:
        with open_board(url) as board:
            barrier.wait(timeout=60)
            deadline = time.monotonic() + 120
            rounds = 0
            unacked: int | None = None
            while len(got) < expected and time.monotonic() < deadline:
                both_sent = finished.value == 2  # read before the batch: nothing comes later
                batch = board.read(agent, limit=7)
                if not batch.messages and both_sent and not crashes:
                    break
                for m in batch.messages:
                    if not (m.to == agent or (m.to is None and m.sender != agent)):
                        problems.append(f"{agent} got {m.body} (to {m.to})")
                    got.add(m.body)
                if unacked is not None:  # the batch we did not acknowledge comes back first
                    if not batch.messages or batch.messages[0].seq != unacked:
                        problems.append(f"{agent}: read after {unacked} was not acknowledged")
                    unacked = None
                rounds += 1
                if batch.messages and rounds % 3 == 0 and unacked is None and crashes:
                    unacked = batch.messages[0].seq  # "crash" before ack: must come back
                    continue
                if batch.messages:
                    board.ack(agent, batch.through)
                else:
                    time.sleep(0.005)
        out.put(("got", f"{agent}/{reader}", (sorted(got), problems)))
    except Exception as exc:
        out.put(("error", f"{agent}/{reader}", f"{type(exc).__name__}: {exc}"))


def _expected(agent: str) -> set[str]:
    wanted = set()
    for sender in ("s0", "s1"):
        for n in range(PER_SENDER):
            to = None if n % 5 == 0 else AGENTS[n % len(AGENTS)]
            if to == agent or (to is None and sender != agent):
                wanted.add(f"{sender}:{n}")
    return wanted


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
def test_mailboxes_under_concurrent_senders_and_readers(kind: str, tmp_path: Path) -> None:
    backend = Backend(kind, tmp_path)
    try:
        backend.open()  # migrated before the race
        ctx = mp.get_context("spawn")
        readers = [(agent, 0) for agent in AGENTS] + [("c0", 1)]  # c0: two readers at once
        barrier, out, finished = ctx.Barrier(2 + len(readers)), ctx.Queue(), ctx.Value("i", 0)
        procs = [
            ctx.Process(target=_sender, args=(backend.url, s, barrier, finished, out))
            for s in ("s0", "s1")
        ]
        procs += [
            ctx.Process(
                target=_consumer,
                args=(backend.url, agent, reader, len(_expected(agent)), barrier, finished, out),
            )
            for agent, reader in readers
        ]
        for p in procs:
            p.start()
        results = [out.get(timeout=240) for _ in procs]
        for p in procs:
            p.join(timeout=60)
        assert [r for r in results if r[0] == "error"] == []
        union: dict[str, set[str]] = {a: set() for a in AGENTS}
        for _, who, (got, problems) in (r for r in results if r[0] == "got"):
            assert problems == []
            union[who.split("/")[0]] |= set(got)
        for agent in AGENTS:
            assert union[agent] == _expected(agent), agent
    finally:
        backend.close()


def _owner(url: str, out: Any) -> None:
    from signoff.board import open_board

    board = open_board(url)
    claim = board.claim_task("t", agent="doomed", version=1, lease_seconds=30)
    out.put((claim.token, claim.task.lease_expires_at))
    time.sleep(600)  # mid-task, until killed


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
def test_a_killed_owner_holds_the_task_until_its_lease_lapses(kind: str, tmp_path: Path) -> None:
    backend = Backend(kind, tmp_path)
    try:
        board = Board(backend.open())
        board.add_task("Long job", id="t")
        ctx = mp.get_context("spawn")
        out = ctx.Queue()
        proc = ctx.Process(target=_owner, args=(backend.url, out))
        proc.start()
        token, expires = out.get(timeout=120)
        os.kill(proc.pid, signal.SIGKILL)  # type: ignore[arg-type]
        proc.join(timeout=60)
        assert proc.exitcode == -signal.SIGKILL
        with pytest.raises(AlreadyClaimed, match="already claimed by doomed"):
            board.claim_task("t", agent="rescuer", version=2, now=expires - 1)
        assert board.sweep_tasks(now=expires - 1) == []
        # the lease lapses (time is given, not waited for): claimable again
        rescued = board.claim_task("t", agent="rescuer", version=2, now=expires)
        assert (rescued.task.owner, rescued.task.version) == ("rescuer", 3)
        with pytest.raises(NotAuthorized, match="claimed by rescuer"):
            board.complete_task("t", agent="doomed", token=token, now=expires + 1)
        board.complete_task("t", agent="rescuer", token=rescued.token, now=expires + 1)
        kinds = [e.kind for e in board.store.events_after(0, 100)]
        assert kinds == [
            "task.created",
            "task.claimed",
            "task.lapsed",
            "task.claimed",
            "task.completed",
        ]
        ok, _, detail = board.store.verify_chain()
        assert ok, detail
    finally:
        backend.close()


# ------------------------------------------------------------------ the lease's boundary

ROUNDS = 6
SWEEPERS = 3
RESCUERS = 4
LEASE = 60.0
T0 = 1_000_000.0


def _expiry(round_: int) -> float:
    return T0 + round_ * 1000 + LEASE


def _at_the_boundary(
    url: str, role: str, index: int, tokens: list[str], barrier: Any, out: Any
) -> None:
    """One round per task: the owner completes it a moment before its lease lapses (by
    its clock), sweepers sweep and rescuers claim it the moment after (by theirs)."""
    from signoff.board import open_board
    from signoff.exceptions import ConflictError, NotAuthorized

    try:
        with open_board(url) as board:
            for r in range(ROUNDS):
                tid, at = f"t{r}", _expiry(r)
                barrier.wait(timeout=60)
                try:
                    if role == "owner":
                        board.complete_task(tid, agent="owner", token=tokens[r], now=at - 0.001)
                        out.put((r, "completed", "owner"))
                    elif role == "sweeper":
                        out.put((r, "swept" if tid in board.sweep_tasks(now=at) else "none", ""))
                    else:
                        seen = board.get_task(tid)
                        agent = f"rescuer{index}"
                        board.claim_task(tid, agent=agent, version=seen.version, now=at,
                                         lease_seconds=1e8)  # fmt: skip
                        out.put((r, "claimed", agent))
                except (ConflictError, NotAuthorized) as exc:
                    out.put((r, "refused", f"{role}: {exc}"))
    except Exception as exc:  # a deadlock, a serialization failure: reported
        out.put((-1, "error", f"{role}{index}: {type(exc).__name__}: {exc}"))


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
def test_at_the_lease_boundary_one_outcome_wins(kind: str, tmp_path: Path) -> None:
    """The owner's completion, the sweepers' lapse and the rescuers' claims race on one
    row at the moment its lease lapses: either the owner completed it (nothing lapsed,
    nobody else claimed it) or it lapsed once and at most one rescuer owns it; every
    answer matches the record, nothing fails for any other reason, the chain verifies."""
    backend = Backend(kind, tmp_path)
    try:
        board = Board(backend.open())
        tokens = []
        for r in range(ROUNDS):
            board.add_task(f"Round {r}", id=f"t{r}", now=T0 + r * 1000)
            claim = board.claim_task(
                f"t{r}", agent="owner", version=1, lease_seconds=LEASE, now=T0 + r * 1000
            )
            tokens.append(claim.token)
        setup = board.store.last_seq()
        ctx = mp.get_context("spawn")
        roles = [("owner", 0)] + [("sweeper", i) for i in range(SWEEPERS)]
        roles += [("rescuer", i) for i in range(RESCUERS)]
        barrier, out = ctx.Barrier(len(roles)), ctx.Queue()
        procs = [
            ctx.Process(target=_at_the_boundary, args=(backend.url, role, i, tokens, barrier, out))
            for role, i in roles
        ]
        for p in procs:
            p.start()
        results = [out.get(timeout=240) for _ in range(ROUNDS * len(roles))]
        for p in procs:
            p.join(timeout=60)
        assert [r for r in results if r[1] == "error"] == []
        events = [e for e in board.store.events_after(setup, 10_000)]
        for r in range(ROUNDS):
            said = [x for x in results if x[0] == r]
            mine = [e for e in events if e.data.get("task") == f"t{r}"]
            kinds = [e.kind for e in mine]
            task = board.get_task(f"t{r}")
            claimed = [x[2] for x in said if x[1] == "claimed"]
            if "task.completed" in kinds:
                assert kinds == ["task.completed"], kinds
                assert [x[1] for x in said if x[2] == "owner"] == ["completed"]
                assert (task.state, task.owner, claimed) == ("done", "owner", [])
                assert [x for x in said if x[1] == "swept"] == []
                continue
            assert kinds.count("task.lapsed") == 1, kinds
            assert kinds.count("task.claimed") == len(claimed) <= 1, (kinds, said)
            assert kinds[0] == "task.lapsed" and mine[0].data["owner"] == "owner"
            assert not any(x[1] == "completed" for x in said)
            swept = [x for x in said if x[1] == "swept"]  # the lapse: a sweeper's or a claim's
            by_claim = any(e.kind == "task.claimed" and e.data["lapsed"] == "owner" for e in mine)
            assert len(swept) == (0 if by_claim else 1), (kinds, said)
            if claimed:
                assert (task.state, task.owner) == ("claimed", claimed[0])
                assert [e.actor for e in mine if e.kind == "task.claimed"] == claimed
            else:
                assert (task.state, task.owner) == ("open", None)
        ok, _, detail = board.store.verify_chain()
        assert ok, detail
    finally:
        backend.close()


# ------------------------------------------------------------------ mail committed late


def test_a_message_committed_late_is_not_acknowledged_away(tmp_path: Path) -> None:
    """PostgreSQL numbers a message when it is inserted, and commits it later: a sender
    held up inside its transaction (a trigger sleeps there) must hold back the senders
    after it, or a reader reads the later message, acknowledges past the earlier one's
    number, and never sees it."""
    backend = Backend("postgres", tmp_path)
    try:
        reader = Board(backend.open())
        backend.sql(
            "CREATE FUNCTION signoff_test_slow() RETURNS trigger LANGUAGE plpgsql AS "
            "$$ BEGIN PERFORM pg_sleep(1.5); RETURN NEW; END $$"
        )
        backend.sql(
            "CREATE TRIGGER signoff_test_slow AFTER INSERT ON signoff_mail FOR EACH ROW "
            "WHEN (NEW.body = 'slow') EXECUTE FUNCTION signoff_test_slow()"
        )
        slow, fast = Board(backend.open()), Board(backend.open())
        first = threading.Thread(target=slow.send, args=("ann", "slow"), kwargs={"to": "bob"})
        later = threading.Thread(target=fast.send, args=("cy", "fast"), kwargs={"to": "bob"})
        first.start()
        time.sleep(0.4)  # ann's message has its number, and sleeps before its commit
        later.start()
        got: list[str] = []
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            sending = first.is_alive() or later.is_alive()
            batch = reader.read("bob")
            got += [m.body for m in batch.messages]
            if batch.messages:
                reader.ack("bob", batch.through)
            elif not sending:
                break
            time.sleep(0.01)
        first.join(timeout=30)
        later.join(timeout=30)
        assert got == ["slow", "fast"]
    finally:
        backend.close()
