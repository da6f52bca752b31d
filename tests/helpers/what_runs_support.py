"""Shared fixtures and helpers of the "what runs is what was approved" attack tests
(imported by tests/attacks/test_attack_what_runs*.py; not a test module)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import what_runs_agent
from what_runs_agent import FSMONITOR, git_repo

from signoff.runs.runner import Runner
from signoff.store import Store, open_store

HELPERS = Path(__file__).resolve().parent
sys.path.insert(0, str(HELPERS.parent))
from store_helpers import Backend  # noqa: E402

SRC = HELPERS.parents[1] / "src"
SETTINGS = """[permissions]
ask = ["write_file(report.txt)", "write_file(out/**)", "edit_file(README)", "create_project"]
"""


# ---------------------------------------------------------------------- fixtures


URLS: dict[Path, str] = {}  # workspace -> store URL, when not the SQLite file beside it
OPENED: list[Store] = []


@pytest.fixture
def ws(tmp_path: Path) -> Iterator[Path]:
    root = tmp_path / "ws"
    root.mkdir()
    git_repo(str(root))
    (root / ".signoff").mkdir()
    (root / ".signoff" / "settings.toml").write_text(SETTINGS)
    yield root
    while OPENED:
        OPENED.pop().close()


@pytest.fixture(params=["sqlite", "postgres"])
def any_store(request: pytest.FixtureRequest, ws: Path) -> Iterator[str]:
    """The same attack on SQLite and on the real PostgreSQL server (a fresh schema)."""
    if request.param == "sqlite":
        yield "sqlite"
        return
    backend = Backend("postgres", ws.parent)
    URLS[ws] = backend.url
    try:
        yield "postgres"
    finally:
        while OPENED:
            OPENED.pop().close()
        URLS.pop(ws, None)
        backend.close()


def git_config(root: Path) -> bytes:
    return (root / ".git" / "config").read_bytes()


def git_status(root: Path) -> None:
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    subprocess.run(
        ["git", "status", "--short"],
        cwd=root,
        env=env,
        capture_output=True,
        check=False,
        timeout=60,
    )


def assert_untouched(root: Path, config: bytes) -> None:
    assert git_config(root) == config, ".git/config was changed"
    git_status(root)
    assert not (root / "fsmonitor_proof").exists(), "git ran the planted fsmonitor payload"


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(SRC), str(HELPERS)]),
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_CONFIG_NOSYSTEM": "1",
    }
    return subprocess.run(
        [sys.executable, "-m", "signoff", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )


def db_of(root: Path) -> str:
    # outside the workspace: the store is not the agent's to touch
    return URLS.get(root) or str(root.parent / "signoff.db")


def start(root: Path, scenario: str | list[Any]) -> tuple[Store, str]:
    """A durable run of the scripted agent: a named scenario, or the turns themselves
    (kept in the run's metadata, so `signoff resume` in another process plays them too)."""
    store = open_store(db_of(root))
    OPENED.append(store)
    meta: dict[str, Any] = {"workspace": str(root)}
    meta.update({"scenario": scenario} if isinstance(scenario, str) else {"turns": scenario})
    runner = Runner(store, what_runs_agent.build(meta), agent_ref="what_runs_agent:build")
    run = runner.start([{"role": "user", "content": "tidy up"}], metadata=meta)
    return store, run.id


def tool_results(store: Store, run_id: str) -> dict[str, str]:
    return {
        m["tool_call_id"]: m["content"]
        for m in store.load_messages(run_id)
        if m.get("role") == "tool"
    }


def swap_to_git_config(root: Path) -> None:
    os.symlink(".git/config", root / "report.txt")


def swap_to_workspace_file(root: Path) -> None:
    (root / "src").mkdir()
    (root / "src" / "main.py").write_text("print('hi')\n")
    os.symlink("src/main.py", root / "report.txt")


def swap_to_outside(root: Path) -> None:
    outside = root.parent / "outside.txt"
    outside.write_text("outside\n")
    os.symlink(str(outside), root / "report.txt")


def appear_as_file(root: Path) -> None:
    (root / "report.txt").write_text("someone else's report\n")


def swap_to_hooks(root: Path) -> None:
    os.symlink(".git/hooks/pre-commit", root / "report.txt")


SWAPS: dict[str, Callable[[Path], None]] = {
    "link to .git/config": swap_to_git_config,
    "link to a workspace file": swap_to_workspace_file,
    "link outside the workspace": swap_to_outside,
    "a regular file appears": appear_as_file,
    "dangling link to a hook": swap_to_hooks,
}


FLIPPER = """
import os, random, sys
os.chdir(sys.argv[1])
with open("notes.txt", "w") as f:
    f.write("plain\\n")
print("ready", flush=True)
while True:  # flip notes.txt between a regular file and a link to .git/config
    with open("flip.tmp", "w") as f:
        f.write("plain\\n")
    os.symlink(".git/config", "flip.lnk")
    os.replace("flip.lnk", "notes.txt")
    for _ in range(random.randrange(20000)):  # hold each state for a varying while
        pass
    os.replace("flip.tmp", "notes.txt")
    for _ in range(random.randrange(20000)):
        pass
"""


def start_flipper(root: Path) -> subprocess.Popen[str]:
    """A process (one the agent could have left running) that flips notes.txt between a
    regular file and a link to .git/config as fast as it can; kill() it when done."""
    flipper = subprocess.Popen(
        [sys.executable, "-c", FLIPPER, str(root)], stdout=subprocess.PIPE, text=True
    )
    assert flipper.stdout is not None and flipper.stdout.readline().strip() == "ready"
    return flipper


__all__ = [
    "FSMONITOR",
    "OPENED",
    "SETTINGS",
    "SRC",
    "SWAPS",
    "URLS",
    "any_store",
    "assert_untouched",
    "cli",
    "db_of",
    "git_config",
    "git_status",
    "start",
    "start_flipper",
    "swap_to_git_config",
    "tool_results",
    "ws",
]
