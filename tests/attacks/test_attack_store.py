"""Issue 11, promise 6: the store cannot approve on its own.

An attacker who can write the database (direct SQL on the real SQLite file and on the real
PostgreSQL) but does not hold the keys, which live outside the store and the workspace,
tries to make a call run without a person, to run something other than what a person
approved, to show the reviewer something else than what runs, and to hide or forge audit
entries. Every attempt is performed for real; each test asserts that the call never ran
(the harness's tool writes a line per real execution), that the refusal is on the record,
and that `signoff audit verify` (the CLI, in a subprocess) fails and names the problem.

Counted at the end of the module (ATTACKS): tried / held per promise.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
import shutil
import socket
import subprocess
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from signoff.keys import load_keys
from signoff.models import Decision, Grant, ToolCall
from signoff.store import open_store
from signoff.store.chain import chain_hash
from signoff.store.integrity import binding_of
from store_helpers import Backend, make_request

HARNESS = Path(__file__).parent.parent / "helpers" / "crash_harness.py"


def harness(db: Backend, phase: str, effects: Path) -> subprocess.CompletedProcess[str]:
    """The real agent process (tests/helpers/crash_harness.py): `charge` asks; each real
    execution appends a line to `effects`."""
    return subprocess.run(
        [sys.executable, str(HARNESS), db.url, phase, "none", str(effects)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def signoff(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "signoff", *argv],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def executions(effects: Path) -> list[str]:
    return effects.read_text().splitlines() if effects.exists() else []


def paused_request(db: Backend, effects: Path) -> str:
    started = harness(db, "start", effects)
    assert started.stdout.startswith("paused "), started.stderr
    return started.stdout.split()[1]


def row(db: Backend, rid: str) -> tuple[str, dict[str, Any]]:
    state, doc = db.sql("SELECT state, doc FROM signoff_requests WHERE id = ?", (rid,))[0]
    return str(state), json.loads(doc)


def rewrite(db: Backend, rid: str, state: str, doc: dict[str, Any]) -> None:
    """The attacker's UPDATE: state column and document together (they must agree)."""
    doc["state"] = state
    db.sql(
        "UPDATE signoff_requests SET state = ?, doc = ? WHERE id = ?", (state, json.dumps(doc), rid)
    )


def kinds(db: Backend, rid: str) -> list[str]:
    return [
        str(r[0])
        for r in db.sql("SELECT kind FROM signoff_events WHERE request_id = ? ORDER BY seq", (rid,))
    ]


def assert_verify_fails(db: Backend, *words: str) -> str:
    done = signoff("audit", "verify", "--db", db.url)
    out = done.stdout + done.stderr
    assert done.returncode == 1, out
    assert "TAMPERED" in out and "Traceback" not in out, out
    for word in words:
        assert word in " ".join(out.split()), out
    return out


def forged_approval(at: float = 1_800_000_000.0) -> dict[str, Any]:
    return {"v": 1, "kind": "approve", "actor": "alice", "decided_at": at}


def real_kid(doc: dict[str, Any]) -> str:
    return str(doc["binding"]).split(":", 1)[0]


def guessed_mac(kid: str, message: str) -> str:
    """What an attacker without the key can make: a MAC under a key of its own, labelled
    with the real key id."""
    tag = hmac.new(b"attacker" * 4, message.encode(), hashlib.sha256).hexdigest()
    return f"{kid}:{tag}"


def call_digest(call: dict[str, Any]) -> str:
    return ToolCall.from_json(call).digest()


# --------------------------------------------------------------------------- requests
# (finding 5: S4, S5b, S6, S7 and variants)


def _s4_state_flip(db: Backend, rid: str, doc: dict[str, Any]) -> None:
    doc["decision"] = forged_approval()
    rewrite(db, rid, "approved", doc)


def _s4_forged_record(db: Backend, rid: str, doc: dict[str, Any]) -> None:
    doc["decision"] = forged_approval()
    doc["decision_mac"] = guessed_mac(real_kid(doc), "anything")
    rewrite(db, rid, "approved", doc)


def _s4_copied_record(db: Backend, rid: str, doc: dict[str, Any]) -> None:
    # a real approval of another request, with its valid decision record, pasted in
    store = open_store(db.url)
    try:
        other = store.create_request(make_request(run_id="run_crash"))
        approved = store.decide(other.id, Decision("approve"), actor="alice")
    finally:
        store.close()
    assert approved.decision is not None
    doc["decision"] = approved.decision.to_json()
    doc["decision_mac"] = approved.decision_mac
    rewrite(db, rid, "approved", doc)


