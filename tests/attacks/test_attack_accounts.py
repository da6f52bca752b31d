"""Whoever can write the database cannot make themselves an approver: account rows are
sealed with the key kept outside the store. Performed with direct SQL on the real SQLite
file the CLI and the web server use."""

from __future__ import annotations

import hashlib
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from signoff.accounts import Accounts

SECRET = "ab" * 32
SALT = "cd" * 16


def _plain_hash(salt: str, secret: str) -> str:
    return hashlib.sha256(f"{salt}:{secret}".encode()).hexdigest()


def _sql(db: Path, statement: str, params: tuple[object, ...] = ()) -> None:
    conn = sqlite3.connect(db, isolation_level=None)
    try:
        conn.execute(statement, params)
    finally:
        conn.close()


def _accounts(tmp_path: Path) -> tuple[Accounts, Path]:
    db = tmp_path / "signoff.db"
    accounts = Accounts(db)
    accounts.add("alice", "admin")
    return accounts, db


def test_a_row_inserted_with_sql_is_no_account(tmp_path: Path) -> None:
    accounts, db = _accounts(tmp_path)
    for token_hash in (
        _plain_hash(SALT, SECRET),  # the old, unkeyed form
        f"v2:{_plain_hash(SALT, SECRET)}:k00000000:{'0' * 64}",
    ):  # a guess
        _sql(db, "DELETE FROM signoff_accounts WHERE name = 'mallory'")
        _sql(
            db,
            "INSERT INTO signoff_accounts (name, role, token_hash, salt, created_at) "
            "VALUES ('mallory', 'admin', ?, ?, ?)",
            (token_hash, SALT, time.time()),
        )
        assert accounts.authenticate(f"so_mallory_{SECRET}") is None
        assert accounts.get("mallory") is None
        assert [a.name for a in accounts.list()] == ["alice"]
        assert accounts.unsealed() == ("mallory",)
    accounts.close()


def test_a_role_changed_with_sql_is_no_role(tmp_path: Path) -> None:
    db = tmp_path / "signoff.db"
    accounts = Accounts(db)
    token = accounts.add("bob", "viewer")
    assert accounts.authenticate(token) is not None
    _sql(db, "UPDATE signoff_accounts SET role = 'admin' WHERE name = 'bob'")
    assert accounts.authenticate(token) is None  # neither admin nor viewer any more
    assert accounts.get("bob") is None  # a signed-in session of bob gets no role either
    accounts.close()


def test_a_token_moved_to_another_name_is_refused(tmp_path: Path) -> None:
    db = tmp_path / "signoff.db"
    accounts = Accounts(db)
    token = accounts.add("bob", "approver")
    accounts.add("carol", "viewer")
    _sql(db, "DELETE FROM signoff_accounts WHERE name = 'carol'")
    _sql(db, "UPDATE signoff_accounts SET name = 'carol' WHERE name = 'bob'")
    secret = token.rpartition("_")[2]
    assert accounts.authenticate(f"so_carol_{secret}") is None
    accounts.close()


@pytest.mark.slow  # runs the CLI in other processes
def test_the_cli_names_rows_that_are_no_account_and_removes_them(tmp_path: Path) -> None:
    accounts, db = _accounts(tmp_path)
    accounts.close()
    _sql(
        db,
        "INSERT INTO signoff_accounts (name, role, token_hash, salt, created_at) "
        "VALUES ('mallory', 'admin', ?, ?, ?)",
        (_plain_hash(SALT, SECRET), SALT, 0.0),
    )

    def users(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "signoff", "users", *args, "--db", str(db)],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )

    listed = users("list")
    assert listed.returncode == 0, listed.stderr
    assert "alice\tadmin" in listed.stdout
    assert "mallory\tNOT AN ACCOUNT" in listed.stdout
    assert users("remove", "mallory").returncode == 0
    assert "mallory" not in users("list").stdout
