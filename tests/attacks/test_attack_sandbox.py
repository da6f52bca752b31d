"""Attacks on the sandbox (issue 27, item 1), performed for real.

The attacker is `sandbox_payloads.py`, run contained by `signoff.sandbox.launch.run` with
the system's Python, as an unprivileged user (`nobody`) when the tests run as root, as
the user running them otherwise. Each attempt must fail inside the sandbox, and a
snapshot taken from outside (every file outside the workspace, and the workspace's
protected files) must be the same after the run as before. A control runs the same
attacker uncontained, as the same user: there each attempt succeeds, so a sandbox that
let one through would fail here.

The scratch folder is NOT under /tmp: the sandbox's /tmp is private, so a folder there
would be invisible inside and prove nothing about the read-only file system or the
hidden credentials. It is made under the repository's `.cache/` (ignored by git) and
removed after each test; the workspace of the plainer tests is under `tmp_path`.
"""

from __future__ import annotations

import ctypes
import hashlib
import io
import json
import os
import shutil
import socket
import stat
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from signoff.sandbox import probe
from signoff.sandbox.bwrap import Limits
from signoff.sandbox.launch import Outcome, run
from signoff.sandbox.stage import remove_tree

pytestmark = pytest.mark.slow  # real sandboxes, other processes, timeouts

REPO = Path(__file__).resolve().parents[2]
PAYLOADS = Path(__file__).with_name("sandbox_payloads.py")
PYTHON = "/usr/bin/python3"  # the attacker's: readable by an unprivileged user
CANARY = "CANARY-sbx-5e1f0d-never-read"
NOBODY = (65534, 65534)
SMALL = Limits(processes=64, memory=256 << 20, tmp_size=64 << 20)


def _require() -> None:
    found = probe()
    if found.available and os.path.exists(PYTHON):
        return
    reason = found.reason or f"{PYTHON} is missing"
    if os.environ.get("SIGNOFF_REQUIRE_SANDBOX"):
        pytest.fail(f"SIGNOFF_REQUIRE_SANDBOX is set but no sandbox can be made: {reason}")
    pytest.skip(f"no sandbox here (set SIGNOFF_REQUIRE_SANDBOX to fail): {reason}")


