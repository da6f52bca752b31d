"""One contract, three backends: memory, SQLite (real files), PostgreSQL (real server)."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from signoff.exceptions import (
    AlreadyClaimed,
    AlreadyDecided,
    ConflictError,
    IntegrityError,
    InvalidInput,
    NotAuthorized,
    NotFound,
    RequestExpired,
    SchemaVersionError,
)
from signoff.models import Decision, Grant, Verdict
from signoff.store import Draft, Store, open_store
from store_helpers import (  # the fixtures register themselves by name
    Backend,
    backend_fixture,  # noqa: F401
    make_request,
    store_fixture,  # noqa: F401
)

NOW = 1_800_000_000.0
ALLOW = Verdict("allow", "low", "allow:Bash(ls *)", ("read-only",), "read")
DENY = Verdict("deny", "critical", "deny:Bash(rm -rf /)", ("catastrophic",), "destructive")


def kinds(store: Store, after: int = 0) -> list[str]:
    return [e.kind for e in store.events_after(after, 1000)]


# ----------------------------------------------------------------------------- requests


def test_create_sets_digest_binding_times(store: Store) -> None:
    req = make_request()
    created = store.create_request(req, now=NOW)
    assert created.id and created.state == "pending"
    assert created.digest == req.call.digest()
    kid, _, mac = created.binding.partition(":")  # KID:HEX: the store names its key by id
    assert kid and len(mac) == 64
    assert created.created_at == NOW and created.expires_at == NOW + 24 * 3600
    assert store.get_request(created.id) == created
    short = store.create_request(make_request(), ttl_seconds=60, now=NOW)
    assert short.expires_at == NOW + 60
    with pytest.raises(NotFound):
        store.get_request("nope")
    with pytest.raises(InvalidInput, match="already exists"):
        store.create_request(make_request(id=created.id), now=NOW)


def test_list_newest_first_with_filters(store: Store) -> None:
    a = store.create_request(make_request(run_id="r1"), now=NOW)
    b = store.create_request(make_request(run_id="r2", tenant="acme"), now=NOW + 1)
    c = store.create_request(make_request(run_id="r1"), now=NOW + 2)
    store.decide(c.id, Decision("approve"), actor="ann", now=NOW + 3)
    assert [r.id for r in store.list_requests()] == [c.id, b.id, a.id]
    assert [r.id for r in store.list_requests(run_id="r1")] == [c.id, a.id]
    assert [r.id for r in store.list_requests(state="pending")] == [b.id, a.id]
    assert [r.id for r in store.list_requests(tenant="acme")] == [b.id]
    assert len(store.list_requests(limit=1)) == 1


def test_full_lifecycle_and_its_events(store: Store) -> None:
    r = store.create_request(make_request(), now=NOW)
    d = store.decide(r.id, Decision("approve", reason="ok"), actor="ann", now=NOW + 1)
    assert d.state == "approved" and d.decision is not None
    assert (d.decision.actor, d.decision.decided_at, d.decision.reason) == ("ann", NOW + 1, "ok")
    c = store.claim(r.id, worker="w1", lease_seconds=30, now=NOW + 2)
    assert c.request.call == r.call and c.lease_expires_at == NOW + 32 and c.worker == "w1"
    f = store.finish(r.id, c.token, ok=True, result={"stdout": "done"}, now=NOW + 3)
    assert f.state == "finished"
    outcome = store.get_outcome(r.id)
    assert outcome is not None and outcome["ok"] and outcome["result"] == {"stdout": "done"}
    assert len(outcome["result_digest"]) == 64
    assert kinds(store) == [
        "request.created",
        "request.decided",
        "request.claimed",
        "request.finished",
    ]
    assert {e.request_id for e in store.events_after(0)} == {r.id}


def test_deliveries_of_a_request_at_any_age(store: Store) -> None:
    a = store.create_request(make_request(), now=NOW)
    b = store.create_request(make_request(), now=NOW)
    for n in range(30):  # deliveries for both, among other events
        rid = a.id if n % 3 == 0 else b.id
        kind = "notify.failed" if n == 0 else "notify.delivered"
        store.record(kind, {"channel": "ops", "n": n}, request_id=rid, now=NOW + n)
        store.record("verdict", {"n": n}, request_id=rid, now=NOW + n)
    found = store.deliveries(a.id)
    assert [e.data["n"] for e in found] == list(range(0, 30, 3))
    assert found[0].kind == "notify.failed" and {e.request_id for e in found} == {a.id}
    assert store.deliveries("no-such-request") == []


def test_several_events_in_one_transaction(store: Store) -> None:
    """record_many: all the events, in order, at one time, chained like any other; or,
    when one of them is bad, none of them."""
    before = store.last_seq()
    drafts = [
        Draft("session.outcome", None, "run-1", None, {"n": 1}),
        Draft("verdict", "req-1", "run-2", "ann", {"n": 2}),
    ]
    seqs = store.record_many(drafts, now=NOW)
    found = store.events_after(before, 10)
    assert [e.seq for e in found] == seqs and len(seqs) == 2
    assert [(e.kind, e.run_id, e.request_id, e.actor, e.data) for e in found] == [
        ("session.outcome", "run-1", None, None, {"n": 1}),
        ("verdict", "run-2", "req-1", "ann", {"n": 2}),
    ]
    assert {e.ts for e in found} == {NOW}
    with pytest.raises(InvalidInput, match=r"record"):
        store.record_many(
            [Draft("verdict", None, None, None, {"n": 3}), Draft("", None, None, None, {})]
        )
    assert store.last_seq() == seqs[-1]  # nothing of the bad batch was written
    assert store.record_many([]) == []
    assert store.verify_chain()[0]


def test_outcomes_of_a_list_in_one_call(store: Store) -> None:
    done = store.create_request(make_request(), now=NOW)
    waiting = store.create_request(make_request(), now=NOW)
    store.decide(done.id, Decision("approve"), actor="ann", now=NOW + 1)
    claim = store.claim(done.id, worker="w1", now=NOW + 2)
    store.finish(done.id, claim.token, ok=False, result={"error": "boom"}, now=NOW + 3)
    found = store.get_outcomes([done.id, waiting.id, "no-such-request", done.id])
    assert found == {done.id: store.get_outcome(done.id), waiting.id: None}
    assert found[done.id] is not None and found[done.id]["result"] == {"error": "boom"}
    assert store.get_outcomes([]) == {}


@pytest.mark.parametrize(
    ("decision", "state"),
    [
        (Decision("reject", reason="too risky"), "rejected"),
        (Decision("skip"), "skipped"),
        (Decision("respond", result={"answer": "blue"}), "answered"),
        (Decision("approve_always", scope="project", rule="Bash(rm -rf build)"), "approved"),
    ],
)
def test_each_decision_kind(store: Store, decision: Decision, state: str) -> None:
    r = store.create_request(make_request(), now=NOW)
    decided = store.decide(r.id, decision, actor="ann", now=NOW + 1)
    assert decided.state == state and decided.decision is not None
    assert decided.decision.kind == decision.kind
    assert store.get_request(r.id).decision == decided.decision
    if state != "approved":
        with pytest.raises(ConflictError, match=state):
            store.claim(r.id, worker="w", now=NOW + 2)


def test_deciding_twice_names_the_winner(store: Store) -> None:
    r = store.create_request(make_request(), now=NOW)
    store.decide(r.id, Decision("reject", reason="no"), actor="ann", now=NOW + 1)
    with pytest.raises(AlreadyDecided, match=r"reject by ann at 2027-01-15") as err:
        store.decide(r.id, Decision("approve"), actor="bob", now=NOW + 2)
    assert "rejected" in str(err.value)
    assert store.get_request(r.id).state == "rejected"


def test_edit_keeps_original_and_rebinds(store: Store) -> None:
    r = store.create_request(make_request(), now=NOW)
    with pytest.raises(InvalidInput, match="new_verdict"):
        store.decide(r.id, Decision("edit", arguments={"command": "ls"}), actor="ann", now=NOW)
    assert store.get_request(r.id).state == "pending"
    e = store.decide(
        r.id,
        Decision("edit", arguments={"command": "ls build"}),
        actor="ann",
        new_verdict=ALLOW,
        now=NOW + 1,
    )
    assert e.state == "approved" and e.call.arguments == {"command": "ls build"}
    assert e.digest == e.call.digest() != r.digest and e.binding != r.binding
    assert e.verdict == ALLOW
    assert e.metadata["original_call"]["arguments"] == {"command": "rm -rf build"}
    assert e.decision is not None and e.decision.arguments == {"command": "ls build"}
    event = store.events_after(1)[0]
    assert event.data["original_arguments"] == {"command": "rm -rf build"}
    assert event.data["arguments"] == {"command": "ls build"}
    claim = store.claim(r.id, worker="w", now=NOW + 2)  # integrity holds after re-binding
    assert claim.request.call.arguments == {"command": "ls build"}


def test_edit_into_a_denied_call_is_rejected(store: Store) -> None:
    r = store.create_request(make_request(), now=NOW)
    e = store.decide(
        r.id,
        Decision("edit", arguments={"command": "rm -rf /"}),
        actor="ann",
        new_verdict=DENY,
        now=NOW + 1,
    )
    assert e.state == "rejected" and e.verdict.effect == "deny"
    with pytest.raises(ConflictError):
        store.claim(r.id, worker="w", now=NOW + 2)


# ----------------------------------------------------------------------------- refusals


def test_expired_request_cannot_be_decided(store: Store) -> None:
    r = store.create_request(make_request(), ttl_seconds=10, now=NOW)
    with pytest.raises(RequestExpired):
        store.decide(r.id, Decision("approve"), actor="ann", now=NOW + 10)
    assert store.get_request(r.id).state == "expired"  # the refusal kept the expiry
    with pytest.raises(RequestExpired):
        store.decide(r.id, Decision("approve"), actor="ann", now=NOW + 11)
    assert kinds(store)[-1] == "request.expired"


def test_approval_not_claimed_before_expiry_never_runs(store: Store) -> None:
    r = store.create_request(make_request(), ttl_seconds=10, now=NOW)
    store.decide(r.id, Decision("approve"), actor="ann", now=NOW + 1)
    with pytest.raises(RequestExpired, match="not claimed before its expiry"):
        store.claim(r.id, worker="w", now=NOW + 10)
    assert store.get_request(r.id).state == "expired"


def test_expire_stale(store: Store) -> None:
    old = store.create_request(make_request(), ttl_seconds=10, now=NOW)
    fresh = store.create_request(make_request(), ttl_seconds=1000, now=NOW)
    assert store.expire_stale(now=NOW + 20) == [old.id]
    assert store.get_request(old.id).state == "expired"
    assert store.get_request(fresh.id).state == "pending"
    assert store.expire_stale(now=NOW + 20) == []


def test_unauthorized_approver(store: Store) -> None:
    r = store.create_request(make_request(approvers=("alice", "role:ops")), now=NOW)
    with pytest.raises(NotAuthorized, match="bob may not decide"):
        store.decide(r.id, Decision("approve"), actor="bob", actor_roles=("dev",), now=NOW)
    assert store.get_request(r.id).state == "pending"
    ok = store.decide(r.id, Decision("approve"), actor="carol", actor_roles=("ops",), now=NOW)
    assert ok.decision is not None and ok.decision.actor == "carol"
    r2 = store.create_request(make_request(approvers=("alice",)), now=NOW)
    assert store.decide(r2.id, Decision("skip"), actor="alice", now=NOW).state == "skipped"


def test_claim_twice_and_finish_with_wrong_token(store: Store) -> None:
    r = store.create_request(make_request(), now=NOW)
    with pytest.raises(ConflictError, match="pending"):
        store.claim(r.id, worker="w1", now=NOW)
    store.decide(r.id, Decision("approve"), actor="ann", now=NOW)
    c = store.claim(r.id, worker="w1", lease_seconds=60, now=NOW + 1)
    with pytest.raises(AlreadyClaimed, match="claimed by w1"):
        store.claim(r.id, worker="w2", now=NOW + 2)
    with pytest.raises(NotAuthorized, match="token"):
        store.finish(r.id, "forged-token", ok=True, now=NOW + 3)
    store.finish(r.id, c.token, ok=False, result_digest="abc", now=NOW + 3)
    assert store.get_request(r.id).state == "failed"
    with pytest.raises(AlreadyClaimed, match="already"):
        store.finish(r.id, c.token, ok=True, now=NOW + 4)
    with pytest.raises(AlreadyClaimed, match="already ran"):
        store.claim(r.id, worker="w3", now=NOW + 5)


def test_tampered_payload_is_refused(backend: Backend) -> None:
    store = backend.open()
    r = store.create_request(make_request(), now=NOW)
    store.decide(r.id, Decision("approve"), actor="ann", now=NOW)
    backend.edit_doc(r.id, lambda d: d["call"]["arguments"].update(command="rm -rf /"))
    with pytest.raises(IntegrityError, match="does not match its digest"):
        store.claim(r.id, worker="w", now=NOW + 1)
    # recomputing the digest too does not help: the binding is keyed
    from signoff.models import ToolCall

    def forge(d: dict[str, Any]) -> None:
        d["digest"] = ToolCall.from_json(d["call"]).digest()

    backend.edit_doc(r.id, forge)
    with pytest.raises(IntegrityError, match="binding"):
        store.claim(r.id, worker="w", now=NOW + 1)
    assert store.get_request(r.id).state == "approved"


def test_forged_binding_is_refused(backend: Backend) -> None:
    store = backend.open()
    r = store.create_request(make_request(approvers=("alice",)), now=NOW)
    other = store.create_request(make_request(), now=NOW)
    with pytest.raises(IntegrityError, match="another request"):
        store.decide(r.id, Decision("approve"), actor="alice", binding=other.binding, now=NOW)
    assert store.decide(r.id, Decision("approve"), actor="alice", binding=r.binding, now=NOW)
    backend.edit_doc(r.id, lambda d: d.update(binding="0" * 64))
    with pytest.raises(IntegrityError, match="binding"):
        store.claim(r.id, worker="w", now=NOW)
    # widening the approvers in the database is caught before a decision
    backend.edit_doc(other.id, lambda d: d.update(approvers=["mallory"]))
    with pytest.raises(IntegrityError, match="binding"):
        store.decide(other.id, Decision("approve"), actor="mallory", now=NOW)


# ----------------------------------------------------------------------------- leases


def test_lapsed_lease_goes_in_doubt_and_a_person_resolves(store: Store) -> None:
    r = store.create_request(make_request(), now=NOW)
    store.decide(r.id, Decision("approve"), actor="ann", now=NOW)
    first = store.claim(r.id, worker="w1", lease_seconds=10, now=NOW)
    assert store.sweep_leases(now=NOW + 5) == []
    assert store.sweep_leases(now=NOW + 10) == [r.id]
    assert store.get_request(r.id).state == "in_doubt"
    with pytest.raises(AlreadyClaimed, match="in doubt"):
        store.claim(r.id, worker="w2", now=NOW + 11)
    pending = store.create_request(make_request(), now=NOW)
    with pytest.raises(ConflictError, match="not in doubt"):
        store.resolve_in_doubt(pending.id, "retry", actor="ann")
    assert store.resolve_in_doubt(r.id, "retry", actor="ann", now=NOW + 12).state == "approved"
    second = store.claim(r.id, worker="w2", lease_seconds=10, now=NOW + 13)
    with pytest.raises(NotAuthorized):  # the old claim's token is void after a retry
        store.finish(r.id, first.token, ok=True, now=NOW + 14)
    store.sweep_leases(now=NOW + 30)
    # the late worker still reports the truth with its token
    assert store.finish(r.id, second.token, ok=True, now=NOW + 31).state == "finished"
    assert "request.in_doubt" in kinds(store) and "request.resolved" in kinds(store)


def test_resolve_done_and_failed(store: Store) -> None:
    ids = []
    for _ in range(2):
        r = store.create_request(make_request(), now=NOW)
        store.decide(r.id, Decision("approve"), actor="ann", now=NOW)
        store.claim(r.id, worker="w", lease_seconds=1, now=NOW)
        ids.append(r.id)
    assert sorted(store.sweep_leases(now=NOW + 2)) == sorted(ids)
    assert store.resolve_in_doubt(ids[0], "done", actor="ann").state == "finished"
    assert store.resolve_in_doubt(ids[1], "failed", actor="ann").state == "failed"
    outcome = store.get_outcome(ids[0])
    assert outcome is not None and outcome["resolved_by"] == "ann"


def test_idempotent_tools_are_reclaimed_automatically(store: Store) -> None:
    r = store.create_request(make_request(), idempotent=True, now=NOW)
    store.decide(r.id, Decision("approve"), actor="ann", now=NOW)
    store.claim(r.id, worker="w1", lease_seconds=10, now=NOW)
    with pytest.raises(AlreadyClaimed):
        store.claim(r.id, worker="w2", now=NOW + 5)
    again = store.claim(r.id, worker="w2", lease_seconds=10, now=NOW + 10)  # lease lapsed
    assert again.worker == "w2"
    assert kinds(store)[-2:] == ["request.in_doubt", "request.claimed"]
    assert store.events_after(0)[-1].data["reclaim"] is True


# ----------------------------------------------------------------------------- grants


def test_grants(store: Store) -> None:
    g1 = store.add_grant(Grant("Bash(npm test)", "project"), now=NOW)
    g2 = store.add_grant(Grant("Bash(ls *)", "run", expires_at=NOW + 60), run_id="r1", now=NOW + 1)
    assert g1.id and g1.created_at == NOW
    assert [g.id for g in store.list_grants()] == [g2.id, g1.id]
    assert [g.id for g in store.list_grants(scope="project")] == [g1.id]
    assert [g.id for g in store.list_grants(run_id="r1")] == [g2.id]
    assert store.revoke_grant(g1.id, actor="ann").rule == "Bash(npm test)"
    assert [g.id for g in store.list_grants()] == [g2.id]
    with pytest.raises(NotFound):
        store.revoke_grant(g1.id)
    assert kinds(store) == ["grant.added", "grant.added", "grant.revoked"]


# ----------------------------------------------------------------------------- events


def test_cursors_survive_reopen(backend: Backend) -> None:
    store = backend.open()
    for i in range(5):
        store.record("verdict", {"effect": "allow", "i": i}, run_id="r1", now=NOW + i)
    assert store.last_seq() == 5
    got = store.read_events("webhook", limit=3)
    assert [e.seq for e in got] == [1, 2, 3] and got[0].data == {"effect": "allow", "i": 0}
    store.ack("webhook", 2)
    store.ack("webhook", 1)  # never backwards
    with pytest.raises(InvalidInput):
        store.ack("webhook", 99)
    again = backend.open()  # another Store object, as after a restart
    assert [e.seq for e in again.read_events("webhook")] == [3, 4, 5]  # at-least-once
    assert [e.seq for e in again.read_events("other")] == [1, 2, 3, 4, 5]
    again.ack("webhook", 5)
    assert backend.open().read_events("webhook") == []
    assert again.events_after(4)[0].to_json()["v"] == 1


def test_wait_for_event(store: Store) -> None:
    assert store.wait_for_event(0.05) is False
    seq = store.last_seq()
    timer = threading.Timer(0.1, lambda: store.record("run.resumed", {}))
    timer.start()
    started = time.monotonic()
    assert store.wait_for_event(5, after_seq=seq) is True
    assert time.monotonic() - started < 4
    timer.join()


def _history(store: Store) -> None:
    r = store.create_request(make_request(), now=NOW)
    store.decide(r.id, Decision("approve"), actor="ann", now=NOW + 1)
    c = store.claim(r.id, worker="w", now=NOW + 2)
    store.finish(r.id, c.token, ok=True, now=NOW + 3)
    store.record("verdict", {"effect": "allow"}, now=NOW + 4)
    store.add_grant(Grant("Bash(ls)", "project"), now=NOW + 5)


def _edit(rows: list[list[Any]]) -> list[list[Any]]:
    entry = json.loads(rows[1][5])
    entry["actor"] = "mallory"
    rows[1][5] = json.dumps(entry, sort_keys=True, separators=(",", ":"))
    return rows


def _insert(rows: list[list[Any]]) -> list[list[Any]]:
    # a well-formed forged entry, hashed the way the store hashes, linked to entry 2: its
    # hash verifies, but it has no MAC (the audit key is not in the store), so it is the
    # first bad entry
    from signoff.store.base import Draft
    from signoff.store.chain import chain_hash

    entry = Draft("request.decided", None, None, "mallory", {"forged": True}).entry(NOW)
    fake = [3, NOW, "request.decided", None, None, entry, rows[1][7], chain_hash(rows[1][7], entry)]
    out = [*rows[:2], fake, *rows[2:]]
    return [[i + 1, *r[1:]] for i, r in enumerate(out)]


def _reorder(rows: list[list[Any]]) -> list[list[Any]]:
    rows[1][1:], rows[2][1:] = rows[2][1:], rows[1][1:]
    return rows


TAMPERS = {
    "edited": (_edit, 2),
    "edited-column": (
        lambda rows: [*rows[:3], [*rows[3][:2], "request.created", *rows[3][3:]], *rows[4:]],
        4,
    ),
    "deleted-middle": (lambda rows: rows[:2] + rows[3:], 3),
    "deleted-tail": (lambda rows: rows[:-1], 6),
    "inserted": (_insert, 3),
    "reordered": (_reorder, 2),
    "renumbered": (lambda rows: [[r[0] + 1, *r[1:]] for r in rows], 1),
}


@pytest.mark.parametrize("tamper", sorted(TAMPERS))
def test_chain_detects_tampering(backend: Backend, tamper: str) -> None:
    store = backend.open()
    _history(store)
    assert store.verify_chain() == (True, None, "6 entries verified")
    fn, first_bad = TAMPERS[tamper]
    backend.replace_events(fn(backend.events()))
    ok, bad, message = store.verify_chain()
    assert (ok, bad) == (False, first_bad), message
    assert str(first_bad) in message


def test_audit_hashes_match_across_backends(store: Store) -> None:
    from signoff.store.chain import GENESIS_HASH, chain_hash

    _history(store)
    prev = GENESIS_HASH
    for event in store.events_after(0):
        assert event.prev_hash == prev
        prev = event.hash
    rows = store.events_after(0)
    assert all(len(e.hash) == 64 for e in rows)
    assert chain_hash(GENESIS_HASH, "x") == chain_hash(GENESIS_HASH, "x")


# ----------------------------------------------------------------------------- versions


def test_newer_document_is_refused(backend: Backend) -> None:
    store = backend.open()
    r = store.create_request(make_request(), now=NOW)
    backend.edit_doc(r.id, lambda d: d.update(v=99))
    with pytest.raises(SchemaVersionError, match="version 99"):
        store.get_request(r.id)


def test_migrations_and_newer_schema(backend: Backend) -> None:
    store = backend.open()
    assert store.migrate() == []  # opening applied them already
    if backend.kind == "memory":
        return
    from signoff.store import migrations

    applied = [v for (v,) in backend.sql("SELECT version FROM schema_migrations ORDER BY version")]
    assert applied == list(range(1, migrations.latest(backend.kind) + 1)) and len(applied) >= 3
    backend.sql("INSERT INTO schema_migrations VALUES (?, ?)", (999, NOW))
    with pytest.raises(SchemaVersionError, match="newer than this signoff"):
        backend.open()


def test_open_store_urls(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from signoff.exceptions import ConfigurationError
    from signoff.store.memory import MemoryStore
    from signoff.store.sqlite import SQLiteStore

    assert isinstance(open_store("memory:"), MemoryStore)
    monkeypatch.chdir(tmp_path)
    s = open_store("sqlite:///rel.db")
    assert isinstance(s, SQLiteStore) and (tmp_path / "rel.db").exists()
    s.close()
    s = open_store(f"sqlite:///{tmp_path}/abs.db")
    assert (tmp_path / "abs.db").exists()
    s.close()
    monkeypatch.setenv("SIGNOFF_DB", str(tmp_path / "env.db"))
    open_store().close()
    assert (tmp_path / "env.db").exists()
    monkeypatch.delenv("SIGNOFF_DB")
    open_store(workspace=tmp_path / "ws").close()
    assert (tmp_path / "ws" / ".signoff" / "signoff.db").exists()
    with pytest.raises(ConfigurationError, match="unknown store URL"):
        open_store("redis://x")
    assert isinstance(s, Store)


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
def test_a_copy_held_by_the_store_never_hides_a_change(kind: str, tmp_path: Path) -> None:
    # a SQL store keeps a copy of the rows it wrote; a change made behind its back, even
    # one that keeps the version column as it was, is seen before anything runs
    backend = Backend(kind, tmp_path)
    try:
        _copy_never_hides_a_change(backend)
    finally:
        backend.close()


def _copy_never_hides_a_change(backend: Backend) -> None:
    store = backend.open()
    r = store.create_request(make_request(), now=NOW)
    store.decide(r.id, Decision("approve"), actor="ann", now=NOW)
    (before,) = backend.sql("SELECT version FROM signoff_requests WHERE id = ?", (r.id,))[0]
    (doc,) = backend.sql("SELECT doc FROM signoff_requests WHERE id = ?", (r.id,))[0]
    tampered = doc.replace("rm -rf build", "rm -rf /")
    backend.sql(
        "UPDATE signoff_requests SET doc = ?, version = ? WHERE id = ?", (tampered, before, r.id)
    )
    (after,) = backend.sql("SELECT version FROM signoff_requests WHERE id = ?", (r.id,))[0]
    assert after == before + 1
    with pytest.raises(IntegrityError, match="does not match its digest"):
        store.claim(r.id, worker="w", now=NOW + 1)


def test_event_kinds_are_printable(store: Store) -> None:
    for kind in ("", "two\nlines", "tab\there"):
        with pytest.raises(InvalidInput, match="event kind"):
            store.record(kind, {})
    assert store.last_seq() == 0


def test_unreachable_postgres_names_the_cause() -> None:
    # a closed port: refused at once, and the message says so (not "pool gave up")
    from signoff.exceptions import ConfigurationError

    pytest.importorskip("psycopg")
    with pytest.raises(ConfigurationError, match="refused"):
        open_store("postgresql://postgres@127.0.0.1:1/test")