def _s4_in_doubt(db: Backend, rid: str, doc: dict[str, Any]) -> None:
    # claimable again only if idempotent: make it so, with a forged approval
    doc["decision"] = forged_approval()
    rewrite(db, rid, "in_doubt", doc)
    db.sql("UPDATE signoff_requests SET idempotent = 1 WHERE id = ?", (rid,))


def _s6_no_human_new_payload(db: Backend, rid: str, doc: dict[str, Any]) -> None:
    doc["call"]["arguments"]["amount"] = 4200
    doc["digest"] = call_digest(doc["call"])
    doc["binding"] = guessed_mac(real_kid(doc), "binding")
    doc["decision"] = forged_approval()
    doc["decision_mac"] = guessed_mac(real_kid(doc), "decision")
    rewrite(db, rid, "approved", doc)


def _s6_legacy_binding(db: Backend, rid: str, doc: dict[str, Any]) -> None:
    # downgrade to an older signoff's plain-hex binding, made with a key of the attacker's
    # own, which it also plants where older versions kept theirs
    key = b"\x07" * 32
    db.sql("INSERT INTO signoff_meta (key, value) VALUES ('binding_key', ?)", (key.hex(),))
    doc["call"]["arguments"]["amount"] = 4200
    doc["digest"] = call_digest(doc["call"])
    doc["binding"] = binding_of(key, rid, doc["approvers"], doc["digest"], doc["expires_at"])
    doc["decision"] = forged_approval()
    doc.pop("decision_mac", None)
    rewrite(db, rid, "approved", doc)


REQUEST_TAMPERS_PENDING: dict[str, Callable[[Backend, str, dict[str, Any]], None]] = {
    "S4 state set to approved with a decision in the document": _s4_state_flip,
    "S4 plus a decision record MACed with a guessed key": _s4_forged_record,
    "S4 plus another request's real decision record": _s4_copied_record,
    "S4 state set to in_doubt, made idempotent": _s4_in_doubt,
    "S6 no human: new payload, digest, binding and record": _s6_no_human_new_payload,
    "S6 downgraded to a legacy binding with a planted key": _s6_legacy_binding,
}


@pytest.mark.parametrize("attack", sorted(REQUEST_TAMPERS_PENDING))
def test_a_request_approved_in_the_database_never_runs(
    db: Backend, tmp_path: Path, attack: str
) -> None:
    effects = tmp_path / "effects.log"
    rid = paused_request(db, effects)
    state, doc = row(db, rid)
    assert state == "pending"
    REQUEST_TAMPERS_PENDING[attack](db, rid, doc)

    resumed = harness(db, "resume", effects)
    assert "Traceback" not in resumed.stderr, resumed.stderr
    assert executions(effects) == []  # the call never ran
    assert row(db, rid)[0] not in ("claimed", "finished", "failed")
    assert "request.integrity_failed" in kinds(db, rid)  # the refusal is on the record
    assert "request.claimed" not in kinds(db, rid)
    assert_verify_fails(db, rid)


def _s5b_payload(db: Backend, rid: str, doc: dict[str, Any]) -> None:
    doc["call"]["arguments"]["amount"] = 4200
    doc["digest"] = call_digest(doc["call"])
    rewrite(db, rid, "approved", doc)


def _s5b_payload_and_binding(db: Backend, rid: str, doc: dict[str, Any]) -> None:
    _s6_no_human_new_payload(db, rid, doc)


def _s5b_keep_record(db: Backend, rid: str, doc: dict[str, Any]) -> None:
    # the real record is kept, binding recomputed with a guess: the record covers the
    # binding and the digest, so neither may change
    doc["call"]["arguments"]["amount"] = 4200
    doc["digest"] = call_digest(doc["call"])
    doc["binding"] = guessed_mac(real_kid(doc), "binding")
    rewrite(db, rid, "approved", doc)


def _s7_preview_after(db: Backend, rid: str, doc: dict[str, Any]) -> None:
    doc["preview"] = "(nothing will be charged: dry run)"
    rewrite(db, rid, "approved", doc)


def _s5b_approver_changed(db: Backend, rid: str, doc: dict[str, Any]) -> None:
    doc["decision"]["actor"] = "mallory"
    rewrite(db, rid, "approved", doc)