class World:
    """A workspace with git internals, client settings and signoff state; a home with
    credentials; a folder outside; signoff's config and store outside; all owned by the
    attacker's user."""

    def __init__(self, base: Path) -> None:
        self.base = base
        self.user = NOBODY if os.geteuid() == 0 else None
        self.ws, self.home, self.outside = base / "ws", base / "home", base / "outside"
        self.config, self.state, self.stage = base / "config", base / "state", base / "stage"
        self.attacker = base / "attacker"
        files = {
            "ws/existing.txt": "before",
            "ws/doomed.txt": "doomed",
            "ws/sub/inside.txt": "inside",
            "ws/.git/HEAD": "ref: refs/heads/main\n",
            "ws/.git/config": "[core]\n\trepositoryformatversion = 0\n",
            "ws/.git/hooks/post-checkout": "#!/bin/sh\necho original\n",
            "ws/.git/objects/info/packs": "",
            "ws/.signoff/settings.local.toml": f"# {CANARY}\n",
            "ws/.vscode/settings.json": "{}",
            "home/.ssh/id_rsa": CANARY,
            "home/.aws/credentials": f"aws_secret_access_key = {CANARY}\n",
            "home/.netrc": f"machine example.com password {CANARY}\n",
            "home/.git-credentials": f"https://u:{CANARY}@example.com\n",
            "home/.config/gh/hosts.yml": f"oauth_token: {CANARY}\n",
            "home/.docker/config.json": f'{{"auth": "{CANARY}"}}',
            "home/.kube/config": f"token: {CANARY}\n",
            "home/.claude.json": f'{{"primaryApiKey": "{CANARY}"}}',
            "home/.bashrc": "# the user's\n",
            "outside/keep.txt": "keep",
            "config/keys.toml": f'current = "{CANARY}"\n',
            "state/signoff.db": CANARY,
            "attacker/payloads.py": PAYLOADS.read_text(),
        }
        for name, text in files.items():
            (base / name).parent.mkdir(parents=True, exist_ok=True)
            (base / name).write_text(text)
        (self.ws / "planted").symlink_to(self.outside)  # a link planted before the run
        self.stage.mkdir()
        if self.user is not None:
            for path in [base, *base.rglob("*")]:
                os.chown(path, *self.user, follow_symlinks=False)

    def env(self) -> dict[str, str]:
        return {
            "PATH": "/usr/bin:/bin",
            "HOME": str(self.home),
            "LANG": "C.UTF-8",
            "SIGNOFF_CONFIG_DIR": str(self.config),
            "SIGNOFF_DB": str(self.state / "signoff.db"),
            "GITHUB_TOKEN": CANARY,
            "AWS_SECRET_ACCESS_KEY": CANARY,
            "OPENAI_API_KEY": CANARY,
            "DATABASE_URL": f"postgres://app:{CANARY}@db.example.com/app",
        }

    def argv(self, attack: str, args: dict[str, Any]) -> list[str]:
        return [PYTHON, str(self.attacker / "payloads.py"), attack, json.dumps(args)]

    def attack(
        self,
        attack: str,
        args: dict[str, Any],
        *,
        limits: Limits = SMALL,
        stdin: int | None = subprocess.DEVNULL,
        on_start: Callable[[subprocess.Popen[bytes]], None] | None = None,
    ) -> tuple[Outcome, list[dict[str, Any]], str]:
        """Run an attack contained; its outcome, its reports and its stderr."""
        errors = io.BytesIO()
        with tempfile.TemporaryFile() as out:
            outcome = run(
                self.argv(attack, args),
                workspace=str(self.ws),
                cwd=str(self.ws),
                env=self.env(),
                limits=limits,
                stage_root_dir=str(self.stage),
                user=self.user,
                stdin=stdin,
                stdout=out if on_start is None else subprocess.PIPE,
                stderr=errors,
                on_start=on_start,
            )
            out.seek(0)
            printed = out.read().decode()
        return outcome, _reports(printed), errors.getvalue().decode()

    def uncontained(self, attack: str, args: dict[str, Any]) -> list[dict[str, Any]]:
        """The control: the same attacker, the same user, no sandbox."""
        done = subprocess.run(
            self.argv(attack, args),
            cwd=self.ws,
            env=self.env(),
            capture_output=True,
            text=True,
            timeout=60,
            preexec_fn=self._demote,
            check=False,
        )
        return _reports(done.stdout)

    def _demote(self) -> None:
        if self.user is not None:
            os.setgroups([])
            os.setgid(self.user[1])
            os.setuid(self.user[0])

    def spawn(self, argv: list[str], cwd: Path) -> subprocess.Popen[bytes]:
        return subprocess.Popen(argv, cwd=cwd, preexec_fn=self._demote)

    def snapshot(self) -> dict[str, str]:
        """Every entry outside the workspace (the stage aside), and the workspace's git
        folder and client and signoff folders: type, mode and content."""
        protected = (".git", ".signoff", ".claude", ".vscode", ".mcp.json", ".codex")
        out: dict[str, str] = {}
        for path in sorted(self.base.rglob("*")):
            rel = path.relative_to(self.base).as_posix()
            if rel.startswith("stage/") or rel == "stage":
                continue
            parts = rel.split("/")
            if parts[0] == "ws" and len(parts) > 1 and parts[1] not in protected:
                continue
            st = path.lstat()
            if stat.S_ISREG(st.st_mode):
                body = hashlib.sha256(path.read_bytes()).hexdigest()
            elif stat.S_ISLNK(st.st_mode):
                body = os.readlink(path)
            else:
                body = ""
            out[rel] = f"{stat.filemode(st.st_mode)} {body}"
        return out


def _reports(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines() if line.startswith("{")]


def _escaped(reports: list[dict[str, Any]]) -> list[str]:
    return [f"{r['attempt']}: {r['detail']}" for r in reports if r["escaped"]]


@pytest.fixture
def world() -> Iterator[World]:
    _require()
    root = REPO / ".cache" / "sandbox-attacks"
    root.mkdir(parents=True, exist_ok=True)
    base = Path(tempfile.mkdtemp(dir=root))
    base.chmod(0o755)
    if os.geteuid() == 0 and not _reachable_by_nobody(base):
        remove_tree(str(base))
        pytest.skip(f"{base} cannot be reached by an unprivileged user")
    try:
        yield World(base)
    finally:
        remove_tree(str(base))


def _reachable_by_nobody(path: Path) -> bool:
    return all(os.stat(p).st_mode & stat.S_IXOTH for p in [path, *path.parents])


