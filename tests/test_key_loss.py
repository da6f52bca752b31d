"""A lost key file: a store whose log is keyed by a key that is gone takes no writes.

Before, a deleted key file was replaced at the next open (a new key, minted silently) and
hooks carried on; only `signoff audit verify` said, later, that the chain no longer
verified. Now the store refuses every write with one line naming the key id (a hook
blocks, exit 2) and makes no key file for it; a person either restores the key file or
runs `signoff keys reanchor`, which records on the chain that the entries of the lost key
are accepted as they are, and anchors there. Real SQLite files, real PostgreSQL, real
`signoff` processes.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from adapter_helpers import event, ws
from signoff.audit import verify_store
from signoff.exceptions import ConfigurationError, IntegrityError, InvalidInput
from signoff.keys import key_file, load_keys
from signoff.kinds import KEYS_REANCHORED
from signoff.models import Decision
from signoff.store import open_store
from signoff.store.chain import chain_hash
from store_helpers import Backend, make_request

__all__ = ["ws"]

SRC = str(Path(__file__).resolve().parent.parent / "src")
Done = subprocess.CompletedProcess[str]


def signoff(
    *args: str, stdin: str = "", cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "signoff", *args],
        input=stdin,
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": SRC},
        timeout=120,
        check=False,
    )


def _history(url: str) -> str:
    """Five entries under the current key; that key's id."""
    with open_store(url) as store:
        for n in range(5):
            store.record("verdict", {"n": n}, run_id="run-1")
    return load_keys().current


def _lose_the_key_file() -> Path:
    path = Path(key_file())
    saved = path.with_name("keys.json.saved")
    shutil.copy2(path, saved)
    path.unlink()
    return saved


def test_a_store_keyed_by_a_lost_key_takes_no_writes_and_makes_no_key(db: Backend) -> None:
    kid = _history(db.url)
    _lose_the_key_file()
    store = db.open()
    with pytest.raises(ConfigurationError) as refused:
        store.record("verdict", {"n": 5}, run_id="run-1")
    message = str(refused.value)
    assert "\n" not in message and repr(kid) in message and "signoff keys reanchor" in message
    with pytest.raises(ConfigurationError, match="signoff keys reanchor"):
        store.create_request(make_request())
    assert not Path(key_file()).exists()  # no key minted under the log
    assert store.last_seq() == 5  # nothing written
    report = verify_store(store)  # reading still works, and says what is wrong
    assert (report.ok, report.first_bad_seq) == (False, 1)
    assert repr(kid) in report.message and "does not hold" in report.message


def test_a_key_file_made_anew_by_something_else_is_not_taken_for_the_logs(db: Backend) -> None:
    kid = _history(db.url)
    _lose_the_key_file()
    fresh = load_keys()  # another project's first use makes a new key file
    assert fresh.current != kid
    store = db.open()
    with pytest.raises(ConfigurationError, match=repr(kid)):
        store.record("verdict", {"n": 5}, run_id="run-1")
    assert store.last_seq() == 5


def test_restoring_the_key_file_lets_the_store_write_again(db: Backend) -> None:
    _history(db.url)
    saved = _lose_the_key_file()
    with pytest.raises(ConfigurationError):
        db.open().record("verdict", {"n": 5}, run_id="run-1")
    shutil.copy2(saved, key_file())
    store = db.open()
    assert store.record("verdict", {"n": 5}, run_id="run-1") == 6
    assert verify_store(store).ok


@pytest.mark.slow  # the signoff CLI in another process
def test_the_hook_blocks_with_one_line_and_records_nothing(ws: Path) -> None:
    db = ws / ".signoff" / "signoff.db"
    kid = _history(str(db))
    _lose_the_key_file()
    done = signoff(
        "hook", "claude-code", stdin=json.dumps(event(ws, "Bash", {"command": "ls"})), cwd=ws
    )
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert done.returncode == 2 and len(lines) == 1, done.stderr
    assert repr(kid) in lines[0] and "signoff keys reanchor" in lines[0], lines[0]
    assert "Traceback" not in done.stderr and done.stdout == ""
    assert not Path(key_file()).exists()
    with open_store(str(db)) as store:
        assert store.last_seq() == 5


@pytest.mark.slow  # the signoff CLI in another process
def test_reanchor_accepts_the_lost_keys_entries_on_the_record(db: Backend) -> None:
    kid = _history(db.url)
    _lose_the_key_file()
    done = signoff("keys", "reanchor", "--db", db.url, "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {
        "seq": 6,
        "gaps": [],
        "lost_keys": [kid],
        "unnumbered": None,
    }
    new = load_keys()  # made on purpose, by the reanchor
    assert new.current != kid
    store = db.open()
    (entry,) = store.events_after(5)
    assert entry.kind == KEYS_REANCHORED and entry.data["lost_keys"] == [kid]
    assert entry.data["head"] == {"seq": 5, "hash": store.events_after(4)[0].hash}
    assert entry.mac is not None and entry.mac.startswith(new.current + ":")
    report = verify_store(store)
    assert report.ok, report.message
    assert report.message == (
        "6 entries verified (with breaks accepted on purpose by the reanchor at entry 6)"
    )
    assert store.record("verdict", {"n": 6}, run_id="run-1") == 7
    request = store.create_request(make_request())
    store.decide(request.id, Decision("approve"), actor="ann")
    assert verify_store(store).ok


