"""The sandbox's mechanism (issue 27, item 1 and the change set of item 2): what lands,
what is refused, the probe and its cache, `signoff sandbox` and `signoff doctor`.

The escape attempts are in tests/attacks/test_attack_sandbox.py. Here each edit of
`sandbox_edits.py` runs contained in one workspace and uncontained in an identical copy
(edits of scratch files only, as the user running the tests): the trees must end equal, so what
lands from the stage is exactly what the command did.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fast_loop import examples
from signoff.exceptions import InvalidInput
from signoff.sandbox import command_line, detect, probe, trusted
from signoff.sandbox.land import land
from signoff.sandbox.launch import NOT_STARTED, run
from signoff.sandbox.profile import listening_sockets, refusal, scrub_env
from signoff.shell import knowledge

SRC = str(Path(__file__).resolve().parents[1] / "src")
EDITS = Path(__file__).with_name("sandbox_edits.py")
PYTHON = "/usr/bin/python3"


def _require() -> None:
    found = probe()
    if found.available and os.path.exists(PYTHON):
        return
    reason = found.reason or f"{PYTHON} is missing"
    if os.environ.get("SIGNOFF_REQUIRE_SANDBOX"):
        pytest.fail(f"SIGNOFF_REQUIRE_SANDBOX is set but no sandbox can be made: {reason}")
    pytest.skip(f"no sandbox here (set SIGNOFF_REQUIRE_SANDBOX to fail): {reason}")


def _tree(root: Path) -> dict[str, str]:
    """Each entry: kind, permissions, links, content (or target)."""
    out: dict[str, str] = {}
    for path in sorted(root.rglob("*")):
        st = path.lstat()
        rel = path.relative_to(root).as_posix()
        if stat.S_ISREG(st.st_mode):
            body = hashlib.sha256(path.read_bytes()).hexdigest()[:16]
            out[rel] = f"file {stat.S_IMODE(st.st_mode):o} links={st.st_nlink} {body}"
        elif stat.S_ISLNK(st.st_mode):
            out[rel] = f"link {os.readlink(path)}"
        else:
            out[rel] = f"dir {stat.S_IMODE(st.st_mode):o}"
    return out


def _workspace(root: Path) -> Path:
    files = {
        "keep.txt": "keep",
        "append.txt": "append",
        "gone.txt": "gone",
        "empty-now.txt": "not empty",
        "script.sh": "echo hi\n",
        "tree/a.txt": "a",
        "tree/b/c.txt": "c",
        "tree2/inner/x.txt": "x",
        "tree2/y.txt": "y",
    }
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    (root / "empty-dir").mkdir()
    (root / "link-to-keep").symlink_to("keep.txt")
    return root


@pytest.fixture
def pair(tmp_path: Path) -> Iterator[tuple[Path, Path, Path]]:
    """Two equal workspaces (contained, uncontained) and a stage root."""
    _require()
    contained = _workspace(tmp_path / "contained")
    uncontained = _workspace(tmp_path / "uncontained")
    for ws in (contained, uncontained):  # in the workspace: the sandbox's /tmp is its own
        (ws / "edits.py").write_text(EDITS.read_text())
    stage = tmp_path / "stage"
    stage.mkdir()
    yield contained, uncontained, stage


@pytest.mark.slow  # real sandboxes or the CLI in other processes
@pytest.mark.parametrize(
    "edit", ["files", "renames", "folders", "replace_kinds", "metadata", "many"]
)
def test_what_lands_is_exactly_what_the_command_did(
    pair: tuple[Path, Path, Path], edit: str
) -> None:
    contained, uncontained, stage = pair
    argv = [PYTHON, "edits.py", edit]
    subprocess.run(argv, cwd=uncontained, check=True, timeout=60)
    outcome = run(
        argv,
        workspace=str(contained),
        cwd=str(contained),
        stage_root_dir=str(stage),
        stdout=subprocess.DEVNULL,
        stderr=io.BytesIO(),
    )
    assert outcome.started and outcome.exit_code == 0
    assert _tree(contained) == _tree(uncontained)
    assert not [c for c in outcome.changes if not c.landed]
    assert [n for n in os.listdir(stage) if n.startswith("run-")] == []  # the stage is done


_NAMES = [
    "keep.txt",
    "gone.txt",
    "tree",
    "tree/a.txt",
    "tree/b",
    "tree/b/c.txt",
    "tree2",
    "tree2/inner",
    "new",
    "new/x.txt",
    "link-to-keep",
    "empty-dir",
]
_OPERATIONS = st.one_of(
    st.tuples(
        st.sampled_from(["write", "append"]), st.sampled_from(_NAMES), st.text("xy", max_size=3)
    ),
    st.tuples(st.sampled_from(["unlink", "mkdir", "rmtree"]), st.sampled_from(_NAMES)),
    st.tuples(st.sampled_from(["move", "link"]), st.sampled_from(_NAMES), st.sampled_from(_NAMES)),
    st.tuples(st.just("symlink"), st.sampled_from(_NAMES), st.sampled_from([*_NAMES, "../out"])),
    # modes that leave the owner everything: inside, even root has no capability to
    # override a mode (docs/containment.md), and outside the tests may run as root
    st.tuples(st.just("chmod"), st.sampled_from(_NAMES), st.sampled_from(["700", "755", "750"])),
)


@pytest.mark.slow  # real sandboxes, many of them
@settings(max_examples=examples(40), deadline=None, suppress_health_check=list(HealthCheck))
@given(operations=st.lists(_OPERATIONS, min_size=1, max_size=8))
def test_any_sequence_of_edits_lands_as_it_would_have_happened(
    tmp_path_factory: pytest.TempPathFactory, operations: list[tuple[str, ...]]
) -> None:
    _require()
    base = tmp_path_factory.mktemp("edits")
    contained, uncontained = _workspace(base / "contained"), _workspace(base / "uncontained")
    for ws in (contained, uncontained):
        (ws / "edits.py").write_text(EDITS.read_text())
    argv = [PYTHON, "edits.py", "replay", json.dumps([list(op) for op in operations])]
    plain = subprocess.run(argv, cwd=uncontained, capture_output=True, text=True, check=True)
    with tempfile.TemporaryFile() as out:
        outcome = run(
            argv,
            workspace=str(contained),
            cwd=str(contained),
            stage_root_dir=str(base / "stage"),
            stdout=out,
            stderr=io.BytesIO(),
        )
        out.seek(0)
        said = out.read().decode()
    assert outcome.started and outcome.exit_code == 0
    assert said == plain.stdout  # each operation did (or failed) the same inside
    assert _tree(contained) == _tree(uncontained)
    shutil.rmtree(base)


@pytest.mark.slow  # real sandboxes or the CLI in other processes
def test_what_a_change_replaces_or_deletes_is_kept_in_the_backup(
    pair: tuple[Path, Path, Path],
) -> None:
    contained, _, stage = pair
    backup = contained.parent / "backup"
    before = _tree(contained)
    outcome = run(
        [PYTHON, "edits.py", "files"],
        workspace=str(contained),
        cwd=str(contained),
        stage_root_dir=str(stage),
        backup=str(backup),
        stdout=subprocess.DEVNULL,
        stderr=io.BytesIO(),
    )
    assert outcome.started
    kept = _tree(backup)
    assert set(kept) == {"keep.txt", "append.txt", "gone.txt", "empty-now.txt"}
    assert all(kept[name] == before[name] for name in kept)
    # a revert by hand: created files out, the backup back
    for change in outcome.changes:
        if change.action == "created":
            (contained / change.path).unlink()
    for name in kept:
        os.replace(backup / name, contained / name)
    assert _tree(contained) == before


@pytest.mark.slow  # real sandboxes or the CLI in other processes
def test_set_id_bits_never_land(pair: tuple[Path, Path, Path]) -> None:
    contained, _, stage = pair
    script = "import os; open('tool', 'w').write('x'); os.chmod('tool', 0o6755)"
    outcome = run(
        [PYTHON, "-c", script],
        workspace=str(contained),
        cwd=str(contained),
        stage_root_dir=str(stage),
        stderr=io.BytesIO(),
    )
    assert outcome.started
    assert stat.S_IMODE((contained / "tool").stat().st_mode) == 0o755
    assert [c.detail for c in outcome.changes if c.path == "tool"] == [
        "set-user-id and set-group-id bits removed"
    ]


@pytest.mark.slow  # real sandboxes or the CLI in other processes
def test_a_file_changed_outside_while_the_command_ran_is_not_overwritten(
    pair: tuple[Path, Path, Path],
) -> None:
    contained, _, stage = pair
    script = (
        "import sys; open('keep.txt', 'w').write('from the sandbox'); "
        "print('ready', flush=True); sys.stdin.readline()"
    )

    def meanwhile(proc: subprocess.Popen[bytes]) -> None:
        assert proc.stdout is not None and proc.stdin is not None
        assert proc.stdout.readline().strip() == b"ready"
        (contained / "keep.txt").write_text("a person's edit")
        proc.stdin.write(b"go\n")
        proc.stdin.flush()

    outcome = run(
        [PYTHON, "-c", script],
        workspace=str(contained),
        cwd=str(contained),
        stage_root_dir=str(stage),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=io.BytesIO(),
        on_start=meanwhile,
    )
    assert (contained / "keep.txt").read_text() == "a person's edit"
    assert [(c.path, c.action) for c in outcome.changes] == [("keep.txt", "conflict")]
    assert [b.kind for b in outcome.blocked] == ["conflict"]


def test_landing_never_follows_a_link_swapped_in_after_the_check(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The race a ctime check cannot see: a folder becomes a link between the landing's
    look at it and its opening. Opening with O_NOFOLLOW refuses the link."""
    from signoff.sandbox import land as landing

    ws, upper, outside = tmp_path / "ws", tmp_path / "upper", tmp_path / "outside"
    (ws / "sub").mkdir(parents=True)
    (upper / "sub").mkdir(parents=True)
    (upper / "sub" / "new.txt").write_text("staged")
    outside.mkdir()
    real_lstat = landing._lstat

    def lstat_then_swap(dir_fd: int, name: str) -> os.stat_result | None:
        found = real_lstat(dir_fd, name)
        if name == "sub":
            (ws / "sub").rmdir()
            (ws / "sub").symlink_to(outside)
        return found

    monkeypatch.setattr(landing, "_lstat", lstat_then_swap)
    changes = land(str(upper), str(ws), since_ns=time.time_ns() + 10**12)
    assert list(outside.iterdir()) == []
    assert [(c.path, c.action) for c in changes] == [("sub", "conflict")]