# ---------------------------------------------------------------------- the controls


def test_control_the_workspace_is_writable_and_the_exit_code_passes(world: World) -> None:
    outcome, reports, _ = world.attack("control_write", {"exit": 7})
    assert outcome.started and outcome.exit_code == 7
    assert reports and reports[0]["detail"] == "written"
    assert (world.ws / "created.txt").read_text() == "made in the sandbox"
    assert (world.ws / "existing.txt").read_text() == "before and changed"
    assert not (world.ws / "doomed.txt").exists()
    assert (world.ws / "made" / "deeper" / "leaf.txt").read_text() == "leaf"
    landed = {(c.path, c.action) for c in outcome.changes}
    assert {("created.txt", "created"), ("existing.txt", "modified")} <= landed
    assert {("doomed.txt", "deleted"), ("made", "created")} <= landed
    # nothing of the sandbox's own making is left in the workspace
    assert not [p for p in world.ws.iterdir() if p.name in (".claude", ".codex", ".gemini")]


def test_control_uncontained_every_attack_escapes(world: World) -> None:
    """Without the sandbox, the same attacker, as the same user, gets through: so the
    tests below would see a sandbox that let it."""
    sleeper = world.spawn(["/bin/sleep", "60"], world.outside)
    try:
        args = _write_args(world, sleeper.pid)
        reports = world.uncontained("write_outside", args)
        assert "absolute path" in " ".join(_escaped(reports))
        assert (world.outside / "abs.txt").exists()
        reports = world.uncontained("read_secrets", _secret_args(world))
        assert any("id_rsa" in line for line in _escaped(reports))
        assert any("secret-named variables" in line for line in _escaped(reports))
        with _listener() as (port, accepted):
            reports = world.uncontained("connect_out", _net_args(port))
        assert any("loopback" in line for line in _escaped(reports)) and accepted
        reports = world.uncontained("reach_processes", {"pid": sleeper.pid})
        assert any("kill a process outside" in line for line in _escaped(reports))
    finally:
        sleeper.kill()
        sleeper.wait()


# ---------------------------------------------------------------------- network


@pytest.fixture
def unix_listeners(world: World) -> Iterator[tuple[str, Path, list[bytes]]]:
    abstract = f"signoff-sandbox-test-{os.getpid()}-{time.monotonic_ns()}"
    path = world.outside / "agent.sock"
    got: list[bytes] = []
    servers = []
    for address in ("\0" + abstract, str(path)):
        server = socket.socket(socket.AF_UNIX)
        server.bind(address)
        server.listen()
        server.settimeout(0.2)
        servers.append(server)
    path.chmod(0o777)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            for server in servers:
                try:
                    conn, _ = server.accept()
                except OSError:
                    continue
                got.append(conn.recv(100))
                conn.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield abstract, path, got
    finally:
        stop.set()
        thread.join()
        for server in servers:
            server.close()


class _listener:
    """A TCP listener on the host's loopback; what it accepted."""

    def __enter__(self) -> tuple[int, list[bytes]]:
        self.server = socket.socket()
        self.server.bind(("127.0.0.1", 0))
        self.server.listen()
        self.server.settimeout(0.2)
        self.accepted: list[bytes] = []
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()
        return self.server.getsockname()[1], self.accepted

    def _serve(self) -> None:
        while not self.stop.is_set():
            try:
                conn, _ = self.server.accept()
            except OSError:
                continue
            self.accepted.append(conn.recv(100))
            conn.close()

    def __exit__(self, *_: object) -> None:
        time.sleep(0.3)
        self.stop.set()
        self.thread.join()
        self.server.close()


def _net_args(port: int, abstract: str = "none", path: str = "/none") -> dict[str, Any]:
    return {"port": port, "host": "example.com", "abstract": abstract, "unix_path": path}


def test_no_connection_leaves_the_sandbox(
    world: World, unix_listeners: tuple[str, Path, list[bytes]]
) -> None:
    abstract, path, unix_got = unix_listeners
    before = world.snapshot()
    with _listener() as (port, accepted):
        outcome, reports, _ = world.attack("connect_out", _net_args(port, abstract, str(path)))
    assert outcome.started
    attempts = {r["attempt"] for r in reports}
    assert {"tcp to the host's loopback", "dns lookup", "udp to a public resolver"} <= attempts
    assert {"unix socket (abstract) on the host", "unix socket (path) on the host"} <= attempts
    assert _escaped(reports) == []
    assert accepted == [] and unix_got == []
    assert world.snapshot() == before


