"""A full disk under the store, on every path that writes: the hook, `signoff worker`, the
HTTP hook of `signoff serve` and `signoff mcp proxy`.

The store lives on a small filesystem of its own (a tmpfs mounted in the test's scratch
folder: root only; elsewhere these tests are skipped, and say why), which is then filled
to the last byte. Each path must block with one line that says the disk is full, run
nothing, and lose nothing recorded before; once space is freed, the next call goes
through and the chain still verifies, with no gap.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from adapter_helpers import event
from serve_agent import AGENT_REF, make_agent
from signoff.audit import verify_store
from signoff.models import Decision
from signoff.runs.runner import Runner
from signoff.store import open_store

pytestmark = pytest.mark.slow  # a filesystem mounted, processes started
ROOT = Path(__file__).resolve().parent.parent
HERE = ROOT / "tests"
SRC = str(ROOT / "src")


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 2 MiB filesystem in the test's scratch folder, unmounted afterwards."""
    if os.geteuid() != 0:
        pytest.skip("a full disk needs a small filesystem mounted, which needs root")
    mount = tmp_path / "small"
    mount.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=2m,mode=0755", "tmpfs", str(mount)],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode:
        pytest.skip(f"cannot mount a small filesystem here: {done.stderr.strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def fill(mount: Path) -> Path:
    """Fill the filesystem to its last byte; the filler, to delete to free it."""
    filler = mount / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        for size in (1 << 16, 4096, 512, 1):
            while True:
                try:
                    os.write(fd, b"\0" * size)
                except OSError:
                    break
    finally:
        os.close(fd)
    assert os.statvfs(mount).f_bavail == 0
    return filler


def recorded(url: str, n: int = 3) -> None:
    """What is on the record before the disk fills: `n` entries, the store closed."""
    with open_store(url) as store:
        for i in range(n):
            store.record("verdict", {"before": i}, run_id="run-0")


def intact(url: str, entries: int) -> None:
    """Everything recorded is there, and the chain verifies with no gap."""
    with open_store(url) as store:
        report = verify_store(store)
        assert report.ok, report.message
        assert [e.seq for e in store.events_after(0, 1000)] == list(range(1, entries + 1))


def process(
    argv: list[str], *, cwd: Path | None = None, stdin: str = "", paths: str = SRC
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "signoff", *argv],
        input=stdin,
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": paths},
        timeout=120,
        check=False,
    )


def says_full(line: str) -> None:
    assert "KiB free: free some space" in line and "what was recorded before is kept" in line


def one_line(done: subprocess.CompletedProcess[str]) -> str:
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    return lines[0]