REQUEST_TAMPERS_APPROVED: dict[str, Callable[[Backend, str, dict[str, Any]], None]] = {
    "S5b payload rewritten, digest recomputed": _s5b_payload,
    "S5b payload, digest and binding recomputed with a guessed key": _s5b_payload_and_binding,
    "S5b payload rewritten, the real decision record kept": _s5b_keep_record,
    "S5b the recorded decider changed": _s5b_approver_changed,
    "S7 preview rewritten after the approval": _s7_preview_after,
}


@pytest.mark.parametrize("attack", sorted(REQUEST_TAMPERS_APPROVED))
def test_a_rewritten_approval_never_runs(db: Backend, tmp_path: Path, attack: str) -> None:
    effects = tmp_path / "effects.log"
    rid = paused_request(db, effects)
    assert harness(db, "decide", effects).returncode == 0  # a person approves amount=42
    state, doc = row(db, rid)
    assert state == "approved" and doc["decision_mac"]
    REQUEST_TAMPERS_APPROVED[attack](db, rid, doc)

    resumed = harness(db, "resume", effects)
    assert "Traceback" not in resumed.stderr, resumed.stderr
    assert executions(effects) == []
    assert "request.integrity_failed" in kinds(db, rid)
    assert_verify_fails(db, rid)


PREVIEW_TAMPERS: dict[str, Callable[[dict[str, Any]], None]] = {
    "S7 preview": lambda doc: doc.update(preview="(nothing will be charged: dry run)"),
    "S7 risk": lambda doc: doc["verdict"].update(risk="low"),
    "S7 reasons": lambda doc: doc["verdict"].update(reasons=["a harmless dry run"]),
    "S7 tier": lambda doc: doc["verdict"].update(tier="read"),
    "S7 effect": lambda doc: doc["verdict"].update(effect="notify"),
}


@pytest.mark.parametrize("attack", sorted(PREVIEW_TAMPERS))
def test_what_the_reviewer_sees_is_bound(db: Backend, tmp_path: Path, attack: str) -> None:
    effects = tmp_path / "effects.log"
    rid = paused_request(db, effects)
    _, doc = row(db, rid)
    PREVIEW_TAMPERS[attack](doc)
    rewrite(db, rid, "pending", doc)

    approved = signoff("approve", rid, "--db", db.url)
    lines = [line for line in approved.stderr.splitlines() if line.strip()]
    assert approved.returncode == 2 and len(lines) == 1, approved.stderr
    assert "binding does not verify" in lines[0] and "preview" in lines[0]
    assert row(db, rid)[0] == "pending"
    assert harness(db, "resume", effects).stdout.startswith("paused")
    assert executions(effects) == []
    assert "request.integrity_failed" in kinds(db, rid)
    assert_verify_fails(db, rid)


def test_the_untouched_flow_still_runs_once(db: Backend, tmp_path: Path) -> None:
    effects = tmp_path / "effects.log"
    rid = paused_request(db, effects)
    assert harness(db, "decide", effects).returncode == 0
    assert harness(db, "resume", effects).stdout.startswith("finished")
    assert executions(effects) == [f"{rid} 42"]
    done = signoff("audit", "verify", "--db", db.url)
    assert done.returncode == 0 and "OK:" in done.stdout, done.stdout + done.stderr


# --------------------------------------------------------------------------- grants
# A remembered approval is an allow rule read from the store: one row written into the
# grants table would let every call it matches run without asking.


def _grant_row(db: Backend, grant_id: str, rule: str) -> None:
    open_store(db.url).close()  # the tables
    doc = {
        "v": 1,
        "rule": rule,
        "scope": "project",
        "id": grant_id,
        "created_at": 1.0,
        "expires_at": None,
        "created_by": "alice",
    }
    db.sql(
        "INSERT INTO signoff_grants (id, scope, run_id, created_at, doc) "
        "VALUES (?, 'project', NULL, 1.0, ?)",
        (grant_id, json.dumps(doc)),
    )


def _planted(db: Backend) -> None:
    _grant_row(db, "g_evil", "charge")


def _planted_with_guessed_mac(db: Backend) -> None:
    _grant_row(db, "g_evil", "charge")
    (text,) = db.sql("SELECT doc FROM signoff_grants WHERE id = 'g_evil'")[0]
    doc = json.loads(text)
    doc["mac"] = guessed_mac(load_keys().current, "grant")
    db.sql("UPDATE signoff_grants SET doc = ? WHERE id = 'g_evil'", (json.dumps(doc),))