# ---------------------------------------------------------------------- writing outside


def _write_args(world: World, pid: int) -> dict[str, Any]:
    return {
        "outside": str(world.outside),
        "pid": pid,
        "home": str(world.home),
        "tmp_name": f"signoff-sandbox-{os.getpid()}-{time.monotonic_ns()}",
    }


def test_nothing_is_written_outside_the_workspace(world: World) -> None:
    sleeper = world.spawn(["/bin/sleep", "60"], world.outside)
    before = world.snapshot()
    args = _write_args(world, sleeper.pid)
    try:
        outcome, reports, _ = world.attack("write_outside", args)
    finally:
        sleeper.kill()
        sleeper.wait()
    assert outcome.started
    escaped = _escaped(reports)
    # the private /tmp is written (inside only); nothing else is
    assert escaped == [f"the private /tmp: /tmp/{args['tmp_name']}"]
    assert not Path("/tmp", args["tmp_name"]).exists()
    details = {r["attempt"]: r["detail"] for r in reports}
    assert "Read-only file system" in details["absolute path"]
    assert "Read-only file system" in details["a link planted before the run"]
    assert "Invalid cross-device link" in details["hard link to a file outside"]
    assert "No such file" in details["/proc/PID/cwd"]
    assert world.snapshot() == before
    # the link it made lands in the workspace as a link, nothing through it
    assert (world.ws / "made-link").is_symlink()
    assert sorted(p.name for p in world.outside.iterdir()) == ["keep.txt"]
    assert any(b.kind == "write" for b in outcome.blocked)


def test_a_link_swapped_in_while_the_command_runs_leads_nowhere(world: World) -> None:
    before = world.snapshot()
    seen: dict[str, Any] = {}

    def swap(proc: subprocess.Popen[bytes]) -> None:
        assert proc.stdout is not None and proc.stdin is not None
        assert proc.stdout.readline().strip() == b"ready"
        (world.ws / "sub").rename(world.ws / "sub-moved")
        (world.ws / "sub").symlink_to(world.outside)
        proc.stdin.write(b"go\n")
        proc.stdin.flush()
        seen["proc"] = proc

    outcome, _, _ = world.attack(
        "link_swapped_during_run", {}, stdin=subprocess.PIPE, on_start=swap
    )
    reports = _reports(seen["proc"].stdout.read().decode())
    assert outcome.started
    assert sorted(p.name for p in world.outside.iterdir()) == ["keep.txt"]
    assert world.snapshot() == before
    # it wrote into its own copy of `sub` (so "escaped" only inside); that copy meets a
    # link in the workspace when it lands: a conflict, not landed
    assert [r["escaped"] for r in reports] == [True]
    conflicts = [c for c in outcome.changes if c.path == "sub"]
    assert conflicts and conflicts[0].action == "conflict"


# ---------------------------------------------------------------------- secrets


def _secret_args(world: World) -> dict[str, Any]:
    paths = [
        world.home / ".ssh" / "id_rsa",
        world.home / ".aws" / "credentials",
        world.home / ".netrc",
        world.home / ".git-credentials",
        world.home / ".config" / "gh" / "hosts.yml",
        world.home / ".docker" / "config.json",
        world.home / ".kube" / "config",
        world.home / ".claude.json",
        world.config / "keys.toml",
        world.state / "signoff.db",
        world.ws / ".signoff" / "settings.local.toml",
    ]
    return {"canary": CANARY, "paths": [str(p) for p in paths], "key_name": _KEY_NAME}


_KEY_NAME = f"signoff-sandbox-test-{os.getpid()}"
_KEYCTL = {"x86_64": 250, "aarch64": 219}.get(os.uname().machine)


@pytest.fixture
def session_key() -> Iterator[None]:
    """A secret in this process's session keyring, which children inherit."""
    if _KEYCTL is None:
        yield
        return
    libc = ctypes.CDLL(None, use_errno=True)
    add_key = {"x86_64": 248, "aarch64": 217}[os.uname().machine]
    key = libc.syscall(add_key, b"user", _KEY_NAME.encode(), CANARY.encode(), len(CANARY), -3)
    if key > 0:  # let every user that possesses it read it (the control runs as nobody)
        libc.syscall(_KEYCTL, 5, key, 0x3F3F0000)  # KEYCTL_SETPERM: possessor and user all
    try:
        yield
    finally:
        if key > 0:
            libc.syscall(_KEYCTL, 9, key, -3)  # KEYCTL_UNLINK


