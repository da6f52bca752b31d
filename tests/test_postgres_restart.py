"""PostgreSQL restarts under load (`pg_ctl restart -m immediate`): `signoff serve` (its
embedded worker and its API) and two `signoff worker` processes reconnect and carry on.
Runs approved before the restart end (finished, or in doubt for a person when the restart
cut a call off between its claim and its report); runs approved after it, through the
server's API, all finish; no call runs twice; no process exits; each says once that the
store went away and once that it is back, never once per attempt.

The server restarted is a private cluster made for this test (initdb in tmp_path, its own
port): restarting it disturbs no other test or process on the machine.

Waits below are deadlines against a hang, never speed checks."""

from __future__ import annotations

import glob
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest

import signoff
from signoff.accounts import Accounts
from signoff.approvals import decide
from signoff.exceptions import StoreUnavailable
from signoff.models import Decision
from signoff.runs.runner import Runner
from signoff.store import Store, open_store

SRC = Path(signoff.__file__).resolve().parent.parent  # the processes run this signoff
HELPERS = Path(__file__).parent / "helpers"
DEADLINE = 90.0
RUNS = 12


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _pg_bin() -> Path | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"), key=lambda p: len(p))
    if found:
        return Path(found[-1]).parent
    on_path = shutil.which("pg_ctl")
    return Path(on_path).parent if on_path else None


class PrivateCluster:
    """A PostgreSQL server of its own, in `where`, listening on 127.0.0.1 only."""

    def __init__(self, where: Path, bin_dir: Path) -> None:
        self.dir = where
        self.data = where / "data"
        self.bin = bin_dir
        self.port = _free_port()
        self.url = f"postgresql://postgres@127.0.0.1:{self.port}/postgres"
        where.mkdir()
        if os.geteuid() == 0:  # initdb refuses root: the cluster belongs to postgres
            shutil.chown(where, "postgres")
            os.chmod(where.parent, 0o755)
        self._run("initdb", "-D", str(self.data), "-A", "trust", "-U", "postgres", "--no-sync")

    def _run(self, tool: str, *args: str) -> None:
        argv = [str(self.bin / tool), *args]
        if os.geteuid() == 0:
            argv = ["runuser", "-u", "postgres", "--", *argv]
        subprocess.run(argv, check=True, capture_output=True, timeout=120)

    def _ctl(self, action: str, *extra: str) -> None:
        options = f"-p {self.port} -k {self.dir} -c listen_addresses=127.0.0.1 -c fsync=off"
        log = str(self.dir / "server.log")
        self._run("pg_ctl", "-D", str(self.data), "-l", log, "-w", "-o", options, action, *extra)

    def up(self) -> bool:
        import psycopg

        try:
            psycopg.connect(self.url, connect_timeout=2).close()
        except psycopg.Error:
            return False
        return True

    def start(self) -> None:
        if not self.up():
            self._ctl("start")

    def restart(self) -> None:
        """The server goes away mid-transaction (no clean shutdown) and comes back."""
        try:
            self._ctl("restart", "-m", "immediate")
        finally:
            self.start()  # never left down, whatever happened

    def stop(self) -> None:
        if self.up():
            self._ctl("stop", "-m", "immediate")


@pytest.fixture
def cluster() -> Iterator[PrivateCluster]:
    bin_dir = _pg_bin()
    if bin_dir is None or not (bin_dir / "initdb").exists():
        pytest.skip("no PostgreSQL server binaries (initdb, pg_ctl) on this machine")
    if os.geteuid() == 0 and shutil.which("runuser") is None:
        pytest.skip("running as root without runuser: cannot make a cluster for postgres")
    # not under tmp_path: pytest's folders are private to their owner, and the server
    # runs as postgres when the tests run as root
    where = Path(tempfile.mkdtemp(prefix="signoff-pg-"))
    try:
        made = PrivateCluster(where / "pg", bin_dir)
        made.start()
        try:
            yield made
        finally:
            made.stop()
    finally:
        shutil.rmtree(where, ignore_errors=True)


def _env() -> dict[str, str]:
    out = dict(os.environ)
    out.pop("SIGNOFF_DB", None)
    out["PYTHONPATH"] = os.pathsep.join([str(SRC), str(HELPERS)])
    return out


def _spawn(*argv: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "signoff", *argv],
        env=_env(),
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def _wait(
    check: Callable[[], bool],
    what: str,
    procs: list[subprocess.Popen[str]],
    state: Callable[[], object] = lambda: "",
) -> None:
    deadline = time.monotonic() + DEADLINE
    while True:
        try:
            if check():
                return
        except StoreUnavailable:
            pass  # this test's own store, reconnecting
        for proc in procs:
            if proc.poll() is not None:
                raise AssertionError(f"{what}: {proc.args} ended: {proc.communicate()}")
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} did not happen within {DEADLINE:g} s: {state()}")
        time.sleep(0.1)