def _widened(db: Backend) -> None:
    store = open_store(db.url)
    try:
        store.add_grant(Grant("charge(amount=1)", "project", id="g_narrow"))
    finally:
        store.close()
    (text,) = db.sql("SELECT doc FROM signoff_grants WHERE id = 'g_narrow'")[0]
    db.sql(
        "UPDATE signoff_grants SET doc = ? WHERE id = 'g_narrow'",
        (text.replace("charge(amount=1)", "charge"),),
    )


def _revoked_revived(db: Backend) -> None:
    store = open_store(db.url)
    try:
        store.add_grant(Grant("charge", "project", id="g_old"))
        store.revoke_grant("g_old", actor="alice")
    finally:
        store.close()
    db.sql("UPDATE signoff_grants SET revoked_at = NULL WHERE id = 'g_old'")


GRANT_TAMPERS: dict[str, tuple[Callable[[Backend], None], str]] = {
    "a grant row inserted": (_planted, "g_evil"),
    "a grant row inserted with a guessed MAC": (_planted_with_guessed_mac, "g_evil"),
    "a narrow grant widened": (_widened, "g_narrow"),
    "a revoked grant revived (revoked_at cleared)": (_revoked_revived, "g_old"),
}


@pytest.mark.parametrize("attack", sorted(GRANT_TAMPERS))
def test_a_grant_written_into_the_database_grants_nothing(
    db: Backend, tmp_path: Path, attack: str
) -> None:
    effects = tmp_path / "effects.log"
    fn, grant_id = GRANT_TAMPERS[attack]
    fn(db)
    assert paused_request(db, effects)  # it still asks
    assert executions(effects) == []
    assert_verify_fails(db, grant_id, "grants nothing")


def test_a_real_grant_still_grants(db: Backend, tmp_path: Path) -> None:
    store = open_store(db.url)
    try:
        store.add_grant(Grant("charge", "project", id="g_real"))
    finally:
        store.close()
    effects = tmp_path / "effects.log"
    assert harness(db, "start", effects).stdout.startswith("finished")
    assert len(executions(effects)) == 1


# --------------------------------------------------------------------------- audit log
# (finding 10: tail cut with the end mark moved, checkpoint moved, forged entry appended,
# full re-hash without the key, and variants)

ENTRIES = 100


def _history(db: Backend) -> None:
    store = open_store(db.url)
    try:
        for n in range(ENTRIES):
            store.record("verdict", {"n": n, "call": {"name": "ls"}}, run_id="run-1")
    finally:
        store.close()  # anchors the head outside the store


def _events(db: Backend) -> list[tuple[int, str, str, str]]:
    return [
        (int(r[0]), str(r[1]), str(r[2]), str(r[3]))
        for r in db.sql("SELECT seq, entry, prev_hash, hash FROM signoff_events ORDER BY seq")
    ]


def _set_end(db: Backend, seq: int) -> None:
    """Move the chain's end mark to `seq` (no hashing needed)."""
    (hash_,) = db.sql("SELECT hash FROM signoff_events WHERE seq = ?", (seq,))[0]
    if db.kind == "sqlite":
        db.sql("UPDATE signoff_events SET head = NULL")
        db.sql("UPDATE signoff_events SET head = 1 WHERE seq = ?", (seq,))
    else:
        db.sql("UPDATE signoff_chain SET seq = ?, hash = ? WHERE id = 1", (seq, hash_))


def _append_raw(db: Backend, entry: str) -> None:
    last, _, _, prev = _events(db)[-1]
    seq, hash_ = last + 1, chain_hash(prev, entry)
    db.sql(
        "INSERT INTO signoff_events (seq, ts, kind, request_id, run_id, entry, prev_hash, "
        "hash) VALUES (?, 0, 'verdict', NULL, 'run-1', ?, ?, ?)",
        (seq, entry, prev, hash_),
    )
    _set_end(db, seq)


