"""The audit log: tampering with the events table on SQLite and PostgreSQL is found and the
first bad entry named (by the library and by `signoff audit verify`); an exported JSON
Lines file verifies offline and an edited line is found; filters; `signoff grant add`."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from signoff.audit import (
    AuditFilter,
    export_jsonl,
    parse_since,
    read_log,
    verify_file,
    verify_store,
)
from signoff.cli.audit import main
from signoff.deciders import os_user
from signoff.exceptions import IntegrityError
from signoff.models import Decision, Grant
from signoff.settings import load_settings
from signoff.store import Store, open_store
from signoff.store.base import Draft
from signoff.store.chain import chain_hash
from store_helpers import Backend, make_request

NOW = 1_800_000_000.0


def history(store: Store) -> None:
    """8 entries: two requests on two runs, a verdict, a grant."""
    store.record(
        "verdict",
        {"call": {"name": "ls", "arguments": {}, "id": "c0"}, "verdict": {"effect": "allow"}},
        run_id="run-1",
        now=NOW,
    )
    a = store.create_request(make_request(run_id="run-1"), now=NOW + 1)
    store.decide(a.id, Decision("approve", reason="ok"), actor="ann", now=NOW + 2)
    claim = store.claim(a.id, worker="w1", now=NOW + 3)
    store.finish(a.id, claim.token, ok=True, result={"stdout": ""}, now=NOW + 4)
    b = store.create_request(make_request(run_id="run-2"), now=NOW + 86400)
    store.decide(b.id, Decision("reject", reason="no"), actor="bob", now=NOW + 86401)
    store.add_grant(Grant("Bash(ls)", "project", id="g1"), now=NOW + 86402)


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    capsys.readouterr()
    code = main(list(argv))
    return code, capsys.readouterr().out


# ----------------------------------------------------------------------------- tampering
# Each tamper is direct SQL on signoff_events, behind the store's back.


def _edit(b: Backend) -> None:
    (entry,) = b.sql("SELECT entry FROM signoff_events WHERE seq = 3")[0]
    b.sql(
        "UPDATE signoff_events SET entry = ? WHERE seq = 3", (entry.replace('"ann"', '"mallory"'),)
    )


def _delete(b: Backend) -> None:
    b.sql("DELETE FROM signoff_events WHERE seq = 4")


def _insert(b: Backend) -> None:
    # a forged entry hashed the way the store hashes, linked to entry 2, slipped in at 3
    b.sql("UPDATE signoff_events SET seq = seq + 100 WHERE seq >= 3")
    b.sql("UPDATE signoff_events SET seq = seq - 99 WHERE seq >= 103")
    (prev,) = b.sql("SELECT hash FROM signoff_events WHERE seq = 2")[0]
    entry = Draft("request.decided", None, "run-1", "mallory", {"forged": True}).entry(NOW + 2)
    b.sql(
        "INSERT INTO signoff_events (seq, ts, kind, request_id, run_id, entry, prev_hash, "
        "hash) VALUES (3, ?, 'request.decided', NULL, 'run-1', ?, ?, ?)",
        (NOW + 2, entry, prev, chain_hash(prev, entry)),
    )


def _reorder(b: Backend) -> None:
    b.sql("UPDATE signoff_events SET seq = 100 WHERE seq = 2")
    b.sql("UPDATE signoff_events SET seq = 2 WHERE seq = 3")
    b.sql("UPDATE signoff_events SET seq = 3 WHERE seq = 100")


def _delete_tail(b: Backend) -> None:
    b.sql("DELETE FROM signoff_events WHERE seq >= 7")


TAMPERS: dict[str, tuple[Callable[[Backend], None], int, str]] = {
    # name: (tamper, first bad seq, words the report uses)
    "edited": (_edit, 3, "entry 3 was edited"),
    "deleted": (_delete, 4, "entry 4 is missing"),
    "inserted": (_insert, 3, "entry 3 carries no MAC"),  # forged: no audit key
    "reordered": (_reorder, 2, "entry 2 does not link to entry 1"),
    # PostgreSQL and memory: "entries 7..8 were ..."; SQLite: "entry 7 and any after it ..."
    "deleted-tail": (_delete_tail, 7, "were deleted from the end"),
}


@pytest.mark.parametrize("tamper", sorted(TAMPERS))
def test_verify_names_the_first_bad_entry(
    db: Backend, tamper: str, capsys: pytest.CaptureFixture[str]
) -> None:
    store = db.open()
    history(store)
    report = verify_store(store)
    assert report.ok and report.entries == 8 and report.first_bad_seq is None
    code, out = cli(capsys, "audit", "verify", "--db", db.url)
    assert code == 0 and "OK: 8 entries verified" in out and report.head_hash in out

    fn, first_bad, words = TAMPERS[tamper]
    fn(db)
    report = verify_store(store)
    assert (report.ok, report.first_bad_seq) == (False, first_bad), report.message
    assert words in report.message
    if first_bad > 1:
        assert report.last_good is not None and report.last_good["seq"] == first_bad - 1

    code, out = cli(capsys, "audit", "verify", "--db", db.url)
    assert code == 1
    assert "TAMPERED" in out and f"First bad entry: {first_bad}" in out and words in out
    code, out = cli(capsys, "audit", "verify", "--db", db.url, "--json")
    doc = json.loads(out)
    assert code == 1 and doc["ok"] is False and doc["first_bad_seq"] == first_bad


@pytest.mark.parametrize("tamper", ["deleted-tail", "deleted-middle"])
def test_a_cut_stays_visible_after_later_appends(db: Backend, tamper: str) -> None:
    # The store keeps writing after someone cut entries: the new entries must not paper
    # over the hole (SQLite finds the end mark gone and leaves a gap).
    store = db.open()
    history(store)
    db.sql(
        "DELETE FROM signoff_events WHERE seq >= 7"
        if tamper == "deleted-tail"
        else "DELETE FROM signoff_events WHERE seq = 8"
    )
    for n in range(3):
        store.record("verdict", {"n": n}, run_id="run-3", now=NOW + 90000 + n)
    report = verify_store(store)
    assert not report.ok and report.first_bad_seq == (7 if tamper == "deleted-tail" else 8)


def test_an_emptied_log_is_caught(db: Backend) -> None:
    store = db.open()
    history(store)
    db.sql("DELETE FROM signoff_events")
    report = verify_store(store)
    assert (report.ok, report.first_bad_seq) == (False, 1), report.message
    assert "deleted from the end" in report.message


def test_sqlite_checkpoint_catches_a_cut_below_it(tmp_path: Path) -> None:
    # 70 entries: the checkpoint row is at 64; cut back to 50 and re-mark the new end the
    # way the store would, so only the checkpoint can tell
    backend = Backend("sqlite", tmp_path)
    try:
        store = backend.open()
        for n in range(70):
            store.record("verdict", {"n": n}, now=NOW + n)
        backend.sql("DELETE FROM signoff_events WHERE seq > 50")
        backend.sql("UPDATE signoff_events SET head = 1 WHERE seq = 50")
        ok, bad, message = store.verify_chain()
        assert (ok, bad) == (False, 51) and "51..64 (at least) were deleted" in message
    finally:
        backend.close()


def test_sqlite_store_from_before_the_end_mark_is_migrated(tmp_path: Path) -> None:
    backend = Backend("sqlite", tmp_path)
    try:
        history(backend.open())
        backend.close()
        # the schema as migration 7 left it: no end mark column, the head in its own row
        backend.sql(
            "UPDATE signoff_chain SET seq = 8, "
            "hash = (SELECT hash FROM signoff_events WHERE seq = 8)"
        )
        backend.sql("ALTER TABLE signoff_events DROP COLUMN head")
        backend.sql("DELETE FROM schema_migrations WHERE version = 8")
        store = backend.open()
        assert store.verify_chain() == (True, None, "8 entries verified")
        store.record("verdict", {"after": "migration"}, now=NOW + 90000)
        assert store.verify_chain() == (True, None, "9 entries verified")
    finally:
        backend.close()


def test_report_shows_what_is_stored_at_the_bad_place(db: Backend) -> None:
    store = db.open()
    history(store)
    _edit(db)
    report = verify_store(store)
    assert report.bad_entry is not None
    assert report.bad_entry["kind"] == "request.decided"
    assert report.bad_entry["actor"] == "mallory"  # the forged value, shown as stored
    assert report.last_good is not None and report.last_good["kind"] == "request.created"
    text = "\n".join(report.lines())
    assert "#3, request.decided" in text and "Last good entry: #2, request.created" in text


def test_an_entry_edited_into_garbage_is_still_named(db: Backend) -> None:
    store = db.open()
    history(store)
    db.sql("UPDATE signoff_events SET entry = '{not json' WHERE seq = 5")
    report = verify_store(store)
    assert (report.ok, report.first_bad_seq) == (False, 5)
    assert report.bad_entry is None and report.last_good is not None
    with pytest.raises(IntegrityError, match="signoff audit verify"):
        read_log(store)


# ----------------------------------------------------------------------------- export


def exported(store: Store, path: Path) -> tuple[list[str], str]:
    with open(path, "w", encoding="utf-8") as handle:
        count, head = export_jsonl(store, handle)
    lines = path.read_text("utf-8").splitlines()
    assert count == len(lines)
    return lines, head


def test_export_round_trips_and_verifies_offline(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "s.db"
    with open_store(db) as store:
        history(store)
        events = store.events_after(0, 100)
    path = tmp_path / "audit.jsonl"
    code, _ = cli(capsys, "audit", "export", "--db", str(db), "--output", str(path))
    assert code == 0
    lines = path.read_text("utf-8").splitlines()
    docs = [json.loads(line) for line in lines]
    assert [d["seq"] for d in docs] == list(range(1, 9))
    assert [(d["prev_hash"], d["hash"]) for d in docs] == [(e.prev_hash, e.hash) for e in events]
    assert docs[2]["data"]["decision"]["kind"] == "approve" and docs[2]["actor"] == "ann"

    report = verify_file(path, head=events[-1].hash)
    assert report.ok and report.entries == 8 and report.head_hash == events[-1].hash
    code, out = cli(capsys, "audit", "verify", "--file", str(path), "--json")
    assert code == 0 and json.loads(out)["ok"] is True


@pytest.mark.parametrize(
    ("change", "first_bad", "words"),
    [
        ("edit", 3, "entry 3 was edited"),
        ("delete", 5, "entry 5 is missing"),
        ("swap", 4, "entry 4 is out of order"),
        ("garbage", 6, "line 6 (entry 6) does not parse"),
    ],
)
def test_tampered_export_is_found(
    tmp_path: Path, change: str, first_bad: int, words: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with open_store(tmp_path / "s.db") as store:
        history(store)
        lines, _ = exported(store, tmp_path / "audit.jsonl")
    if change == "edit":
        doc = json.loads(lines[2])
        doc["data"]["decision"]["reason"] = "looked fine to me"
        lines[2] = json.dumps(doc)
    elif change == "delete":
        del lines[4]
    elif change == "swap":
        lines[3], lines[4] = lines[4], lines[3]
    else:
        lines[5] = lines[5][:-3]
    path = tmp_path / "tampered.jsonl"
    path.write_text("\n".join(lines) + "\n", "utf-8")
    report = verify_file(path)
    assert (report.ok, report.first_bad_seq) == (False, first_bad), report.message
    assert words in report.message
    code, out = cli(capsys, "audit", "verify", "--file", str(path))
    assert code == 1 and f"First bad entry: {first_bad}" in out


def test_a_cut_export_needs_the_head_to_be_caught(tmp_path: Path) -> None:
    with open_store(tmp_path / "s.db") as store:
        history(store)
        lines, head = exported(store, tmp_path / "audit.jsonl")
    path = tmp_path / "cut.jsonl"
    path.write_text("\n".join(lines[:-2]) + "\n", "utf-8")
    assert verify_file(path).ok  # a prefix of a chain is a chain
    report = verify_file(path, head=head)
    assert (report.ok, report.first_bad_seq) == (False, 7)
    assert "cut from the end" in report.message


def test_key_order_and_spacing_of_a_line_do_not_matter(tmp_path: Path) -> None:
    with open_store(tmp_path / "s.db") as store:
        history(store)
        lines, head = exported(store, tmp_path / "audit.jsonl")
    respaced = [json.dumps(dict(reversed(list(json.loads(x).items()))), indent=None) for x in lines]
    path = tmp_path / "respaced.jsonl"
    path.write_text("\n".join(respaced) + "\n\n", "utf-8")
    assert verify_file(path, head=head).ok


# ----------------------------------------------------------------------------- listing


def test_filters(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = str(tmp_path / "s.db")
    with open_store(db) as store:
        history(store)

        def seqs(**kw: Any) -> list[int]:
            return [e.seq for e in read_log(store, AuditFilter(**kw))]

        assert seqs() == list(range(1, 9))
        assert seqs(run_id="run-2") == [6, 7]
        assert seqs(since=NOW + 86400) == [6, 7, 8]
        assert seqs(kinds=("request.decided",)) == [3, 7]
        assert seqs(kinds=("request",)) == [2, 3, 4, 5, 6, 7]
        assert seqs(kinds=("grant.", "verdict")) == [1, 8]
        assert seqs(run_id="run-1", kinds=("request.c*",)) == [2, 4]
        rid = store.events_after(1, 1)[0].request_id
        assert seqs(request_id=rid) == [2, 3, 4, 5]

    code, out = cli(capsys, "audit", "--db", db, "--run", "run-2", "--json")
    assert code == 0
    assert [(e["seq"], e["kind"]) for e in json.loads(out)] == [
        (6, "request.created"),
        (7, "request.decided"),
    ]
    code, out = cli(capsys, "audit", "--db", db, "--kind", "request.decided")
    assert code == 0
    assert "approve -> approved: ok" in out and "reject -> rejected: no" in out
    assert "2 entries" in out
    code, out = cli(capsys, "audit", "--db", db, "--since", "2027-01-16T08:00", "--json")
    assert code == 0 and [e["seq"] for e in json.loads(out)] == [6, 7, 8]


def test_parse_since() -> None:
    assert parse_since("7d", now=NOW) == NOW - 7 * 86400
    assert parse_since("12h", now=NOW) == NOW - 12 * 3600
    assert parse_since("30m", now=NOW) == NOW - 1800
    assert parse_since("90s", now=NOW) == NOW - 90
    assert parse_since("2w", now=NOW) == NOW - 14 * 86400
    assert parse_since("2027-01-15", now=NOW) == 1_800_000_000.0 - 8 * 3600
    assert parse_since("2027-01-15T08:00:00+00:00") == NOW
    assert parse_since("1800000000") == NOW
    with pytest.raises(Exception, match="duration"):
        parse_since("last tuesday")


# ----------------------------------------------------------------------------- grants


def test_grant_add_project_writes_the_rule_and_records_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = str(tmp_path / "s.db")
    code, out = cli(
        capsys,
        "grant",
        "add",
        "Bash(npm run test:*)",
        "--workspace",
        str(tmp_path),
        "--db",
        db,
        "--as",
        "ann",
        "--json",
    )
    assert code == 0
    doc = json.loads(out)
    # The store's owner acting for ann, without ann's token, is recorded as such.
    assert (doc["rule"], doc["scope"], doc["created_by"]) == (
        "Bash(npm run test:*)",
        "project",
        f"local-admin:{os_user()} as ann",
    )
    allow = [r.text for r in load_settings(tmp_path, user=False).allow]
    assert "Bash(npm run test:*)" in allow
    with open_store(db) as store:
        (event,) = store.events_after(0, 10)
        assert event.kind == "grant.added" and event.data["grant"]["rule"] == "Bash(npm run test:*)"
        assert [g.rule for g in store.list_grants()] == ["Bash(npm run test:*)"]
    code, out = cli(capsys, "grant", "list", "--db", db, "--json")
    assert code == 0 and json.loads(out)[0]["id"] == doc["id"]


def test_grant_add_refuses_bad_rules_and_run_grants_without_a_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = str(tmp_path / "s.db")
    assert main(["grant", "add", "Bash(npm", "--db", db, "--workspace", str(tmp_path)]) == 2
    assert "not of the form" in capsys.readouterr().err
    assert main(["grant", "add", "Bash(ls)", "--scope", "run", "--db", db]) == 2
    assert "needs --run" in capsys.readouterr().err
    assert main(["grant", "add", "Bash(ls)", "--scope", "run", "--run", "r1", "--db", db]) == 0
    assert not (tmp_path / ".signoff" / "settings.local.toml").exists()
    with open_store(db) as store:
        assert [(g.rule, g.scope) for g in store.list_grants(run_id="r1")] == [("Bash(ls)", "run")]


@pytest.mark.parametrize(
    ("kind", "data", "line"),
    [
        (
            "run.created",
            {"message_count": 2, "agent": "pkg.mod:build"},
            "run started (2 messages, agent pkg.mod:build)",
        ),
        (
            "run.paused",
            {"from": "running", "to": "paused", "waiting_on": ["req_1", "req_2"], "note": None},
            "running -> paused, waiting on req_1, req_2",
        ),
        (
            "run.needs_attention",
            {
                "from": "running",
                "to": "needs_attention",
                "waiting_on": [],
                "note": "3 refusals in a row",
            },
            "running -> needs_attention: 3 refusals in a row",
        ),
        (
            "run.claimed",
            {"worker": "w2", "status": "paused", "lapsed": "w1"},
            "taken by w2 (was paused), after w1's lease lapsed",
        ),
        (
            "session.outcome",
            {"call": {"name": "ls", "arguments": {}}, "outcome": "ran"},
            "ran: ls {}",
        ),
        (
            "review",
            {"call": {"name": "write_file", "arguments": {"path": "a"}}},
            'ran without asking, to review: write_file {"path": "a"}',
        ),
    ],
)
def test_entries_read_as_sentences(kind: str, data: dict[str, Any], line: str) -> None:
    from signoff.audit import describe
    from signoff.store import Event

    assert describe(Event(1, NOW, kind, None, "run-1", None, data)) == line


def test_read_log_limit_is_the_newest_entries(db: Backend) -> None:
    store = db.open()
    history(store)
    everything = read_log(store)
    assert [e.seq for e in read_log(store, limit=3)] == [e.seq for e in everything[-3:]]
    assert read_log(store, limit=100) == everything
    runs = AuditFilter(run_id="run-1")
    assert read_log(store, runs, limit=2) == read_log(store, runs)[-2:]