def _retrying(action: Callable[[], object], what: str) -> object:
    """This test's own calls across the restart (the processes under test do their own)."""
    deadline = time.monotonic() + DEADLINE
    while True:
        try:
            return action()
        except (StoreUnavailable, httpx.HTTPError) as exc:
            if time.monotonic() > deadline:
                raise AssertionError(f"{what}: the store did not come back: {exc}") from None
            time.sleep(0.2)


def test_serve_and_workers_carry_on_across_a_restart(
    cluster: PrivateCluster, tmp_path: Path
) -> None:
    sys.path.insert(0, str(HELPERS))
    try:
        import slow_agent
    finally:
        sys.path.remove(str(HELPERS))
    url = cluster.url
    store: Store = open_store(url)
    accounts = Accounts(url)
    auth = {"Authorization": f"Bearer {accounts.add('alice', 'approver')}"}
    accounts.close()
    effects = tmp_path / "effects.log"
    metadata = {"effects": str(effects), "seconds": 0.3}  # a call takes a while: load
    runner = Runner(store, slow_agent.build(metadata), agent_ref="slow_agent:build")
    runs = [
        runner.start([{"role": "user", "content": f"pay {i}"}], metadata=metadata)
        for i in range(RUNS)
    ]
    assert all(run.status == "paused" for run in runs)
    workspace = tmp_path / "ws"
    workspace.mkdir()
    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    serve = _spawn(
        "serve", "--db", url, "--workspace", str(workspace), "--port", str(port),
        "--log-level", "warning",
    )  # fmt: skip
    workers = [_spawn("worker", "--db", url, "--poll", "0.5") for _ in range(2)]
    procs = [serve, *workers]
    try:
        _wait(lambda: _health(base), "the server answering", procs)
        before, after = runs[: RUNS // 2], runs[RUNS // 2 :]
        for run in before:
            decide(store, run.waiting_on[0], Decision("approve"), actor="alice")
        _wait(lambda: bool(_lines(effects)), "the first call starting", procs)
        cluster.restart()  # while the workers and the server resume `before`
        for run in after:  # through the server: its API reconnects too
            rid = run.waiting_on[0]
            answer = _retrying(
                lambda rid=rid: _approve(base, auth, rid), f"approving {rid} after the restart"
            )
            assert answer == 200, answer

        def ended() -> bool:
            statuses = [store.get_run(run.id).status for run in runs]
            return all(s in ("finished", "needs_attention") for s in statuses)

        def where() -> object:
            found = {run.id: store.get_run(run.id) for run in runs}
            return [
                (r.id, r.status, r.note, store.get_request(run.waiting_on[0]).state)
                for run in runs
                if (r := found[run.id]).status != "finished"
            ]

        _wait(ended, "every run ending", procs, where)
        for run in after:
            assert store.get_run(run.id).status == "finished", store.get_run(run.id).note
        for run in before:  # finished, or in doubt: cut off between its claim and report
            current = store.get_run(run.id)
            if current.status != "finished":
                state = store.get_request(run.waiting_on[0]).state
                assert state == "in_doubt", (current.note, state)
        done = [line.split()[2] for line in _lines(effects) if line.startswith("done")]
        assert len(done) == len(set(done)), f"a call ran twice: {done}"
        assert all(proc.poll() is None for proc in procs), "a process ended"
    finally:
        errors = [_stop(proc) for proc in procs]
        store.close()
        for proc, err in zip(procs, errors, strict=True):
            print(f"--- {' '.join(map(str, proc.args[3:5]))}:\n{err}")  # shown if it fails
    for err in errors:
        assert "Traceback" not in err, err
    # Each part of a process that met the outage says so once, and once that the store is
    # back: the worker loop, a report the restart cut off, the server's live updates.
    for err, parts in zip(errors, (3, 2, 2), strict=True):
        gone = [line for line in err.splitlines() if "the store is unreachable" in line]
        back = [line for line in err.splitlines() if "the store is back" in line]
        assert 1 <= len(gone) <= parts and len(back) == len(gone), err


def _health(base: str) -> bool:
    try:
        return httpx.get(f"{base}/api/health", timeout=2).status_code == 200
    except httpx.HTTPError:
        return False


def _approve(base: str, auth: dict[str, str], rid: str) -> int:
    answer = httpx.post(
        f"{base}/api/requests/{rid}/decide", headers=auth, json={"kind": "approve"}, timeout=10
    )
    if answer.status_code >= 500:
        raise httpx.HTTPError(f"{answer.status_code}: {answer.text}")  # the store reconnecting
    return answer.status_code


def _lines(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


def _stop(proc: subprocess.Popen[str]) -> str:
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
    try:
        _, err = proc.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        _, err = proc.communicate()
    return err