def _rehash_from(db: Backend, start: int, rows: list[tuple[int, str, str, str]]) -> None:
    """Recompute every plain hash from `start` on (no key needed for that) and move the
    end mark and the checkpoint along."""
    prev = rows[start - 2][3] if start > 1 else "0" * 64
    for seq, entry, _, _ in rows[start - 1 :]:
        hash_ = chain_hash(prev, entry)
        db.sql(
            "UPDATE signoff_events SET entry = ?, prev_hash = ?, hash = ? WHERE seq = ?",
            (entry, prev, hash_, seq),
        )
        prev = hash_
    if db.kind == "sqlite":
        (cp,) = db.sql("SELECT seq FROM signoff_chain WHERE id = 1")[0]
        (cp_hash,) = db.sql("SELECT hash FROM signoff_events WHERE seq = ?", (cp,))[0]
        db.sql("UPDATE signoff_chain SET hash = ? WHERE id = 1", (cp_hash,))
    _set_end(db, rows[-1][0])


def _cut_tail(db: Backend) -> None:
    db.sql("DELETE FROM signoff_events WHERE seq > 95")
    _set_end(db, 95)


def _cut_to_checkpoint(db: Backend) -> None:
    db.sql("DELETE FROM signoff_events WHERE seq > 64")
    _set_end(db, 64)


def _checkpoint_moved(db: Backend) -> None:
    (first,) = db.sql("SELECT hash FROM signoff_events WHERE seq = 1")[0]
    if db.kind == "sqlite":
        db.sql("UPDATE signoff_chain SET seq = 1, hash = ? WHERE id = 1", (first,))
    db.sql("DELETE FROM signoff_events WHERE seq > 60")
    _set_end(db, 60)


def _forged_plain(db: Backend) -> None:
    entry = json.dumps(
        {
            "v": 1,
            "ts": 0,
            "kind": "verdict",
            "request_id": None,
            "run_id": "run-1",
            "actor": "mallory",
            "data": {"forged": True},
        },
        sort_keys=True,
        separators=(",", ":"),
    )
    _append_raw(db, entry)


def _forged_guessed_mac(db: Backend) -> None:
    doc = json.loads(_events(db)[-1][1])
    doc.update(actor="mallory", n="00" * 8)
    doc.pop("mac")
    body = json.dumps(doc, sort_keys=True, separators=(",", ":"))
    doc["mac"] = guessed_mac(json.loads(_events(db)[-1][1])["mac"].split(":")[0], body)
    _append_raw(db, json.dumps(doc, sort_keys=True, separators=(",", ":")))


def _replayed(db: Backend) -> None:
    _append_raw(db, _events(db)[9][1])  # entry 10, a real keyed entry, once more


def _edit_rehash(db: Backend) -> None:
    rows = _events(db)
    seq, entry, prev, hash_ = rows[49]
    rows[49] = (seq, entry.replace('"n":49', '"n":4900'), prev, hash_)
    _rehash_from(db, 50, rows)


def _delete_middle_rehash(db: Backend) -> None:
    db.sql("DELETE FROM signoff_events WHERE seq = 50")
    db.sql("UPDATE signoff_events SET seq = seq + 100000 WHERE seq > 50")  # unique on the way
    db.sql("UPDATE signoff_events SET seq = seq - 100001 WHERE seq > 100000")
    _rehash_from(db, 50, _events(db))


def _strip_macs_rehash(db: Backend) -> None:
    rows = []
    for seq, entry, prev, hash_ in _events(db):
        doc = json.loads(entry)
        doc.pop("mac")
        doc.pop("n")
        rows.append(
            (
                seq,
                json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False),
                prev,
                hash_,
            )
        )
    _rehash_from(db, 1, rows)


def _anchor_edited(db: Backend) -> None:
    (path,) = (Path(os.environ["SIGNOFF_CONFIG_DIR"]) / "anchors").glob("*.json")
    doc = json.loads(path.read_text())
    doc["seq"] = 3
    path.write_text(json.dumps(doc))


AUDIT_TAMPERS: dict[str, tuple[Callable[[Backend], None], str]] = {
    "tail cut, end mark moved": (_cut_tail, "deleted from the end"),
    "cut down to the checkpoint, end mark moved": (_cut_to_checkpoint, "deleted from the end"),
    "checkpoint moved to entry 1, 40 entries cut": (_checkpoint_moved, "deleted from the end"),
    "forged entry appended with a correct plain hash": (_forged_plain, "carries no MAC"),
    "forged entry with a MAC made with a guessed key": (_forged_guessed_mac, "MAC does not"),
    "a real keyed entry copied to the end": (_replayed, "replayed"),
    "entry edited, full re-hash without the key": (_edit_rehash, "MAC does not verify"),
    "middle entry deleted, renumbered, re-hashed": (_delete_middle_rehash, "from the end"),
    "every MAC stripped, full re-hash": (_strip_macs_rehash, "anchored outside the store"),
    "the anchor file edited": (_anchor_edited, "does not verify with the audit key"),
}


