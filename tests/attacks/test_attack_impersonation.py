"""Attack: deciding as someone else at the command line (issue 11, item 7, `--as NAME`).

A request names its approvers (`carol`, `role:admin`). Another local user runs the real
CLI (`python -m signoff`) and claims to be carol in every way a command line allows:
`--as`, `$SIGNOFF_ACTOR`, `$USER`, lookalike names, someone else's token, a viewer's token.
Each attempt must be refused with a clear message, and nothing may change: the request
stays pending, no decision event is written, no grant or settings line appears.

"Another local user" is made real by giving the store file to another uid (the test runs
as root in CI): the process is then not the store's local admin. Without root, the store
file cannot be given away, and those cases skip, saying so.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from signoff.accounts import Accounts
from signoff.deciders import os_user
from signoff.models import Request, ToolCall, Verdict
from signoff.store import open_store

NOBODY = 65534
REQUEST = "req_payroll"


class World:
    def __init__(self, tmp_path: Path, approvers: tuple[str, ...]) -> None:
        self.root = tmp_path
        self.db = tmp_path / "signoff.db"
        with open_store(self.db) as store:
            store.create_request(
                Request(
                    id=REQUEST,
                    call=ToolCall("send_payment", {"to": "attacker", "amount": 9000}),
                    verdict=Verdict("ask", "critical", None, ("moves money",)),
                    approvers=approvers,
                )
            )
        accounts = Accounts(self.db)
        try:
            self.tokens = {
                name: accounts.add(name, role)
                for name, role in (
                    ("carol", "approver"),
                    ("bob", "approver"),
                    ("vera", "viewer"),
                    ("ada", "admin"),
                )
            }
        finally:
            accounts.close()

    def give_store_away(self) -> None:
        if os.geteuid() != 0:
            pytest.skip("needs root to give the store file to another uid (not its owner)")
        os.chown(self.db, NOBODY, NOBODY)

    def run(
        self, *args: str, env: dict[str, str] | None = None, stdin: str | None = None
    ) -> subprocess.CompletedProcess[str]:
        base = {
            k: v
            for k, v in os.environ.items()
            if k not in ("SIGNOFF_TOKEN", "SIGNOFF_ACTOR", "SIGNOFF_DB")
        }
        return subprocess.run(
            [
                sys.executable,
                "-m",
                "signoff",
                *args,
                "--db",
                str(self.db),
                "--workspace",
                str(self.root),
            ],
            cwd=self.root,
            env={**base, **(env or {})},
            input=stdin,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )

    def state(self) -> str:
        with open_store(self.db) as store:
            return store.get_request(REQUEST).state

    def decision_events(self) -> list[str]:
        with open_store(self.db) as store:
            return [
                e.kind
                for e in store.events_after(0, 1000)
                if e.kind.startswith(("request.decided", "grant", "request.resolved"))
            ]

    def grants(self) -> list[str]:
        with open_store(self.db) as store:
            return [g.rule for g in store.list_grants()]

    def assert_nothing_changed(self) -> None:
        assert self.state() == "pending"
        assert self.decision_events() == []
        assert self.grants() == []
        assert not (self.root / ".signoff" / "settings.local.toml").exists()


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    yield World(tmp_path, ("carol", "role:admin"))


DECIDING = {
    "approve": ["approve", REQUEST],
    "approve-always": ["approve", REQUEST, "--always", "project"],
    "reject": ["reject", REQUEST, "--reason", "no"],
    "edit": ["edit", REQUEST, "--args", '{"to": "attacker", "amount": 1}'],
    "skip": ["skip", REQUEST],
    "answer": ["answer", REQUEST, "ok"],
    "resolve": ["resolve", REQUEST, "done"],
    "grant-add": ["grant", "add", "send_payment"],
    "grant-add-run": ["grant", "add", "send_payment", "--scope", "run", "--run", "r1"],
    "grant-revoke": ["grant", "revoke", "grant_0123456789"],
}


@pytest.mark.parametrize("command", list(DECIDING.values()), ids=list(DECIDING))
def test_as_carol_without_credentials_is_refused(world: World, command: list[str]) -> None:
    world.give_store_away()
    done = world.run(*command, "--as", "carol")
    assert done.returncode == 2, done.stdout
    assert "without carol's credentials" in done.stderr and "Nothing was decided" in done.stderr
    world.assert_nothing_changed()


CLAIMS = {
    "env-actor": ([], {"SIGNOFF_ACTOR": "carol"}),
    "env-user": ([], {"USER": "carol", "LOGNAME": "carol", "SIGNOFF_ACTOR": ""}),
    "bob-token": (["--as", "carol"], {"SIGNOFF_TOKEN": "@bob"}),
    "viewer-token-as-self": (["--as", "vera"], {"SIGNOFF_TOKEN": "@vera"}),
    "garbage-token": (["--as", "carol"], {"SIGNOFF_TOKEN": "so_carol_" + "0" * 64}),
    "carol-name-bob-secret": (["--as", "carol"], {"SIGNOFF_TOKEN": "carol+bob"}),
    "empty-token": (["--as", "carol"], {"SIGNOFF_TOKEN": "   "}),
    "trailing-space": (["--as", "carol "], {}),
    "capital": (["--as", "Carol"], {}),
    "zero-width": (["--as", "carol\u200b"], {}),
    "role-name": (["--as", "role:admin"], {}),
    "local-admin-spoof": (["--as", "local-admin:root as carol"], {}),
}


def _token(world: World, spec: str) -> str:
    if spec.startswith("@"):
        return world.tokens[spec[1:]]
    if spec == "carol+bob":
        return "so_carol_" + world.tokens["bob"].rpartition("_")[2]
    return spec


@pytest.mark.parametrize("claim", list(CLAIMS.values()), ids=list(CLAIMS))
def test_other_ways_to_claim_carol_are_refused(
    world: World, claim: tuple[list[str], dict[str, str]]
) -> None:
    world.give_store_away()
    flags, env = claim
    env = {k: _token(world, v) if k == "SIGNOFF_TOKEN" else v for k, v in env.items()}
    done = world.run("approve", REQUEST, *flags, env=env)
    assert done.returncode == 2, done.stdout
    assert done.stderr.startswith("signoff: ") and "Traceback" not in done.stderr
    world.assert_nothing_changed()


def test_a_token_file_of_someone_else_is_refused(world: World, tmp_path: Path) -> None:
    world.give_store_away()
    token_file = tmp_path / "token"
    token_file.write_text(world.tokens["bob"] + "\n")
    done = world.run("approve", REQUEST, "--as", "carol", "--token-file", str(token_file))
    assert done.returncode == 2 and "the token is bob's, not carol's" in done.stderr
    missing = world.run("approve", REQUEST, "--as", "carol", "--token-file", str(tmp_path / "nope"))
    assert missing.returncode == 2 and "--token-file" in missing.stderr
    world.assert_nothing_changed()


def test_an_approver_token_cannot_grant(world: World) -> None:
    world.give_store_away()
    done = world.run(
        "grant",
        "add",
        "send_payment",
        "--as",
        "carol",
        env={"SIGNOFF_TOKEN": world.tokens["carol"]},
    )
    assert done.returncode == 2 and "only an admin" in done.stderr
    world.assert_nothing_changed()


# ----------------------------------------------------------------------------- controls


def test_carol_with_her_token_decides_as_carol(world: World, tmp_path: Path) -> None:
    world.give_store_away()
    done = world.run(
        "approve", REQUEST, "--as", "carol", env={"SIGNOFF_TOKEN": world.tokens["carol"]}
    )
    assert done.returncode == 0, done.stderr
    assert "as carol;" in done.stdout
    with open_store(world.db) as store:
        request = store.get_request(REQUEST)
        assert request.state == "approved" and request.decision is not None
        assert request.decision.actor == "carol"


def test_carol_with_a_token_file(world: World, tmp_path: Path) -> None:
    world.give_store_away()
    token_file = tmp_path / "carol.token"
    token_file.write_text(world.tokens["carol"])
    done = world.run(
        "reject",
        REQUEST,
        "--reason",
        "not this month",
        "--as",
        "carol",
        "--token-file",
        str(token_file),
    )
    assert done.returncode == 0, done.stderr
    assert world.state() == "rejected"


def test_the_store_owner_acts_as_local_admin_and_is_recorded_so(world: World) -> None:
    done = world.run("approve", REQUEST, "--as", "carol")
    assert done.returncode == 0, done.stderr
    recorded = f"local-admin:{os_user()} as carol"
    with open_store(world.db) as store:
        request = store.get_request(REQUEST)
        assert request.decision is not None and request.decision.actor == recorded
        (event,) = [e for e in store.events_after(0, 100) if e.kind == "request.decided"]
        assert event.actor == recorded


def test_local_admin_cannot_take_a_request_pinned_to_carol_alone(tmp_path: Path) -> None:
    world = World(tmp_path, ("carol",))
    done = world.run("approve", REQUEST, "--as", "carol")
    assert done.returncode == 2 and "may not decide" in done.stderr
    world.assert_nothing_changed()
    done = world.run(
        "approve", REQUEST, "--as", "carol", env={"SIGNOFF_TOKEN": world.tokens["carol"]}
    )
    assert done.returncode == 0, done.stderr


def test_at_a_terminal_the_token_is_asked_for(world: World) -> None:
    pexpect = pytest.importorskip("pexpect")
    world.give_store_away()
    env = {k: v for k, v in os.environ.items() if k not in ("SIGNOFF_TOKEN", "SIGNOFF_ACTOR")}
    argv = [
        "-m",
        "signoff",
        "approve",
        REQUEST,
        "--as",
        "carol",
        "--db",
        str(world.db),
        "--workspace",
        str(world.root),
    ]
    child = pexpect.spawn(sys.executable, argv, env=env, encoding="utf-8", timeout=30)
    child.expect("Token for carol")
    child.sendline(world.tokens["bob"])
    child.expect("not carol's")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 2
    world.assert_nothing_changed()
    child = pexpect.spawn(sys.executable, argv, env=env, encoding="utf-8", timeout=30)
    child.expect("Token for carol")
    child.sendline(world.tokens["carol"])
    child.expect("Approved")
    child.expect(pexpect.EOF)
    assert world.state() == "approved"


def test_postgres_store_has_no_local_admin(tmp_path: Path) -> None:
    """On PostgreSQL nobody owns a store file: --as needs the person's token."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from store_helpers import Backend

    backend = Backend("postgres", tmp_path)  # skips when the server is unreachable
    try:
        store = backend.open()
        store.create_request(
            Request(
                id=REQUEST,
                call=ToolCall("send_payment", {"to": "x", "amount": 1}),
                verdict=Verdict("ask", "critical", None, ("moves money",)),
                approvers=("carol", "role:admin"),
            )
        )
        accounts = Accounts(backend.url)
        carol = accounts.add("carol", "approver")
        accounts.close()
        env = {
            k: v
            for k, v in os.environ.items()
            if k not in ("SIGNOFF_TOKEN", "SIGNOFF_ACTOR", "SIGNOFF_DB")
        }

        def run(*extra: str, token: str | None = None) -> subprocess.CompletedProcess[str]:
            return subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "signoff",
                    "approve",
                    REQUEST,
                    "--db",
                    backend.url,
                    "--workspace",
                    str(tmp_path),
                    *extra,
                ],
                env={**env, **({"SIGNOFF_TOKEN": token} if token else {})},
                cwd=tmp_path,
                capture_output=True,
                text=True,
                timeout=60,
                check=False,
            )

        refused = run("--as", "carol")
        assert refused.returncode == 2 and "without carol's credentials" in refused.stderr
        assert store.get_request(REQUEST).state == "pending"
        done = run("--as", "carol", token=carol)
        assert done.returncode == 0, done.stderr
        decided = store.get_request(REQUEST)
        assert decided.state == "approved" and decided.decision is not None
        assert decided.decision.actor == "carol"
    finally:
        backend.close()