@pytest.mark.slow  # the signoff CLI in another process
def test_the_reanchor_pins_the_chain_before_it(db: Backend) -> None:
    """After a reanchor, an entry of the lost key changed in the database is a break."""
    _history(db.url)
    _lose_the_key_file()
    assert signoff("keys", "reanchor", "--db", db.url).returncode == 0
    db.sql("UPDATE signoff_events SET entry = replace(entry, '\"n\":2', '\"n\":9') WHERE seq = 3")
    report = verify_store(db.open())
    # the walk stops at entry 3, before the reanchor: entries 1..2 are unaccepted again
    assert (report.ok, report.first_bad_seq) == (False, 1)
    assert report.message.endswith(
        "; further on, entry 3 was edited: its hash does not match its content"
    )


@pytest.mark.slow  # the signoff CLI in another process
def test_a_lost_key_after_the_reanchor_is_not_accepted(db: Backend) -> None:
    """Each reanchor accepts what it names, vouched for by the key that signs it."""
    kid = _history(db.url)
    _lose_the_key_file()
    assert signoff("keys", "reanchor", "--db", db.url).returncode == 0
    second = load_keys().current
    with open_store(db.url) as store:
        store.record("verdict", {"n": 6}, run_id="run-1")
    Path(key_file()).unlink()  # the second key is lost too: its entry is not accepted
    assert signoff("keys", "reanchor", "--db", db.url).returncode == 0
    report = verify_store(db.open())
    assert report.ok, report.message
    # the third key, which signed that reanchor, is lost too and nobody accepted it: the
    # reanchor can no longer be told from a forgery, so it accepts nothing
    third = load_keys().current
    with open_store(db.url) as store:
        store.record("verdict", {"n": 7}, run_id="run-1")
    Path(key_file()).unlink()
    load_keys()
    report = verify_store(db.open())
    assert (report.ok, report.first_bad_seq) == (False, 1), report.message
    assert repr(kid) in report.message and kid != second != third


@pytest.mark.slow  # the signoff CLI in another process
def test_reanchor_refuses_a_log_changed_in_the_database(db: Backend) -> None:
    _history(db.url)
    db.sql("UPDATE signoff_events SET entry = replace(entry, '\"n\":2', '\"n\":9') WHERE seq = 3")
    done = signoff("keys", "reanchor", "--db", db.url)
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert done.returncode == 2 and len(lines) == 1, done.stderr
    assert "entry 3 was edited" in lines[0] and "never a log changed" in lines[0]
    with open_store(db.url) as store:
        assert store.last_seq() == 5


def test_only_the_reanchor_writes_a_reanchor_entry(db: Backend) -> None:
    kid = _history(db.url)
    store = db.open()
    with pytest.raises(InvalidInput, match="written only by `signoff keys reanchor`"):
        store.record(KEYS_REANCHORED, {"lost_keys": [kid]})
    # one put in with SQL, correctly hashed, carries no MAC: it accepts nothing
    (last, prev) = db.sql("SELECT seq, hash FROM signoff_events ORDER BY seq DESC LIMIT 1")[0]
    entry = json.dumps(
        {
            "v": 1,
            "ts": 0,
            "kind": KEYS_REANCHORED,
            "request_id": None,
            "run_id": None,
            "actor": "mallory",
            "data": {"head": {"seq": last, "hash": prev}, "gaps": [], "lost_keys": [kid]},
        },
        sort_keys=True,
        separators=(",", ":"),
    )
    db.sql(
        "INSERT INTO signoff_events (seq, ts, kind, request_id, run_id, entry, prev_hash, hash) "
        "VALUES (?, 0, ?, NULL, NULL, ?, ?, ?)",
        (last + 1, KEYS_REANCHORED, entry, prev, chain_hash(prev, entry)),
    )
    report = verify_store(db.open())
    assert (report.ok, report.first_bad_seq) == (False, last + 1)
    assert "carries no MAC" in report.message


@pytest.mark.slow  # the signoff CLI in another process
def test_requests_bound_with_the_lost_key_never_run(tmp_path: Path) -> None:
    db = str(tmp_path / "s.db")
    with open_store(db) as store:
        request = store.create_request(make_request())
        store.decide(request.id, Decision("approve"), actor="ann")
    _lose_the_key_file()
    assert signoff("keys", "reanchor", "--db", db).returncode == 0
    with open_store(db) as store, pytest.raises(IntegrityError):
        store.claim(request.id, worker="w1")