@pytest.mark.parametrize("attack", sorted(AUDIT_TAMPERS))
def test_audit_tampering_is_found(db: Backend, attack: str) -> None:
    _history(db)
    assert signoff("audit", "verify", "--db", db.url).returncode == 0
    fn, words = AUDIT_TAMPERS[attack]
    fn(db)
    assert_verify_fails(db, words)
    # later writes do not paper over it
    store = open_store(db.url)
    try:
        store.record("verdict", {"after": True}, run_id="run-1")
    finally:
        store.close()
    assert_verify_fails(db)


# --------------------------------------------------------------------------- keys


def test_the_agent_finds_no_key_in_the_store(tmp_path: Path) -> None:
    """`grep -a binding_key .signoff/signoff.db` (and the WAL) finds nothing, nor any key
    material; the web session key is not there either."""
    from signoff.accounts import Accounts

    ws = tmp_path / "ws"
    db = ws / ".signoff" / "signoff.db"
    store = open_store(str(db))
    request = store.create_request(make_request())
    store.decide(request.id, Decision("approve"), actor="alice")
    accounts = Accounts(str(db))
    session_key = accounts.secret()
    keys = load_keys()
    needles = [b"binding_key", b"session_secret", session_key.hex().encode()]
    needles += [k.hex().encode() for k in keys.masters.values()]
    needles += [keys.key(p).hex().encode() for p in ("binding", "decision", "audit")]
    for path in sorted(db.parent.iterdir()):
        if path.is_file():
            data = path.read_bytes()
            assert not [n for n in needles if n in data], path
    grep = shutil.which("grep")
    if grep is not None:
        found = subprocess.run(
            [grep, "-a", "-r", "-c", "binding_key", str(db.parent)],
            capture_output=True,
            text=True,
            check=False,
        )
        assert found.returncode == 1, found.stdout  # 1: no line matched
    key_file = Path(os.environ["SIGNOFF_CONFIG_DIR"]) / "keys.json"
    assert key_file.stat().st_mode & 0o777 == 0o600
    assert not key_file.is_relative_to(ws)
    accounts.close()
    store.close()


def test_no_session_can_be_forged_from_the_database(tmp_path: Path) -> None:
    """Finding 6: the agent read the web session secret out of the database and forged an
    admin's cookie. Now every 64-hex string in the database files (and a session secret
    an older signoff left there) is tried as the signing key: none makes a session."""
    import sqlite3
    import time

    from signoff.accounts import Accounts
    from signoff.web.auth import COOKIE, Session, encode_session
    from web_helpers import LiveServer

    db = tmp_path / "signoff.db"
    open_store(str(db)).close()
    planted = "cd" * 32
    raw = sqlite3.connect(str(db), isolation_level=None)
    raw.execute(
        "CREATE TABLE IF NOT EXISTS signoff_web_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)"
    )
    raw.execute("INSERT INTO signoff_web_meta VALUES ('session_secret', ?)", (planted,))
    raw.close()
    Accounts(str(db)).add("alice", "admin")
    with LiveServer(tmp_path) as server:
        assert server.client().get("/api/me").status_code in (401, 403)
        found = {planted}
        for path in tmp_path.iterdir():
            if path.is_file():
                found |= {m.decode() for m in re.findall(rb"[0-9a-f]{64}", path.read_bytes())}
        assert len(found) >= 2  # the planted one and the store's own hashes at least

        def me(secret: bytes) -> int:
            cookie = encode_session(secret, Session("alice", time.time() + 3600, "n0nce"))
            with server.client() as client:
                client.cookies.set(COOKIE, cookie)
                return client.get("/api/me").status_code

        assert [s for s in sorted(found) if me(bytes.fromhex(s)) not in (401, 403)] == []
        # the control: the key outside the store signs a session the server opened
        Accounts(str(db)).open_session("alice", "n0nce", time.time() + 3600)
        assert me(Accounts(str(db)).secret()) == 200


