"""Who decides at the CLI (deciders.py) and how answers are read from a terminal
(channels/keyboard.py), as units: the store file's owner, tokens, names, a real pty."""

from __future__ import annotations

import io
import os
import pwd
import select
from pathlib import Path

import pytest

from signoff.accounts import Accounts
from signoff.channels.keyboard import LineSource
from signoff.deciders import local_admin, os_user, resolve_decider, sqlite_file
from signoff.exceptions import InvalidInput, NotAuthorized


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("memory:", None),
        ("postgresql://u@h/db", None),
        ("postgres://u@h/db", None),
        ("sqlite:///rel/s.db", Path("rel/s.db")),
        ("sqlite:////abs/s.db", Path("/abs/s.db")),
        ("sqlite:", None),
        ("/tmp/x/signoff.db", Path("/tmp/x/signoff.db")),
        ("mysql://h/db", None),
    ],
)
def test_sqlite_file(url: str, expected: Path | None) -> None:
    assert sqlite_file(url) == expected


def test_the_os_user_is_read_by_uid_not_from_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("USER", "carol")
    monkeypatch.setenv("LOGNAME", "carol")
    assert os_user() == pwd.getpwuid(os.geteuid()).pw_name


def test_the_owner_of_the_store_file_is_its_local_admin(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    db.write_bytes(b"")
    assert local_admin(str(db)) == os_user()
    assert local_admin(f"sqlite:///{db}") == os_user()
    assert local_admin(str(tmp_path / "missing.db")) is None
    assert local_admin("memory:") is None
    if os.geteuid() == 0:
        os.chown(db, 65534, 65534)
        assert local_admin(str(db)) is None  # even root is not the owner of this file


def test_without_as_the_os_user_decides_with_its_settings_roles(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SIGNOFF_ACTOR", raising=False)
    decider = resolve_decider(
        str(tmp_path / "s.db"), None, settings_roles={os_user(): ["admin"]}, interactive=False
    )
    assert (decider.actor, decider.roles, decider.how) == (os_user(), ("admin",), "os-user")


def test_tokens_decide_only_for_their_own_account(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "s.db"
    accounts = Accounts(db)
    carol, vera = accounts.add("carol", "approver"), accounts.add("vera", "viewer")
    accounts.close()
    if os.geteuid() == 0:
        os.chown(db, 65534, 65534)
    monkeypatch.setenv("SIGNOFF_TOKEN", carol)
    decider = resolve_decider(str(db), "carol", interactive=False)
    assert (decider.actor, decider.how) == ("carol", "token")
    assert "approver" in decider.roles
    with pytest.raises(NotAuthorized, match="only an admin"):
        resolve_decider(str(db), "carol", need_admin=True, interactive=False)
    monkeypatch.setenv("SIGNOFF_TOKEN", vera)
    with pytest.raises(NotAuthorized, match="viewer"):
        resolve_decider(str(db), "vera", interactive=False)
    token_file = tmp_path / "t"
    token_file.write_text(carol)
    monkeypatch.delenv("SIGNOFF_TOKEN")
    assert (
        resolve_decider(str(db), "carol", token_file=str(token_file), interactive=False).actor
        == "carol"
    )


@pytest.mark.parametrize(
    "name",
    [
        "",
        " ",
        "carol ",
        "carol\u200b",
        "role:admin",
        "a b",
        "local-admin:root as carol",
        "-carol",
        "x" * 65,
    ],
)
def test_names_that_are_not_account_names_are_refused(tmp_path: Path, name: str) -> None:
    with pytest.raises(InvalidInput, match="not an account name"):
        resolve_decider(str(tmp_path / "s.db"), name, interactive=False)


def test_a_line_source_on_a_pipe_reads_as_given() -> None:
    lines = LineSource(io.StringIO("y\nn\n"))
    lines.discard_typed_ahead()  # nothing to drop on a pipe: the input is the script
    assert not lines.is_terminal
    assert [lines.readline(), lines.readline(), lines.readline()] == ["y\n", "n\n", ""]


def test_a_line_source_on_a_pty_drops_what_was_typed_before() -> None:
    leader, follower = os.openpty()
    try:
        with os.fdopen(follower, "r", closefd=False) as stream:
            lines = LineSource(stream)
            assert lines.is_terminal
            os.write(leader, b"y\ny\n")  # typed while the agent was busy
            select.select([follower], [], [])  # it has reached the terminal's queue
            lines.discard_typed_ahead()
            os.write(leader, "s\n是\n".encode())  # typed after the box
            assert lines.readline() == "s\n"
            assert lines.readline() == "是\n"
    finally:
        os.close(leader)
        os.close(follower)
