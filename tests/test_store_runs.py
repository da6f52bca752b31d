"""Durable runs, one contract on three backends: memory, SQLite (real files), PostgreSQL."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest

from signoff.exceptions import (
    AlreadyClaimed,
    ConflictError,
    IntegrityError,
    InvalidInput,
    NotFound,
    SchemaVersionError,
)
from signoff.models import Decision
from signoff.runs.agent import PendingCall, Run
from signoff.store import Store
from store_helpers import (  # the fixtures register themselves by name
    Backend,
    backend_fixture,  # noqa: F401
    make_request,
    store_fixture,  # noqa: F401
)

NOW = 1_800_000_000.0
USER = {"role": "user", "content": "clean the build, then tell me — 完了？"}
CALL = {
    "role": "assistant",
    "content": None,
    "tool_calls": [
        {
            "id": "call_1",
            "type": "function",
            "function": {"name": "bash", "arguments": '{"command": "rm -rf build"}'},
        }
    ],
}


def msgs(n: int, start: int = 0) -> list[dict[str, Any]]:
    return [
        {"role": "tool", "tool_call_id": f"call_{i}", "content": f"result {i}"}
        for i in range(start, start + n)
    ]


def compact(message: dict[str, Any]) -> str:
    return json.dumps(message, separators=(",", ":"), ensure_ascii=False)


def new_run(
    store: Store,
    run_id: str = "run-a",
    *,
    messages: list[dict[str, Any]] | None = None,
    now: float = NOW,
    **kw: Any,
) -> Run:
    worker = kw.pop("worker", None)
    lease = kw.pop("lease_seconds", 300.0)
    return store.create_run(
        Run(id=run_id, **kw),
        [USER] if messages is None else messages,
        worker=worker,
        lease_seconds=lease,
        now=now,
    )


def pause(
    store: Store,
    run: Run,
    *,
    now: float,
    worker: str | None = None,
    new: list[dict[str, Any]] | None = None,
) -> Run:
    return store.save_run(
        replace(run, status="paused"),
        new or [],
        expected_version=run.version,
        worker=worker,
        now=now,
    )


def run_events(store: Store, run_id: str) -> list[str]:
    return [e.kind for e in store.events_after(0, 1000) if e.run_id == run_id]


# ----------------------------------------------------------------------------- create, read


def test_create_get_list_load(store: Store) -> None:
    a = new_run(
        store,
        "run-a",
        messages=[USER, CALL],
        tenant="acme",
        thread="t1",
        agent="pkg.mod:make",
        metadata={"k": [1, 2]},
    )
    assert (a.version, a.message_count, a.status) == (1, 2, "running")
    assert a.created_at == a.updated_at == NOW
    assert store.get_run("run-a") == a
    assert store.load_messages("run-a") == [USER, CALL]
    b = new_run(store, "run-b", now=NOW + 1)
    c = new_run(store, "run-c", now=NOW + 2, status="paused", tenant="acme")
    assert [r.id for r in store.list_runs()] == [c.id, b.id, a.id]
    assert [r.id for r in store.list_runs(tenant="acme")] == [c.id, a.id]
    assert [r.id for r in store.list_runs(status="paused")] == [c.id]
    assert [r.id for r in store.list_runs(status="running", tenant="acme")] == [a.id]
    assert len(store.list_runs(limit=2)) == 2
    assert run_events(store, "run-a") == ["run.created"]
    created = next(e for e in store.events_after(0) if e.run_id == "run-a")
    assert created.data["message_count"] == 2 and created.data["tenant"] == "acme"


def test_missing_and_duplicate_runs(store: Store) -> None:
    with pytest.raises(NotFound, match="no run 'nope'"):
        store.get_run("nope")
    with pytest.raises(NotFound, match="no run 'nope'"):
        store.load_messages("nope")
    with pytest.raises(NotFound, match="no run 'nope'"):
        store.save_run(Run(id="nope"), [], expected_version=1)
    with pytest.raises(NotFound, match="no run 'nope'"):
        store.claim_run("w1", run_id="nope")
    store.release_run("nope", "w1")  # a no-op
    new_run(store)
    with pytest.raises(ConflictError, match="already exists"):
        new_run(store, messages=msgs(3))
    assert store.load_messages("run-a") == [USER]
    assert run_events(store, "run-a") == ["run.created"]


def test_bad_input_stores_nothing(store: Store) -> None:
    with pytest.raises(InvalidInput, match="message 1 is not JSON"):
        new_run(store, messages=[USER, {"x": float("nan")}])
    with pytest.raises(InvalidInput, match="status"):
        new_run(store, status="sleeping")
    assert store.list_runs() == [] and store.last_seq() == 0
    run = new_run(store)
    with pytest.raises(InvalidInput, match="message 0 is list"):
        store.save_run(run, [["not", "a", "message"]], expected_version=1)  # type: ignore[list-item]
    with pytest.raises(InvalidInput, match="not JSON"):
        store.save_run(run, [], expected_version=1, events=[("verdict", {"x": {1, 2}})])
    with pytest.raises(InvalidInput, match="tenant"):
        store.save_run(replace(run, tenant="other"), [], expected_version=1)
    assert store.get_run(run.id) == run and store.load_messages(run.id) == [USER]


def test_ids_are_generated_when_missing(store: Store) -> None:
    run = store.create_run(Run(id=""), [], now=NOW)
    assert run.id.startswith("run_") and store.get_run(run.id).message_count == 0
    assert store.load_messages(run.id) == []


# ----------------------------------------------------------------------------- save


def test_save_appends_only_the_new_rows(backend: Backend, store: Store) -> None:
    run = new_run(store, messages=[USER, CALL])
    before = backend.message_rows(run.id)
    assert before == [(0, compact(USER)), (1, compact(CALL))]
    saved = store.save_run(run, msgs(3), expected_version=1, now=NOW + 1)
    assert (saved.version, saved.message_count, saved.updated_at) == (2, 5, NOW + 1)
    assert saved.created_at == NOW
    rows = backend.message_rows(run.id)
    assert [seq for seq, _ in rows] == [0, 1, 2, 3, 4]
    assert rows[:2] == before  # old rows untouched
    assert [text for _, text in rows[2:]] == [compact(m) for m in msgs(3)]
    again = store.save_run(saved, [], expected_version=2, now=NOW + 2)
    assert (again.version, again.message_count) == (3, 5)
    assert len(backend.message_rows(run.id)) == 5
    assert store.load_messages(run.id) == [USER, CALL, *msgs(3)]
    assert store.get_run(run.id) == again


def test_save_keeps_the_document(store: Store) -> None:
    run = new_run(store)
    item = PendingCall("call_1", "bash", None, effect="ask", request_id="req_1")
    saved = store.save_run(
        replace(
            run,
            status="paused",
            pending=(item,),
            total_refusals=2,
            note="waiting",
            metadata={"a": "ü"},
        ),
        [CALL],
        expected_version=1,
        now=NOW + 5,
    )
    got = store.get_run(run.id)
    assert got == saved
    assert got.pending == (item,) and got.waiting_on == ["req_1"]
    assert (got.total_refusals, got.note, dict(got.metadata)) == (2, "waiting", {"a": "ü"})


def test_version_compare_and_set(backend: Backend, store: Store) -> None:
    run = new_run(store, worker="w1")
    store.save_run(run, msgs(1), expected_version=1, worker="w1", now=NOW + 1)
    seq = store.last_seq()
    with pytest.raises(ConflictError, match=r"version 2, not 1.*leased to w1"):
        store.save_run(run, msgs(2, 1), expected_version=1, worker="w1", now=NOW + 2)
    with pytest.raises(ConflictError, match="version 2, not 7"):
        store.save_run(run, [], expected_version=7, now=NOW + 2)
    assert len(backend.message_rows(run.id)) == 2 and store.last_seq() == seq
    assert store.get_run(run.id).version == 2


def test_events_are_written_with_the_save(backend: Backend, store: Store) -> None:
    run = new_run(store, worker="w1")
    verdict = {"call": {"name": "bash", "arguments": {"command": "ls"}}, "effect": "allow"}
    saved = store.save_run(
        run,
        [CALL],
        expected_version=1,
        worker="w1",
        events=[("verdict", verdict), ("verdict", {"n": 2})],
        now=NOW + 1,
    )
    assert run_events(store, run.id) == ["run.created", "verdict", "verdict"]
    paused = pause(store, saved, now=NOW + 2, worker="w1")
    events = [e for e in store.events_after(0) if e.run_id == run.id]
    assert [e.kind for e in events] == ["run.created", "verdict", "verdict", "run.paused"]
    assert events[1].data == verdict and events[1].actor == "w1" and events[1].ts == NOW + 1
    assert events[3].data["from"] == "running" and events[3].data["to"] == "paused"
    assert events[3].data["version"] == paused.version == 3
    done = store.save_run(
        replace(paused, status="finished", note="all done"), [USER], expected_version=3, now=NOW + 3
    )
    assert run_events(store, run.id)[-1] == "run.finished" and done.note == "all done"
    assert store.verify_chain() == (True, None, "5 entries verified")
    # the run events are in the chain: editing one is detected
    rows = backend.events()
    assert '"n":2' in rows[2][5]
    rows[2][5] = rows[2][5].replace('"n":2', '"n":3')
    backend.replace_events(rows)
    ok, bad, _ = store.verify_chain()
    assert not ok and bad == 3


def test_a_finished_run_cannot_change(store: Store) -> None:
    run = new_run(store)
    done = store.save_run(replace(run, status="finished"), [], expected_version=1, now=NOW + 1)
    with pytest.raises(ConflictError, match="run run-a is finished"):
        store.save_run(replace(done, status="running"), [USER], expected_version=2)
    failed = new_run(store, "run-f")
    failed = store.save_run(replace(failed, status="failed"), [], expected_version=1)
    for run_id in ("run-a", "run-f"):
        status = store.get_run(run_id).status
        with pytest.raises(ConflictError, match=f"run {run_id} is {status}"):
            store.claim_run("w1", run_id=run_id, now=NOW + 2)


# ----------------------------------------------------------------------------- leases


def test_lease_rules(backend: Backend, store: Store) -> None:
    run = new_run(store, worker="w1", lease_seconds=60)
    assert backend.lease(run.id) == ("w1", NOW + 60)
    with pytest.raises(AlreadyClaimed, match=r"already claimed by w1 \(lease until 2027"):
        store.claim_run("w2", run_id=run.id, now=NOW + 10)
    assert store.claim_run("w1", run_id=run.id, lease_seconds=100, now=NOW + 10) == run
    assert backend.lease(run.id) == ("w1", NOW + 110)
    # a save by the holder while running renews its lease (as long as the last claim's)
    run = store.save_run(run, msgs(1), expected_version=1, worker="w1", now=NOW + 20)
    assert backend.lease(run.id) == ("w1", NOW + 120)
    # another worker may neither save nor claim while the lease is live ...
    with pytest.raises(ConflictError, match="leased to w1"):
        store.save_run(run, msgs(1, 1), expected_version=2, worker="w2", now=NOW + 30)
    store.release_run(run.id, "w2")  # not the holder: nothing happens
    assert backend.lease(run.id)[0] == "w1"
    # ... but once it lapsed, it may: the old holder is then refused
    taken = store.claim_run("w2", run_id=run.id, lease_seconds=50, now=NOW + 121)
    assert taken == run and backend.lease(run.id) == ("w2", NOW + 171)
    claimed = [e for e in store.events_after(0) if e.kind == "run.claimed"]
    assert [e.data["worker"] for e in claimed] == ["w1", "w2"]
    assert claimed[-1].data["lapsed"] == "w1"
    with pytest.raises(ConflictError, match="leased to w2"):
        store.save_run(run, msgs(1, 1), expected_version=2, worker="w1", now=NOW + 130)
    # stopping (any status but running) lets the lease go
    paused = pause(store, run, now=NOW + 131, worker="w2")
    assert backend.lease(run.id) == (None, None) and paused.status == "paused"
    store.claim_run("w3", run_id=run.id, now=NOW + 132)
    store.release_run(run.id, "w3")
    assert backend.lease(run.id) == (None, None)
    assert store.verify_chain()[0]


def test_claim_by_id_of_a_paused_run_still_waiting(store: Store) -> None:
    # `signoff resume RUN` may look at a run that still waits: it is handed out, and the
    # driver finds it must pause again
    run = pause(store, new_run(store), now=NOW + 1)
    store.create_request(make_request(run_id=run.id), now=NOW + 1)
    assert store.claim_run("w1", run_id=run.id, now=NOW + 2) == run


# ----------------------------------------------------------------------------- ready runs


def test_claim_without_id_picks_only_ready_runs(store: Store) -> None:
    assert store.claim_run("w1", now=NOW) is None
    # paused, waiting on a pending request: not ready until it is decided
    waiting = pause(store, new_run(store, "run-wait"), now=NOW + 1)
    req = store.create_request(make_request(run_id="run-wait"), now=NOW + 1)
    # running: its starter drives it (live lease), or nobody leased it at all
    new_run(store, "run-driven", worker="w0", lease_seconds=1000, now=NOW + 2)
    new_run(store, "run-unleased", now=NOW + 2)
    # finished, failed, needs a person: never
    for status in ("finished", "failed", "needs_attention"):
        r = new_run(store, f"run-{status}", now=NOW + 3)
        store.save_run(replace(r, status=status), [], expected_version=1, now=NOW + 3)
    assert store.claim_run("w1", now=NOW + 10) is None
    store.decide(req.id, Decision("approve"), actor="ann", now=NOW + 11)
    got = store.claim_run("w1", now=NOW + 12)
    assert got == waiting
    assert store.claim_run("w2", now=NOW + 13) is None  # w1 holds it now
    store.release_run("run-wait", "w1")
    assert store.claim_run("w2", now=NOW + 14) == waiting


def test_a_crashed_driver_makes_its_run_ready(store: Store) -> None:
    run = new_run(store, worker="w0", lease_seconds=30)
    run = store.save_run(run, msgs(2), expected_version=1, worker="w0", now=NOW + 10)
    assert store.claim_run("w1", now=NOW + 39) is None  # lease renewed to NOW + 40
    got = store.claim_run("w1", lease_seconds=30, now=NOW + 40)
    assert got == run and got.status == "running"
    assert store.claim_run("w2", now=NOW + 41) is None
    # the crashed driver wakes up: refused, nothing written
    with pytest.raises(ConflictError, match="leased to w1"):
        store.save_run(run, msgs(1, 2), expected_version=2, worker="w0", now=NOW + 42)
    assert store.get_run(run.id).message_count == 3


def test_an_expired_request_no_longer_holds_its_run(store: Store) -> None:
    run = pause(store, new_run(store), now=NOW)
    store.create_request(make_request(run_id=run.id), ttl_seconds=60, now=NOW)
    assert store.claim_run("w1", now=NOW + 59) is None
    assert store.claim_run("w1", now=NOW + 60) == run  # the driver will settle it as expired


def test_oldest_update_first(store: Store) -> None:
    pause(store, new_run(store, "run-1", now=NOW), now=NOW + 5)
    pause(store, new_run(store, "run-2", now=NOW + 1), now=NOW + 3)
    r3 = new_run(store, "run-3", worker="w0", lease_seconds=1, now=NOW + 4)  # lapses at +5
    assert store.claim_run("w1", now=NOW + 10) == store.get_run("run-2")
    assert store.claim_run("w1", now=NOW + 10) == r3
    assert store.claim_run("w1", now=NOW + 10) == store.get_run("run-1")
    assert store.claim_run("w1", now=NOW + 10) is None


# ----------------------------------------------------------------------------- integrity


def test_newer_schema_version_is_refused(backend: Backend, store: Store) -> None:
    run = new_run(store)
    backend.edit_run_doc(run.id, lambda doc: doc.update(v=99))
    fresh = backend.open()
    for call in (
        lambda: fresh.get_run(run.id),
        fresh.list_runs,
        lambda: fresh.claim_run("w1", run_id=run.id, now=NOW + 1),
        lambda: fresh.save_run(run, [], expected_version=1, now=NOW + 1),
    ):
        with pytest.raises(SchemaVersionError, match=f"run {run.id}: .*version 99"):
            call()


def test_a_document_edited_behind_the_store_is_refused(backend: Backend, store: Store) -> None:
    run = new_run(store)
    backend.edit_run_doc(run.id, lambda doc: doc.update(status="finished"))
    with pytest.raises(IntegrityError, match="disagrees with its row"):
        store.get_run(run.id)
    backend.edit_run_doc(run.id, lambda doc: doc.pop("id"))
    with pytest.raises(IntegrityError, match="does not parse"):
        store.get_run(run.id)


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ('{"role": "user"', "message 1 is not valid JSON"),
        ('{"a": 1}, {"b": 2}', "message 1 is not valid JSON"),
        ("[1, 2]", "message 1 is not a JSON object"),
    ],
)
def test_a_message_row_edited_behind_the_store_is_named(
    backend: Backend, store: Store, text: str, problem: str
) -> None:
    new_run(store, messages=[USER, CALL, USER])
    if backend.kind == "memory":
        backend.memory.messages["run-a"][1] = text
    else:
        backend.sql(
            "UPDATE signoff_messages SET msg = ? WHERE run_id = ? AND seq = 1", (text, "run-a")
        )
    with pytest.raises(IntegrityError, match=problem):
        store.load_messages("run-a")


def test_a_turn_and_its_requests_are_saved_together(store: Store) -> None:
    run = new_run(store, worker="w1")
    first = make_request(id="req-turn-1", run_id=run.id)
    second = make_request(
        id="req-turn-2", run_id=run.id, call=first.call.with_arguments({"command": "rm -rf dist"})
    )
    saved = store.save_run(
        replace(run, status="paused"),
        [CALL],
        expected_version=run.version,
        worker="w1",
        now=NOW + 1,
        requests=[(first, False, None), (second, True, 60.0)],
    )
    assert saved.version == run.version + 1
    stored = store.get_request("req-turn-2")
    assert stored.state == "pending" and stored.run_id == run.id
    assert stored.expires_at == NOW + 1 + 60.0
    assert store.get_request("req-turn-1").digest == first.call.digest()
    kinds = run_events(store, run.id)
    assert kinds.count("request.created") == 2 and "run.paused" in kinds
    assert store.verify_chain()[0]
    # A duplicate request id refuses the whole save: no message, no version, no event.
    with pytest.raises(InvalidInput, match="already exists"):
        store.save_run(
            replace(saved, status="paused"),
            msgs(1),
            expected_version=saved.version,
            now=NOW + 2,
            requests=[(first, False, None)],
        )
    after = store.get_run(run.id)
    assert after.version == saved.version and after.message_count == saved.message_count
    assert len(store.load_messages(run.id)) == saved.message_count