@pytest.fixture
def project(small_disk: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    for name in ("XDG_CONFIG_HOME", "SIGNOFF_DB", "CLAUDE_PROJECT_DIR"):
        monkeypatch.delenv(name, raising=False)
    root = small_disk / "proj"
    root.mkdir()
    return root


def test_the_hook_blocks_with_one_line_and_loses_nothing(project: Path) -> None:
    url = str(project / ".signoff" / "signoff.db")
    recorded(url)
    filler = fill(project.parent)
    doc = json.dumps(event(project, "Bash", {"command": "ls"}))
    for _ in range(2):  # the same, each time
        done = process(["hook", "claude-code"], cwd=project, stdin=doc)
        assert done.returncode == 2 and done.stdout == ""
        says_full(one_line(done))
    filler.unlink()
    done = process(["hook", "claude-code"], cwd=project, stdin=doc)
    assert done.returncode == 0, done.stderr
    intact(url, 4)


def test_the_worker_runs_nothing_and_the_run_waits(project: Path, tmp_path: Path) -> None:
    url = str(project / ".signoff" / "signoff.db")
    sent = tmp_path / "sent.log"  # on the roomy disk: what the tool did
    metadata = {"log": str(sent), "to": "ops"}
    with open_store(url) as store:
        run = Runner(store, make_agent(metadata), agent_ref=AGENT_REF).start(
            [{"role": "user", "content": "send it to ops"}], metadata=metadata
        )
        store.decide(run.waiting_on[0], Decision("approve"), actor="ann")
        before = store.last_seq()
    filler = fill(project.parent)
    paths = os.pathsep.join([SRC, str(HERE)])
    done = process(["worker", "--once", "--quiet", "--db", url], paths=paths)
    assert done.returncode == 2
    says_full(one_line(done))
    assert not sent.exists()  # nothing ran
    filler.unlink()
    done = process(["worker", "--once", "--quiet", "--db", url], paths=paths)
    assert done.returncode == 0, done.stderr
    assert sent.read_text().splitlines() == [f"ops {run.waiting_on[0]}"]  # once
    with open_store(url) as store:
        assert store.get_run(run.id).status == "finished"
    intact(url, store_last(url))
    assert store_last(url) > before


def store_last(url: str) -> int:
    with open_store(url) as store:
        return store.last_seq()


def test_the_http_hook_of_serve_denies_and_loses_nothing(
    small_disk: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from web_helpers import LiveServer

    monkeypatch.setenv("SIGNOFF_HOOK_TOKEN", "t0ken")
    with LiveServer(small_disk) as server:
        server.store.record("verdict", {"before": True})
        before = server.store.last_seq()
        filler = fill(small_disk)
        doc = event(server.workspace, "Bash", {"command": "ls"})
        with server.client("t0ken") as client:
            out = client.post("/hooks/claude-code", json=doc).json()["hookSpecificOutput"]
            assert out["permissionDecision"] == "deny"
            reason = out["permissionDecisionReason"]
            assert "\n" not in reason
            says_full(reason)
            filler.unlink()
            out = client.post("/hooks/claude-code", json=doc).json()["hookSpecificOutput"]
            assert out["permissionDecision"] == "allow", out
        intact(server.db, before + 1)


async def test_the_mcp_proxy_sends_nothing_upstream_unrecorded(
    project: Path, tmp_path: Path
) -> None:
    pytest.importorskip("mcp")
    from mcp import Client

    from mcp_servers import proxy_params, text_of, write_config

    spec, log = tmp_path / "tools.json", tmp_path / "log.txt"
    spec.write_text("{}")
    upstream = {
        "command": sys.executable,
        "args": [str(HERE / "mcp_upstream.py"), str(spec), str(log)],
    }
    config = write_config(project, {"up": upstream}, tools={"up__note": {"tier": "read"}})
    url = str(project / ".signoff" / "signoff.db")
    recorded(url)
    async with Client(proxy_params(config)) as client:
        assert not (await client.call_tool("up__note", {"text": "roomy"})).is_error
        filler = fill(project.parent)
        result = await client.call_tool("up__note", {"text": "full"})
        assert result.is_error
        text = text_of(result)
        assert "\n" not in text
        says_full(text)
        filler.unlink()
        freed = await client.call_tool("up__note", {"text": "freed"})
        assert not freed.is_error, text_of(freed)
    assert log.read_text().splitlines() == ["note roomy", "note freed"]  # never "full"
    intact(url, store_last(url))
    with open_store(url) as store:
        ran = [
            e.data["call"]["arguments"]["text"]
            for e in store.events_after(0, 1000)
            if e.kind == "session.outcome"
        ]
    assert ran == ["roomy", "freed"]  # the outcome held while the disk was full was kept


# ----------------------------------------------------------------------------- PostgreSQL


@pytest.fixture
def small_postgres(small_disk: Path) -> Iterator[tuple[str, Path]]:
    """A PostgreSQL server of its own whose data lives on a small filesystem (80 MiB: its
    first WAL segment and a fresh cluster fit); its URL and the filesystem's mount."""
    initdb, pg_ctl = shutil.which("initdb"), shutil.which("pg_ctl")
    if initdb is None or pg_ctl is None or not _user_exists("postgres"):
        pytest.skip("no initdb, pg_ctl or postgres user: a server of its own cannot be made")
    # the server runs as postgres, which cannot reach into root's pytest folders
    folder = Path(tempfile.mkdtemp(prefix="signoff-full-pg-", dir="/tmp"))
    folder.chmod(0o755)
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=80m,mode=0755", "tmpfs", str(folder)], check=False
    )
    if mounted.returncode:
        folder.rmdir()
        pytest.skip("cannot mount a filesystem for the server")
    data = folder / "data"
    port = _free_port()
    try:
        os.chown(folder, *_ids("postgres"))
        as_postgres = ["runuser", "-u", "postgres", "--"]
        subprocess.run(
            [*as_postgres, initdb, "-D", str(data), "-A", "trust", "-U", "postgres", "--no-sync"],
            capture_output=True,
            check=True,
        )
        options = f"-p {port} -k {folder} -c listen_addresses=127.0.0.1 -c fsync=off"
        subprocess.run(
            [
                *as_postgres,
                pg_ctl,
                "-D",
                str(data),
                "-o",
                options,
                "-w",
                "-l",
                str(folder / "log"),
                "start",
            ],
            capture_output=True,
            check=True,
        )
        yield f"postgresql://postgres@127.0.0.1:{port}/postgres", folder
    finally:
        subprocess.run(
            [
                "runuser",
                "-u",
                "postgres",
                "--",
                pg_ctl or "pg_ctl",
                "-D",
                str(data),
                "-m",
                "immediate",
                "stop",
            ],
            capture_output=True,
            check=False,
        )
        subprocess.run(["umount", "-l", str(folder)], check=False)
        folder.rmdir()


def _user_exists(name: str) -> bool:
    try:
        _ids(name)
    except KeyError:
        return False
    return True


def _ids(name: str) -> tuple[int, int]:
    import pwd

    found = pwd.getpwnam(name)
    return found.pw_uid, found.pw_gid


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def test_a_postgres_server_with_a_full_disk_blocks_the_hook_with_one_line(
    small_postgres: tuple[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from signoff.exceptions import ConfigurationError

    url, mount = small_postgres
    recorded(url)
    filler = fill(mount)
    with open_store(url) as store:  # what free room the tables' pages had, taken
        with pytest.raises(ConfigurationError, match="its disk is full"):
            for n in range(100_000):
                store.record("verdict", {"pad": "x" * 2000, "n": n})
        kept = store.last_seq()
    project = tmp_path / "proj"
    project.mkdir()
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("SIGNOFF_DB", url)
    doc = json.dumps(event(project, "Bash", {"command": "ls"}))
    done = process(["hook", "claude-code"], cwd=project, stdin=doc)
    assert done.returncode == 2 and done.stdout == ""
    line = one_line(done)
    assert "No space left on device" in line and "its disk is full" in line
    assert "what was recorded before is kept" in line
    filler.unlink()
    done = process(["hook", "claude-code"], cwd=project, stdin=doc)
    assert done.returncode == 0, done.stderr
    intact(url, kept + 1)