@pytest.mark.slow  # real sandboxes or the CLI in other processes
def test_a_killed_launcher_takes_its_command_along_and_lands_nothing(tmp_path: Path) -> None:
    """kill -9 of `signoff sandbox` while its command runs: the command and its children
    die with it (--die-with-parent, the PID namespace), nothing lands, and the stage it
    left is swept by a later run once it is a minute old."""
    _require()
    ws, state = tmp_path / "ws", tmp_path / "state"
    ws.mkdir()
    marker = f"signoff-sandbox-killed-{time.monotonic_ns()}"
    script = f"echo x > a.txt; (sleep 60; echo late > b.txt) & echo started; exec sleep 60 {marker}"
    launcher = subprocess.Popen(
        [sys.executable, "-m", "signoff", "sandbox", "--", "sh", "-c", script, marker],
        cwd=ws,
        env={**os.environ, "PYTHONPATH": SRC, "XDG_STATE_HOME": str(state)},
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert launcher.stdout is not None
    assert launcher.stdout.readline().strip() == b"started"
    launcher.kill()
    launcher.wait()
    deadline = time.monotonic() + 10
    while _processes_with(marker) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _processes_with(marker) == []
    assert sorted(os.listdir(ws)) == []
    stages = state / "signoff" / "sandbox"
    (left,) = [p for p in stages.iterdir() if p.name.startswith("run-")]
    os.utime(left, (time.time() - 120, time.time() - 120))
    outcome = run(["true"], workspace=str(ws), stage_root_dir=str(stages), stderr=io.BytesIO())
    assert outcome.exit_code == 0
    assert not left.exists()


def _processes_with(word: str) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if word.encode() in Path("/proc", entry, "cmdline").read_bytes():
                    found.append(int(entry))
            except OSError:
                continue
    return [pid for pid in found if pid != os.getpid()]


def test_without_a_writable_home_the_stage_is_a_private_temporary_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from signoff.sandbox.stage import stage_root

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    root = stage_root({"HOME": "/nonexistent", "XDG_STATE_HOME": "/proc/no-such-folder"})
    assert root == str(tmp_path / f"signoff-{os.getuid()}" / "sandbox")
    assert stat.S_IMODE(os.stat(os.path.dirname(root)).st_mode) == 0o700
    os.chmod(os.path.dirname(root), 0o777)  # someone else's making: refused
    with pytest.raises(PermissionError, match="not this user's own"):
        stage_root({"HOME": "/nonexistent", "XDG_STATE_HOME": "/proc/no-such-folder"})


# ---------------------------------------------------------------------- the rules


@pytest.mark.parametrize(
    ("path", "refused"),
    [
        (".git/hooks/pre-commit", True),
        (".git/config", True),
        (".git/config.worktree", True),
        (".git/modules/lib/hooks/post-checkout", True),
        (".git/modules/lib/config", True),
        ("vendor/lib/.git/hooks/x", True),
        (".GIT/Hooks/x", True),
        (".git/objects/ab/cdef", False),
        (".git/refs/heads/hooks", False),
        (".git/index", False),
        (".git/HEAD", False),
        (".claude", True),
        (".claude/settings.json", True),
        ("sub/.vscode/tasks.json", True),
        (".mcp.json", True),
        (".signoff/settings.toml", True),
        (".Signoff/x", True),
        ("src/app.py", False),
        ("docs/claude.md", False),
        ("config", False),
        ("hooks/pre-commit", False),
    ],
)
def test_which_changes_never_land(path: str, refused: bool) -> None:
    assert (refusal(path) is not None) is refused


def test_secret_variables_are_removed_by_name_and_by_value() -> None:
    kept, removed = scrub_env(
        {
            "PATH": "/usr/bin",
            "HOME": "/home/u",
            "GITHUB_TOKEN": "t",
            "AWS_SECRET_ACCESS_KEY": "s",
            "OPENAI_API_KEY": "k",
            "PGPASSWORD": "p",
            "SSH_AUTH_SOCK": "/run/user/1/ssh",
            "SIGNOFF_KEY": "k",
            "SIGNOFF_TOKEN": "t",
            "DATABASE_URL": "postgres://app:hunter2@db/app",
            "PLAIN_URL": "https://example.com/x",
            "TERM": "xterm",
        }
    )
    assert sorted(kept) == ["HOME", "PATH", "PLAIN_URL", "TERM"]
    assert "DATABASE_URL" in removed and "SSH_AUTH_SOCK" in removed


def test_every_secret_place_the_policy_knows_is_hidden() -> None:
    from signoff.sandbox.profile import HOME_SECRETS

    for place in knowledge.SECRET_DIRS_HOME:
        assert any(place == name or place.startswith(name + "/") for name in HOME_SECRETS)


def test_listening_unix_sockets_are_read_from_the_kernel_table(tmp_path: Path) -> None:
    table = tmp_path / "unix"
    table.write_text(
        "Num       RefCount Protocol Flags    Type St Inode Path\n"
        "0000: 00000002 00000000 00010000 0001 01  4579 /var/run/docker.sock\n"
        "0000: 00000003 00000000 00000000 0001 03  4022 /home/u/connected.sock\n"
        "0000: 00000002 00000000 00010000 0001 01  4580 @abstract\n"
        "0000: 00000002 00000000 00010000 0001 01  4581 /srv/a b.sock\n"
    )
    assert listening_sockets(str(table)) == ["/var/run/docker.sock", "/srv/a b.sock"]


@pytest.mark.slow  # real sandboxes or the CLI in other processes
def test_a_workspace_that_cannot_be_contained_is_refused(tmp_path: Path) -> None:
    _require()
    home = tmp_path / "home"
    (home / "project").mkdir(parents=True)
    for workspace, words in (
        ("/", "cannot be /"),
        (str(tmp_path), "holds the home folder"),
        (str(tmp_path / "missing"), "is not a folder"),
    ):
        with pytest.raises(InvalidInput, match=words):
            run(["true"], workspace=workspace, home=str(home), stage_root_dir=str(tmp_path))


# ---------------------------------------------------------------------- the probe


@pytest.mark.slow  # real sandboxes or the CLI in other processes
def test_the_probe_is_kept_on_disk_under_what_decides_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _require()
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setattr(detect, "_known", None)  # what this process knew comes back after
    first = probe(refresh=True)
    kept = json.loads((tmp_path / "signoff" / "containment.json").read_text())
    assert kept["answer"]["available"] is first.available is True
    # an answer kept under the same key is believed without a trial...
    kept["answer"] = {"available": False, "mechanism": "", "reason": "kept answer"}
    (tmp_path / "signoff" / "containment.json").write_text(json.dumps(kept))
    monkeypatch.setattr(detect, "_known", None)
    assert probe().reason == "kept answer"
    # ...and one kept under another key (another kernel, another bwrap) is not
    kept["key"][1] = "another-kernel"
    (tmp_path / "signoff" / "containment.json").write_text(json.dumps(kept))
    monkeypatch.setattr(detect, "_known", None)
    assert probe().available


def test_without_bubblewrap_the_probe_says_why(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    monkeypatch.setattr(detect, "_known", None)  # what this process knew comes back after
    found = probe(refresh=True)
    assert not found.available
    assert "bubblewrap" in found.reason and "not installed" in found.reason


def test_the_sandbox_trusts_only_programs_the_agent_cannot_replace(tmp_path: Path) -> None:
    """Its own programs run outside the sandbox: one found where the agent can write
    (relative PATH entries, the workspace, a folder others may write) would run the
    command uncontained."""
    real = trusted.which("bwrap")
    if real is None:
        pytest.skip("no bubblewrap here")
    folder = os.path.dirname(real)
    assert trusted.which("bwrap", f"relative:{folder}") == real
    assert trusted.which("bwrap", "relative/bin:bin") is None
    assert trusted.which("bwrap", folder, workspace=os.path.dirname(folder)) is None
    fake = tmp_path / "bin" / "bwrap"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\nexit 0\n")
    fake.chmod(0o755)
    assert trusted.which("bwrap", str(fake.parent)) is None  # /tmp: anyone may write there
    if os.geteuid() == 0:
        owned = Path(tempfile.mkdtemp(dir="/var/lib" if os.access("/var/lib", os.W_OK) else None))
        try:
            owned.chmod(0o755)
            (owned / "bwrap").write_text("#!/bin/sh\nexit 0\n")
            (owned / "bwrap").chmod(0o755)
            assert trusted.which("bwrap", str(owned)) == str(owned / "bwrap")  # the control
            os.chown(owned / "bwrap", 65534, 65534)
            assert trusted.which("bwrap", str(owned)) is None  # not root's
        finally:
            shutil.rmtree(owned)


@pytest.mark.slow  # real sandboxes or the CLI in other processes
def test_a_hook_asking_the_kept_probe_loads_nothing_else(tmp_path: Path) -> None:
    _require()
    code = (
        "import sys\nfrom signoff.sandbox import probe\nprobe()\n"
        "print(sorted(m for m in sys.modules if m.startswith('signoff') or m in "
        "('subprocess', 'shutil', 'tempfile', 'ctypes', 'threading')))\n"
    )
    env = {**os.environ, "PYTHONPATH": SRC}
    subprocess.run([sys.executable, "-c", code], env=env, check=True, capture_output=True)
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, check=True, capture_output=True, text=True
    )
    loaded = eval(done.stdout)  # a printed list of names
    assert loaded == [
        "signoff",
        "signoff._records",
        "signoff.records",
        "signoff.sandbox",
        "signoff.sandbox.detect",
        "signoff.sandbox.trusted",  # the cache key names the trusted programs' paths
    ]


# ---------------------------------------------------------------------- the commands


def _signoff(
    *args: str, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "signoff", *args],
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": SRC, **(env or {})},
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.slow  # real sandboxes or the CLI in other processes
def test_signoff_sandbox_passes_the_exit_code_and_reports(tmp_path: Path) -> None:
    _require()
    ws = tmp_path / "ws"
    ws.mkdir()
    report = tmp_path / "report.json"
    done = _signoff(
        "sandbox",
        "--report",
        str(report),
        "--",
        "sh",
        "-c",
        "echo hi > a.txt; touch /etc/x; exit 5",
        cwd=ws,
    )
    assert done.returncode == 5
    assert (ws / "a.txt").read_text() == "hi\n"
    assert "the sandbox blocked a write outside the workspace" in done.stderr
    assert "A person can run the command uncontained" in done.stderr
    doc = json.loads(report.read_text())
    assert doc["exit_code"] == 5 and doc["changes"][0]["path"] == "a.txt"


@pytest.mark.slow  # real sandboxes or the CLI in other processes
def test_signoff_sandbox_without_a_sandbox_does_not_run_the_command(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    done = _signoff(
        "sandbox", "--", "/bin/sh", "-c", "echo ran > ran.txt", cwd=ws, env={"PATH": "/nonexistent"}
    )
    assert done.returncode == NOT_STARTED
    assert "bwrap is not installed" in done.stderr and "did not run" in done.stderr
    assert not (ws / "ran.txt").exists()


@pytest.mark.slow  # real sandboxes or the CLI in other processes
def test_signoff_doctor_says_whether_containment_works(tmp_path: Path) -> None:
    _require()
    done = _signoff("doctor", cwd=tmp_path)
    assert done.returncode == 0
    assert done.stdout.startswith("containment: available (bubblewrap")
    done = _signoff("doctor", "--json", cwd=tmp_path, env={"PATH": "/nonexistent"})
    assert done.returncode == 1
    found = json.loads(done.stdout)["containment"]
    assert found["available"] is False and "bubblewrap" in found["reason"]
    done = _signoff("doctor", cwd=tmp_path, env={"PATH": "/nonexistent"})
    assert done.returncode == 1
    assert done.stdout.startswith("containment: unavailable: bubblewrap (bwrap) is not")
    assert "nothing runs uncontained" in done.stdout


@pytest.mark.slow  # real sandboxes or the CLI in other processes
def test_the_command_line_for_a_client_runs_this_signoff_whatever_the_workspace_holds(
    tmp_path: Path,
) -> None:
    """A client runs `command_line(...)` from the agent's workspace: a `signoff` package
    planted there, or PYTHONPATH, must not stand in for the real one."""
    _require()
    ws = tmp_path / "ws"
    (ws / "signoff").mkdir(parents=True)
    (ws / "signoff" / "__init__.py").write_text("raise SystemExit('hijacked')\n")
    (ws / "signoff" / "__main__.py").write_text("raise SystemExit('hijacked')\n")
    argv = command_line(["sh", "-c", "echo contained > out.txt; exit 4"], workspace=str(ws))
    done = subprocess.run(
        argv, cwd=ws, env={**os.environ, "PYTHONPATH": str(ws)}, capture_output=True, text=True
    )
    assert done.returncode == 4, done.stderr
    assert "hijacked" not in done.stderr
    assert (ws / "out.txt").read_text() == "contained\n"
    shutil.rmtree(ws / "signoff")