def test_an_older_store_key_is_moved_out_and_erased(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A store written by an older signoff keeps its binding key in signoff_meta and its
    session secret in signoff_web_meta: the first open moves the binding key to the key
    file (its requests still verify) and erases both from every page and the log."""
    from signoff.accounts import Accounts

    db = tmp_path / "old" / "signoff.db"
    SQLiteOld(db).make()
    monkeypatch.setenv("SIGNOFF_CONFIG_DIR", str(tmp_path / "fresh-config"))
    old_key = bytes(range(32))
    store = open_store(str(db))
    (request,) = store.list_requests()
    assert ":" not in request.binding  # an older signoff's binding ...
    store.decide(request.id, Decision("approve"), actor="alice")  # ... verifies
    claim = store.claim(request.id, worker="w")  # and its approval runs
    store.finish(request.id, claim.token, ok=True)
    assert [g.id for g in store.list_grants()] == ["g_old"]  # signed when moved, kept
    Accounts(str(db)).secret()
    store.close()
    for path in db.parent.iterdir():
        data = path.read_bytes()
        assert b"binding_key" not in data and old_key.hex().encode() not in data, path
        assert b"session_secret" not in data and b"ab" * 32 not in data, path
    assert load_keys().legacy  # moved, not lost


def test_a_key_planted_in_a_migrated_store_is_ignored(tmp_path: Path) -> None:
    db = tmp_path / "signoff.db"
    store = open_store(str(db))
    request = store.create_request(make_request())
    store.close()
    planted = b"\x09" * 32
    raw = _sqlite(db)
    raw.execute("INSERT INTO signoff_meta (key, value) VALUES ('binding_key', ?)", (planted.hex(),))
    (text,) = raw.execute("SELECT doc FROM signoff_requests").fetchone()
    doc = json.loads(text)
    doc["binding"] = binding_of(
        planted, doc["id"], doc["approvers"], doc["digest"], doc["expires_at"]
    )
    raw.execute("UPDATE signoff_requests SET doc = ?", (json.dumps(doc),))
    raw.close()
    store = open_store(str(db))
    try:
        with pytest.raises(Exception, match="older signoff with a key that is not in"):
            store.decide(request.id, Decision("approve"), actor="alice")
    finally:
        store.close()
    assert not load_keys().legacy


def _sqlite(path: Path) -> Any:
    import sqlite3

    return sqlite3.connect(str(path), isolation_level=None)


class SQLiteOld:
    """A store as an older signoff left it: schema, a pending request bound with the key
    kept in signoff_meta, and the web session secret in signoff_web_meta."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def make(self) -> None:
        store = open_store(str(self.path))  # the schema (keys: this test's own config)
        store.close()
        old_key = bytes(range(32))
        request = make_request(id="req_old")
        request = replace(
            request, created_at=1.0, expires_at=4_000_000_000.0, digest=request.call.digest()
        )
        request = replace(
            request,
            binding=binding_of(
                old_key, request.id, request.approvers, request.digest, request.expires_at
            ),
        )
        raw = _sqlite(self.path)
        raw.execute(
            "INSERT INTO signoff_meta (key, value) VALUES ('binding_key', ?)", (old_key.hex(),)
        )
        raw.execute(
            "CREATE TABLE IF NOT EXISTS signoff_web_meta (key TEXT PRIMARY KEY, "
            "value TEXT NOT NULL)"
        )
        raw.execute("INSERT INTO signoff_web_meta VALUES ('session_secret', ?)", ("ab" * 32,))
        grant = {
            "v": 1,
            "rule": "Bash(ls)",
            "scope": "project",
            "id": "g_old",
            "created_at": 1.0,
            "expires_at": None,
            "created_by": "alice",
        }
        raw.execute(
            "INSERT INTO signoff_grants (id, scope, run_id, created_at, doc) "
            "VALUES ('g_old', 'project', NULL, 1.0, ?)",
            (json.dumps(grant),),
        )
        raw.execute(
            "INSERT INTO signoff_requests (id, state, run_id, tenant, created_at, "
            "expires_at, idempotent, doc) VALUES (?, 'pending', ?, 'default', ?, ?, "
            "0, ?)",
            (
                request.id,
                request.run_id,
                request.created_at,
                request.expires_at,
                json.dumps(request.to_json()),
            ),
        )
        raw.close()


# --------------------------------------------------------------------------- clean errors


def _read_only(path: Path) -> Callable[[], None]:
    """Make `path` read-only even for root (chattr +i); returns the undo."""
    if os.geteuid() != 0:
        path.chmod(0o555 if path.is_dir() else 0o444)
        return lambda: path.chmod(0o755 if path.is_dir() else 0o644)
    chattr = shutil.which("chattr")
    if (
        chattr is None
        or subprocess.run([chattr, "+i", str(path)], capture_output=True, check=False).returncode
    ):
        pytest.skip("running as root without chattr +i: cannot make a file read-only")
    return lambda: subprocess.run([chattr, "-i", str(path)], check=True)


@pytest.mark.parametrize("what", ["file", "directory and file"])
def test_a_read_only_store_is_one_clear_line(tmp_path: Path, what: str) -> None:
    db = tmp_path / "ws" / ".signoff" / "signoff.db"
    store = open_store(str(db))
    request = store.create_request(make_request())
    store.close()
    undo = [_read_only(db)]
    if what != "file":
        undo.append(_read_only(db.parent))
    try:
        done = signoff("approve", request.id, "--db", str(db))
    finally:
        for fn in reversed(undo):
            fn()
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert done.returncode == 2 and len(lines) == 1, done.stderr
    assert str(db) in lines[0] and "read-only" in lines[0] and "Traceback" not in done.stderr
    store = open_store(str(db))
    try:
        assert store.get_request(request.id).state == "pending"  # fail closed
    finally:
        store.close()


def test_a_postgres_that_is_down_is_one_clear_line() -> None:
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    url = f"postgresql://postgres:hunter2@127.0.0.1:{port}/test"
    for argv in (("inbox",), ("approve", "req_x"), ("audit", "verify")):
        done = signoff(*argv, "--db", url)
        lines = [line for line in done.stderr.splitlines() if line.strip()]
        assert done.returncode == 2 and len(lines) == 1, done.stderr
        assert re.search(
            r"PostgreSQL store postgresql://postgres@127\.0\.0\.1:\d+/test", lines[0]
        ), lines[0]
        assert "refused" in lines[0] and "hunter2" not in done.stderr


# Attacks tried / held, per promise (each also on SQLite and PostgreSQL where it is SQL):
ATTACKS = {
    "a claim needs a verified decision record (S4, S6)": len(REQUEST_TAMPERS_PENDING),
    "an approval cannot be rewritten (S5b)": len(REQUEST_TAMPERS_APPROVED),
    "what the reviewer sees is bound (S7)": len(PREVIEW_TAMPERS),
    "a grant written into the database grants nothing": len(GRANT_TAMPERS),
    "keyed audit and anchored head (finding 10)": len(AUDIT_TAMPERS),
    "keys outside the store (finding 6, forged session, planted key, migration, env)": 5,
    "clean errors for unusable stores": 4,
}


def test_a_postgres_connection_lost_midway_is_a_clean_refusal(tmp_path: Path) -> None:
    """The server drops the store's connection between two calls (as a restart or a
    failover does): the claim fails with one clear error, nothing is claimed, and the
    next call works on a new connection."""
    import psycopg

    from signoff.exceptions import ConfigurationError
    from store_helpers import PG_BASE

    db = Backend("postgres", tmp_path)
    try:
        store = db.open()
        request = store.create_request(make_request())
        store.decide(request.id, Decision("approve"), actor="alice")
        with store._pool.connection() as conn:  # type: ignore[attr-defined]
            pids = [conn.info.backend_pid]
        with psycopg.connect(PG_BASE, autocommit=True) as admin:
            for pid in pids:  # only this store's own connection
                admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
        with pytest.raises(ConfigurationError, match=r"PostgreSQL store .*connection"):
            store.claim(request.id, worker="w")
        assert store.get_request(request.id).state == "approved"
        assert store.claim(request.id, worker="w").request.id == request.id
    finally:
        db.close()


def test_the_agents_commands_do_not_inherit_the_server_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A server given its key in $SIGNOFF_KEY: `env` run by the agent does not show it."""
    from signoff.workspace.command import run_command

    secret = "5e" * 32
    monkeypatch.setenv("SIGNOFF_KEY", secret)
    monkeypatch.setenv("SIGNOFF_KEY_FILE", str(tmp_path / "k.json"))
    out = run_command("env; printenv SIGNOFF_KEY; echo done", str(tmp_path), 30)
    assert "done" in out and secret not in out and "k.json" not in out