def test_credentials_are_hidden_and_secret_variables_removed(
    world: World, session_key: None
) -> None:
    before = world.snapshot()
    outcome, reports, _ = world.attack("read_secrets", _secret_args(world))
    assert outcome.started
    assert len(reports) >= 13
    assert _escaped(reports) == []
    assert set(outcome.removed_env) >= {
        "GITHUB_TOKEN",
        "AWS_SECRET_ACCESS_KEY",
        "OPENAI_API_KEY",
        "DATABASE_URL",
    }
    assert world.snapshot() == before
    # the control: uncontained, the key in the session keyring is readable
    if _KEYCTL is not None:
        control = world.uncontained("read_secrets", _secret_args(world))
        assert any("keyring" in line for line in _escaped(control))


# ---------------------------------------------------------------------- protected files


def test_git_internals_client_settings_and_signoff_state_do_not_change(world: World) -> None:
    before = world.snapshot()
    state = [
        str(world.config / "keys.toml"),
        str(world.config / "new"),
        str(world.state / "signoff.db"),
    ]
    outcome, reports, _ = world.attack("change_protected", {"state": state})
    assert outcome.started
    assert _escaped(reports) == []
    failures = {r["attempt"]: r["detail"] for r in reports}
    assert "Read-only file system" in failures["write .claude/settings.json"]
    assert "Read-only file system" in failures["add a git hook"]
    assert "Read-only file system" in failures["append to .git/config"]
    assert world.snapshot() == before
    assert not (world.ws / ".claude").exists() and not (world.ws / ".codex").exists()


def test_what_contained_code_may_write_but_must_not_land_is_refused(world: World) -> None:
    before = world.snapshot()
    outcome, reports, _ = world.attack("change_protected_late", {})
    assert outcome.started
    # inside the sandbox these succeed (nothing was there to mount over)
    assert len(_escaped(reports)) == 12
    refused = {c.path for c in outcome.changes if c.action == "refused"}
    never = {
        ".mcp.json",
        "sub/.git/hooks",
        "sub/.git/config",
        "deep/.claude",
        "evil-gitdir/hooks",
        "evil-gitdir/config",
        "evil-gitdir/HEAD",
        "gitfile-dir/.git",
        "linked-dir/.git",
        "bare/HEAD",
        "bare/config",
        "bare/hooks",
    }
    assert never <= refused
    assert [name for name in never if os.path.lexists(world.ws / name)] == []
    assert world.snapshot() == before
    assert {b.kind for b in outcome.blocked} == {"protected"}


@pytest.mark.parametrize("how", ["link", "file"])
def test_a_git_folder_reached_through_a_link_or_a_file_is_protected(world: World, how: str) -> None:
    """`.git` may be a link to, or a file naming, a folder of another name inside the
    workspace: its hooks and config are protected there too."""
    real = world.ws / "realgit"
    shutil.move(world.ws / ".git", real)
    if how == "link":
        (world.ws / ".git").symlink_to("realgit")
    else:
        (world.ws / ".git").write_text("gitdir: realgit\n")
    if world.user is not None:
        os.chown(world.ws / ".git", *world.user, follow_symlinks=False)
    digest = _tree_digest(real)
    paths = ["realgit/hooks/pre-commit", "realgit/config", ".git/hooks/pre-commit"]
    if how == "link":
        paths.append(".git/config")
    outcome, reports, _ = world.attack("write_paths", {"paths": paths})
    assert outcome.started
    assert _escaped(reports) == []
    inside_real = [r for r in reports if "realgit" in r["attempt"]]
    assert all("Read-only file system" in r["detail"] for r in inside_real), reports
    assert _tree_digest(real) == digest


def _tree_digest(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        if p.is_file()
        else "dir"
        for p in sorted(root.rglob("*"))
    }


