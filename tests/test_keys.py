"""The key file: created 0600 on first use (race-safe between processes), given by the
environment for servers, rotated without breaking what older keys made, never printed."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from signoff.exceptions import ConfigurationError, IntegrityError
from signoff.keys import Keys, load_keys, parse_env_keys, rotate
from signoff.models import Decision
from signoff.store import open_store
from store_helpers import Backend, make_request

CREATE = "import sys; from signoff.keys import load_keys; sys.stdout.write(load_keys().current)"


def config() -> Path:
    return Path(os.environ["SIGNOFF_CONFIG_DIR"])


def test_the_key_file_is_made_private_on_first_use() -> None:
    keys = load_keys()
    path = config() / "keys.json"
    assert path.stat().st_mode & 0o777 == 0o600
    assert load_keys().current == keys.current  # made once, then read
    doc = json.loads(path.read_text())
    assert doc["current"] == keys.current and len(doc["keys"][keys.current]) == 64


def test_processes_racing_to_create_it_share_one_key() -> None:
    procs = [
        subprocess.Popen([sys.executable, "-c", CREATE], stdout=subprocess.PIPE, text=True)
        for _ in range(8)
    ]
    ids = {p.communicate(timeout=60)[0] for p in procs}
    assert len(ids) == 1 and ids == {load_keys().current}


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("not json", "bad JSON"),
        ('{"v": 2}', "expected an object with v=1"),
        ('{"v": 1, "current": "a", "keys": {"a": "abc"}}', "at least 32 hex digits"),
        ('{"v": 1, "current": "b", "keys": {"a": "' + "00" * 32 + '"}}', "'current' must name"),
    ],
)
def test_a_bad_key_file_names_itself_and_the_problem(text: str, words: str) -> None:
    path = config() / "keys.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(0o600)
    with pytest.raises(ConfigurationError, match=words) as info:
        load_keys()
    assert str(path) in str(info.value)


def test_a_key_file_others_can_read_is_refused() -> None:
    load_keys()
    path = config() / "keys.json"
    path.chmod(0o644)
    with pytest.raises(ConfigurationError, match="chmod 600"):
        load_keys()


def test_a_named_key_file_must_exist(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("SIGNOFF_KEY_FILE", str(tmp_path / "missing.json"))
    with pytest.raises(ConfigurationError, match="does not exist"):
        load_keys()


def test_servers_share_a_key_from_the_environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("SIGNOFF_KEY", "a1=" + "11" * 32 + ", " + "22" * 32)
    keys = load_keys()
    assert keys.current == "a1" and len(keys.masters) == 2
    assert not (config() / "keys.json").exists()  # nothing written
    db = tmp_path / "s.db"
    with open_store(str(db)) as one:
        request = one.create_request(make_request())
    # another machine: other config dir, same SIGNOFF_KEY
    monkeypatch.setenv("SIGNOFF_CONFIG_DIR", str(tmp_path / "machine-2"))
    with open_store(str(db)) as two:
        two.decide(request.id, Decision("approve"), actor="alice")
        assert two.claim(request.id, worker="w").request.id == request.id
    with pytest.raises(ConfigurationError, match="SIGNOFF_KEY"):
        rotate()


@pytest.mark.parametrize("value", ["", "xyz", "a1=" + "1" * 10, "bad id!=" + "11" * 32])
def test_a_bad_environment_key_is_refused(value: str) -> None:
    with pytest.raises(ConfigurationError, match=r"\$SIGNOFF_KEY: key 1"):
        parse_env_keys(value)


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])  # memory keeps keys in memory
def test_rotation_keeps_older_records_verifiable(kind: str, tmp_path: Path) -> None:
    backend = Backend(kind, tmp_path)
    try:
        _rotation(backend)
    finally:
        backend.close()


def _rotation(backend: Backend) -> None:
    store = backend.open()
    old = store.create_request(make_request())
    old_approved = store.create_request(make_request())
    store.decide(old_approved.id, Decision("approve"), actor="alice")
    before = load_keys().current
    store.close()
    rotated = rotate()
    assert rotated.current != before and before in rotated.masters
    store = backend.open()
    new = store.create_request(make_request())
    assert new.binding.startswith(rotated.current + ":")
    assert old.binding.startswith(before + ":")
    store.decide(old.id, Decision("approve"), actor="bob")  # made with the old key
    assert store.claim(old.id, worker="w").request.id == old.id
    assert store.claim(old_approved.id, worker="w").request.id == old_approved.id
    assert store.verify_chain()[0]


def test_a_removed_key_id_fails_closed() -> None:
    keys = Keys.generate()
    with pytest.raises(IntegrityError, match="key id 'k0000', which"):
        keys.key("binding", "k0000")
    assert not keys.check("binding", "m", "k0000:" + "00" * 32)
    assert not keys.check("binding", "m", None)
    assert keys.masters[keys.current].hex() not in repr(keys)


@pytest.mark.slow  # runs the CLI in other processes
def test_signoff_keys_shows_ids_never_material() -> None:
    keys = load_keys()
    shown = subprocess.run(
        [sys.executable, "-m", "signoff", "keys", "show", "--json"],
        capture_output=True,
        text=True,
        check=True,
    )
    doc = json.loads(shown.stdout)
    assert doc["current"] == keys.current and doc["ids"] == [keys.current]
    assert keys.masters[keys.current].hex() not in shown.stdout
    rotated = subprocess.run(
        [sys.executable, "-m", "signoff", "keys", "rotate"],
        capture_output=True,
        text=True,
        check=True,
    )
    new = load_keys()
    assert new.current != keys.current and new.current in rotated.stdout
    assert all(k.hex() not in rotated.stdout for k in new.masters.values())


def test_a_lost_key_file_fails_closed_and_says_which_key(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    with open_store(str(db)) as store:
        request = store.create_request(make_request())
        kid = load_keys().current
    shutil.rmtree(config())  # the config directory is lost: a new key file is made
    with open_store(str(db)) as store:
        ok, bad, message = store.verify_chain()
        assert (ok, bad) == (False, 1) and repr(kid) in message and "does not hold" in message
        with pytest.raises(IntegrityError, match="binding does not verify"):
            store.decide(request.id, Decision("approve"), actor="alice")
