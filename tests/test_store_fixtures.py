"""Frozen JSON of every stored document kind (schema v1), loaded by today's code.

The files in tests/fixtures/v1 were written once by the store and must never be
regenerated: if one of these tests fails, the stored format changed and needs a new
schema version and a migration, not a new fixture. Bindings were made with an all-zero
key so they can be checked here.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from signoff.exceptions import SchemaVersionError
from signoff.models import Decision, Grant, Request
from signoff.store.base import Draft, Event
from signoff.store.chain import GENESIS_HASH, chain_hash
from signoff.store.integrity import binding_of
from signoff.store.sqlite import SQLiteStore

V1 = Path(__file__).parent / "fixtures" / "v1"
KEY = bytes(32)


def load(name: str) -> Any:
    return json.loads((V1 / name).read_text(encoding="utf-8"))


@pytest.mark.parametrize("name", ["request_pending.json", "request_edited.json"])
def test_requests_load_and_verify(name: str) -> None:
    doc = load(name)
    request = Request.from_json(doc)
    assert request.to_json() == doc
    assert request.digest == request.call.digest()
    assert request.binding == binding_of(
        KEY, request.id, request.approvers, request.digest, request.expires_at
    )


def test_edited_request_keeps_the_original() -> None:
    request = Request.from_json(load("request_edited.json"))
    assert request.state == "approved" and request.decision is not None
    assert request.decision.kind == "edit" and request.decision.actor == "alice"
    assert request.call.arguments["command"] == "rm -rf build/cache"
    assert request.metadata["original_call"]["arguments"]["command"] == "rm -rf build"
    assert request.metadata["original_digest"] != request.digest


@pytest.mark.parametrize(
    "name", ["decision_reject.json", "decision_respond.json", "decision_approve_always.json"]
)
def test_decisions_load(name: str) -> None:
    doc = load(name)
    assert Decision.from_json(doc).to_json() == doc


def test_grant_and_outcome_load() -> None:
    doc = load("grant.json")
    assert Grant.from_json(doc).to_json() == doc
    outcome = load("outcome.json")
    assert outcome["v"] == 1 and outcome["ok"] is True
    assert set(outcome) == {"v", "ok", "result", "result_digest", "finished_at", "worker"}


def test_events_load_and_the_chain_format_is_frozen() -> None:
    prev = GENESIS_HASH
    kinds = []
    for doc in load("events.json"):
        event = Event(**{k: v for k, v in doc.items() if k != "v"})
        entry = Draft(event.kind, event.request_id, event.run_id, event.actor, event.data).entry(
            event.ts
        )
        assert event.prev_hash == prev and chain_hash(prev, entry) == event.hash
        assert Event.from_entry(event.seq, entry, prev, event.hash).to_json() == doc
        prev = event.hash
        kinds.append(event.kind)
    assert kinds == [
        "request.created",
        "request.decided",
        "request.claimed",
        "request.finished",
        "grant.added",
    ]


@pytest.mark.parametrize(
    ("name", "parse"),
    [
        ("request_pending.json", Request.from_json),
        ("decision_reject.json", Decision.from_json),
        ("grant.json", Grant.from_json),
    ],
)
def test_newer_versions_are_refused(name: str, parse: Any) -> None:
    doc = {**load(name), "v": 2}
    with pytest.raises(SchemaVersionError, match="version 2"):
        parse(doc)


def test_a_frozen_request_reads_back_from_a_real_store(tmp_path: Path) -> None:
    doc = load("request_edited.json")
    store = SQLiteStore(tmp_path / "s.db")
    store._conn.execute(
        "INSERT INTO signoff_requests (id, state, run_id, tenant, created_at, expires_at, "
        "idempotent, doc) VALUES (?, ?, ?, ?, ?, ?, 0, ?)",
        (
            doc["id"],
            doc["state"],
            doc["run_id"],
            doc["tenant"],
            doc["created_at"],
            doc["expires_at"],
            json.dumps(doc),
        ),
    )
    assert store.get_request(doc["id"]).to_json() == doc
    assert [r.id for r in store.list_requests(run_id="run_0001")] == [doc["id"]]
    store.close()


def test_a_frozen_run_loads_and_reads_back_from_a_real_store(tmp_path: Path) -> None:
    from signoff.runs.agent import Run

    doc, messages = load("run_paused.json"), load("run_messages.json")
    run = Run.from_json(doc)
    assert run.to_json() == doc
    assert run.waiting_on == ["req_0123456789abcdef"] and run.pending[1].content == "# signoff\n"
    with pytest.raises(SchemaVersionError, match="version 2"):
        Run.from_json({**doc, "v": 2})
    store = SQLiteStore(tmp_path / "s.db")
    store._conn.execute(
        "INSERT INTO signoff_runs (id, status, tenant, thread, created_at, updated_at, "
        "message_count, version, doc) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            doc["id"],
            doc["status"],
            doc["tenant"],
            doc["thread"],
            doc["created_at"],
            doc["updated_at"],
            doc["message_count"],
            doc["version"],
            json.dumps(doc),
        ),
    )
    for seq, message in enumerate(messages):
        store._conn.execute(
            "INSERT INTO signoff_messages (run_id, seq, msg) VALUES (?, ?, ?)",
            (doc["id"], seq, json.dumps(message)),
        )
    assert store.get_run(doc["id"]).to_json() == doc
    assert store.load_messages(doc["id"]) == messages
    saved = store.save_run(
        run,
        [{"role": "tool", "tool_call_id": "call_1", "content": "ok"}],
        expected_version=4,
        now=1_800_000_100.0,
    )
    assert (saved.version, saved.message_count) == (5, 3)
    store.close()