def test_programs_planted_on_path_in_the_workspace_are_not_used(world: World) -> None:
    """The sandbox's own programs (bwrap, unshare, mount, prlimit, sh) run outside it: a
    virtualenv's `bin` in the workspace on PATH must not supply them."""
    fakes = world.ws / ".venv" / "bin"
    fakes.mkdir(parents=True)
    marker = world.outside / "fake-ran"
    for name in ("bwrap", "unshare", "mount", "prlimit", "sh"):
        (fakes / name).write_text(f"#!/bin/sh\necho {name} >> {marker}\n")
        (fakes / name).chmod(0o755)
    env = world.env()
    env["PATH"] = f"{fakes}:{env['PATH']}"
    outcome = run(
        world.argv("control_write", {}),
        workspace=str(world.ws),
        cwd=str(world.ws),
        env=env,
        limits=SMALL,
        stage_root_dir=str(world.stage),
        user=world.user,
        stdout=subprocess.DEVNULL,
        stderr=io.BytesIO(),
    )
    assert outcome.started and outcome.exit_code == 0
    assert (world.ws / "created.txt").exists()
    assert not marker.exists()


# ---------------------------------------------------------------------- processes


def test_no_process_outlives_the_command(world: World) -> None:
    marker = f"signoff-sandbox-late-{time.monotonic_ns()}"
    late_out, late_in = world.outside / "late.txt", world.ws / "late.txt"
    script = f"sleep 2; echo escaped > {late_out}; echo escaped > {late_in}"
    outcome, reports, _ = world.attack("leave_background", {"script": script, "marker": marker})
    assert outcome.started and reports[0]["escaped"]  # it did start one, inside
    time.sleep(3)
    assert not late_out.exists() and not late_in.exists()
    assert _processes_named(marker) == []


def _processes_named(word: str) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                cmdline = Path("/proc", entry, "cmdline").read_bytes()
            except OSError:
                continue
            if word.encode() in cmdline:
                found.append(int(entry))
    return found


def test_processes_outside_cannot_be_seen_signalled_or_traced(world: World) -> None:
    sleeper = world.spawn(["/bin/sleep", "60"], world.outside)
    try:
        outcome, reports, _ = world.attack(
            "reach_processes", {"pid": sleeper.pid, "everyone": True}
        )
        assert outcome.started
        assert sleeper.poll() is None  # still alive
    finally:
        sleeper.kill()
        sleeper.wait()
    escaped = _escaped(reports)
    # kill(-1) reaches only the sandbox's own processes (there are none but itself)
    assert [line for line in escaped if not line.startswith("signal every process")] == []


@pytest.mark.parametrize("as_caller", [False, True], ids=["unprivileged", "as-the-caller"])
def test_no_privilege_is_gained(world: World, as_caller: bool) -> None:
    """Also run as the caller: when that is root, the sandbox's uid is 0, without any
    capability."""
    if as_caller:
        world.user = None
    args = {"setuid_program": "/usr/bin/mount" if os.path.exists("/usr/bin/mount") else ""}
    outcome, reports, _ = world.attack("gain_privilege", args)
    assert outcome.started
    assert len(reports) >= 6
    assert _escaped(reports) == []


def test_memory_and_process_limits_hold_inside(world: World) -> None:
    if os.geteuid() == 0 and world.user is None:
        pytest.skip("as root the kernel does not hold RLIMIT_NPROC")
    outcome, reports, _ = world.attack("exhaust_memory", {"bytes": 1 << 30})
    assert outcome.started and _escaped(reports) == [], reports
    outcome, reports, _ = world.attack("exhaust_processes", {"count": 500})
    assert outcome.started and _escaped(reports) == [], reports
    assert "Resource temporarily unavailable" in reports[0]["detail"]
    forks = int(reports[0]["detail"].split()[0])
    assert forks < SMALL.processes


def test_the_private_tmp_and_workspace_under_tmp(tmp_path: Path) -> None:
    """A workspace under /tmp (the private /tmp is mounted first, the workspace on it)."""
    _require()
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("a")
    outcome = run(
        ["/bin/sh", "-c", "cat a.txt > b.txt; ls /tmp | wc -l > count.txt; exit 3"],
        workspace=str(ws),
        cwd=str(ws),
        stdout=subprocess.DEVNULL,
        stderr=io.BytesIO(),
        stage_root_dir=str(tmp_path / "stage"),
    )
    assert outcome.exit_code == 3
    assert (ws / "b.txt").read_text() == "a"
    # only the workspace's own path shows in the private /tmp
    assert (ws / "count.txt").read_text().strip() == "1"
    shutil.rmtree(tmp_path / "stage", ignore_errors=True)
