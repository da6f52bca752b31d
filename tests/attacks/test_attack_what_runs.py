"""Attacks on "what runs is what was approved" (issue 11, item 5), performed for real:
durable runs.

The hostile agent is a SCRIPTED model (no LLM) driving the built-in workspace tools through
the real runner and store (SQLite, and PostgreSQL where marked), decided and resumed with
the real CLI in other processes. After each attack `.git/config` must be byte for byte
what it was, and `git status` must not run the `core.fsmonitor` payload the agent tried to
plant (a control test shows that it would). The in-process gate (`signoff chat`) is in
test_attack_what_runs_gate.py.
"""

from __future__ import annotations

import json
import os
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "helpers"))

from what_runs_agent import FSMONITOR
from what_runs_support import (
    SETTINGS,
    SWAPS,
    any_store,
    assert_untouched,
    cli,
    db_of,
    git_config,
    git_status,
    start,
    start_flipper,
    swap_to_git_config,
    tool_results,
    ws,
)

pytestmark = pytest.mark.slow  # decided and resumed with the real CLI in other processes

__all__ = ["any_store", "ws"]  # fixtures, used by name


def test_control_the_payload_runs_when_it_is_in_git_config(ws: Path) -> None:
    """Without this, "no proof file" would prove nothing."""
    with open(ws / ".git" / "config", "a") as f:
        f.write(FSMONITOR)
    git_status(ws)
    assert (ws / "fsmonitor_proof").read_text().strip() == "ran"


# ---------------------------------------------------------------------- finding 3(b)


@pytest.mark.parametrize("scenario", ["link_then_write", "write_then_link"])
def test_a_link_made_earlier_in_the_turn_is_seen_by_the_next_call(
    ws: Path, scenario: str, any_store: str
) -> None:
    config = git_config(ws)
    store, run_id = start(ws, scenario)
    run = store.get_run(run_id)
    if scenario == "link_then_write":
        # the write was judged again after the link ran: it now asks, naming .git/config
        assert run.status == "paused"
        (request,) = store.list_requests(state="pending")
        assert request.call.name == "write_file"
        assert ".git/config" in " ".join(request.verdict.reasons)
        assert request.verdict.effect == "ask"
        assert_untouched(ws, config)
        assert cli("reject", request.id, "--reason", "no", "--db", db_of(ws)).returncode == 0
        assert cli("resume", run_id, "--db", db_of(ws)).returncode == 0
    assert store.get_run(run_id).status == "finished"
    assert_untouched(ws, config)


SAME_TURN: dict[str, tuple[str, str, dict[str, Any]]] = {
    # name: (the command that makes the link, the tool that would go through it, args)
    "dir link, write through it": (
        "ln -s .git gitdir",
        "write_file",
        {"path": "gitdir/config", "content": FSMONITOR},
    ),
    "./ spelling": (
        "ln -s ./.git/config notes.txt",
        "write_file",
        {"path": "notes.txt", "content": FSMONITOR},
    ),
    "absolute target": (
        "ln -s $PWD/.git/config notes.txt",
        "write_file",
        {"path": "notes.txt", "content": FSMONITOR},
    ),
    "hooks dir link": (
        "ln -s .git/hooks hk",
        "write_file",
        {"path": "hk/pre-commit", "content": "#!/bin/sh\necho ran > hook_proof\n"},
    ),
    "project into a link to .git": (
        "ln -s .git proj",
        "create_project",
        {"path": "proj", "files": {"x": FSMONITOR}},
    ),
    "link made by cp -s": (
        "cp -s .git/config notes.txt",
        "write_file",
        {"path": "notes.txt", "content": FSMONITOR},
    ),
    "link made by python": (
        "python3 -c \"import os; os.symlink('.git/config', 'notes.txt')\"",
        "write_file",
        {"path": "notes.txt", "content": FSMONITOR},
    ),
}


@pytest.mark.parametrize("case", list(SAME_TURN))
def test_other_links_in_the_same_turn(ws: Path, case: str) -> None:
    config = git_config(ws)
    command, tool, args = SAME_TURN[case]
    turns = [
        [("execute_command", {"command": command}), (tool, args)],
        [("execute_command", {"command": "git status --short"})],
    ]
    store, run_id = start(ws, turns)
    run = store.get_run(run_id)
    link = ws / str(args["path"]).split("/")[0]
    # whether the shell ran the link or asked for it, the second call never ran unasked
    assert run.status == "paused"
    pending = store.list_requests(state="pending")
    assert pending, "something must be waiting for a person"
    if os.path.islink(link):
        assert [r.call.name for r in pending] == [tool]
    assert_untouched(ws, config)
    assert not (ws / ".git" / "hooks" / "pre-commit").exists()
    assert not (ws / ".git" / "x").exists()


@pytest.mark.parametrize("tool", ["write_file", "edit_file"])
def test_a_hard_link_to_git_config_is_never_written_through(ws: Path, tool: str) -> None:
    """A hard link is a regular file, invisible to path resolution: the tools replace the
    file by a rename, which breaks the link instead of writing the shared inode."""
    config = git_config(ws)
    args = (
        {"path": "notes.txt", "content": FSMONITOR}
        if tool == "write_file"
        else {"path": "notes.txt", "old": "[core]", "new": FSMONITOR}
    )
    turns = [
        [("execute_command", {"command": "ln .git/config notes.txt"}), (tool, args)],
        [("execute_command", {"command": "git status --short"})],
    ]
    store, run_id = start(ws, turns)
    for request in store.list_requests(state="pending"):  # a person approves whatever asks
        assert cli("approve", request.id, "--db", db_of(ws)).returncode == 0
    if store.get_run(run_id).status == "paused":
        assert cli("resume", run_id, "--db", db_of(ws)).returncode == 0
    assert_untouched(ws, config)


def test_link_then_edit_in_the_same_turn(ws: Path) -> None:
    config = git_config(ws)
    turns = [
        [
            ["make_link", {"target": ".git/config", "name": "notes.txt"}],
            ["edit_file", {"path": "notes.txt", "old": "[core]", "new": FSMONITOR}],
        ],
    ]
    store, run_id = start(ws, turns)
    assert store.get_run(run_id).status == "paused"
    (request,) = store.list_requests(state="pending")
    assert request.call.name == "edit_file"
    assert_untouched(ws, config)


# ---------------------------------------------------------------------- finding 4


def test_finding_4_the_request_shows_the_link_made_in_its_own_turn(ws: Path) -> None:
    """The ask first, the link (notify) second, in one turn: the request is stored after
    the link ran, so the person is shown where the write really goes."""
    config = git_config(ws)
    store, _ = start(ws, "ask_then_link")
    (request,) = store.list_requests(state="pending")
    assert os.path.islink(ws / "report.txt")
    assert ".git/config" in " ".join(request.verdict.reasons)
    assert "new file: report.txt" not in request.preview
    assert_untouched(ws, config)


@pytest.mark.parametrize("swap", list(SWAPS))
def test_finding_4_approved_then_swapped_is_not_run(ws: Path, swap: str, any_store: str) -> None:
    """A person approves "new file: report.txt"; then the file system changes under it;
    `signoff approve` and `signoff resume` in other processes must not write anywhere."""
    config = git_config(ws)
    store, run_id = start(ws, "approved_new_file")
    (request,) = store.list_requests(state="pending")
    assert "report.txt" in request.preview
    assert request.metadata["targets"]["report.txt"][1] == "missing"
    SWAPS[swap](ws)  # what a process the agent left behind (or a second run) can do
    before = {p: p.read_bytes() for p in ws.rglob("*") if p.is_file() and ".git/" not in str(p)}
    outside = ws.parent / "outside.txt"
    outside_before = outside.read_bytes() if outside.exists() else None
    approve = cli("approve", request.id, "--db", db_of(ws))
    assert approve.returncode == 0, approve.stderr
    resume = cli("resume", run_id, "--db", db_of(ws))
    assert resume.returncode == 0, resume.stderr
    results = tool_results(store, run_id)
    assert "changed after it was approved" in results["t0c0"]
    assert "report.txt" in results["t0c0"]
    assert store.get_request(request.id).state == "failed"  # finished as not run
    assert_untouched(ws, config)
    after = {p: p.read_bytes() for p in ws.rglob("*") if p.is_file() and ".git/" not in str(p)}
    after.pop(ws / "fsmonitor_proof", None)
    assert after == before
    assert not (ws / ".git" / "hooks" / "pre-commit").exists()
    assert (outside.read_bytes() if outside.exists() else None) == outside_before


@pytest.mark.parametrize("swap", ["link to .git/config", "link to a workspace file"])
def test_finding_4_edited_then_swapped_is_not_run(ws: Path, swap: str) -> None:
    """A person edits the content (same path) and approves; the path is swapped after.
    (To a workspace file the verdict is even looser: only the targets catch it.)"""
    config = git_config(ws)
    store, run_id = start(ws, "approved_new_file")
    (request,) = store.list_requests(state="pending")
    edited = json.dumps({"path": "report.txt", "content": "edited by a person\n"})
    assert cli("edit", request.id, "--args", edited, "--db", db_of(ws)).returncode == 0
    SWAPS[swap](ws)
    assert cli("resume", run_id, "--db", db_of(ws)).returncode == 0
    assert "changed after it was approved" in tool_results(store, run_id)["t0c0"]
    assert_untouched(ws, config)


def test_finding_4_parent_directory_swapped_after_approval(ws: Path) -> None:
    config = git_config(ws)
    (ws / "out").mkdir()
    store, run_id = start(ws, "into_out")
    (request,) = store.list_requests(state="pending")
    (ws / "out").rmdir()
    os.symlink(".git", ws / "out")
    assert cli("approve", request.id, "--db", db_of(ws)).returncode == 0
    assert cli("resume", run_id, "--db", db_of(ws)).returncode == 0
    assert "changed after it was approved" in tool_results(store, run_id)["t0c0"]
    assert_untouched(ws, config)


@pytest.mark.parametrize(
    "command",
    ["cp notes.md report.txt", "tee report.txt < notes.md", "dd if=notes.md of=report.txt"],
)
def test_finding_4_an_approved_shell_command_is_judged_again(ws: Path, command: str) -> None:
    """The shell has no targets to record: its analysis, run again at claim time, sees
    that the file it writes now resolves to .git/config, and the approval does not hold."""
    config = git_config(ws)
    (ws / "notes.md").write_text(FSMONITOR)
    (ws / ".signoff" / "settings.toml").write_text(
        SETTINGS.replace("ask = [", 'ask = ["Bash(cp:*)", "Bash(tee:*)", "Bash(dd:*)", ')
    )
    store, run_id = start(ws, [[("execute_command", {"command": command})]])
    (request,) = store.list_requests(state="pending")
    swap_to_git_config(ws)
    assert cli("approve", request.id, "--db", db_of(ws)).returncode == 0
    assert cli("resume", run_id, "--db", db_of(ws)).returncode == 0
    assert "changed after it was approved" in tool_results(store, run_id)["t0c0"]
    assert_untouched(ws, config)


def test_finding_4_unchanged_approval_still_runs(ws: Path) -> None:
    """The check is not a wall: an approved call whose targets did not move runs once."""
    store, run_id = start(ws, "approved_new_file")
    (request,) = store.list_requests(state="pending")
    assert cli("approve", request.id, "--db", db_of(ws)).returncode == 0
    assert cli("resume", run_id, "--db", db_of(ws)).returncode == 0
    assert (ws / "report.txt").read_text() == FSMONITOR
    assert store.get_request(request.id).state == "finished"


def test_a_deny_added_after_the_approval_wins(ws: Path) -> None:
    store, run_id = start(ws, "approved_new_file")
    (request,) = store.list_requests(state="pending")
    assert cli("approve", request.id, "--db", db_of(ws)).returncode == 0
    (ws / ".signoff" / "settings.toml").write_text(SETTINGS + 'deny = ["write_file(report.txt)"]\n')
    assert cli("resume", run_id, "--db", db_of(ws)).returncode == 0
    assert "now denied" in tool_results(store, run_id)["t0c0"]
    assert not (ws / "report.txt").exists()


def test_a_flipping_link_during_a_turn_of_writes(ws: Path, any_store: str) -> None:
    """A process flips notes.txt between a file and a link to .git/config while durable
    turns of 30 writes to notes.txt run: each write is judged on the target the tool is
    then held to, so whatever the interleaving .git/config is never written."""
    config = git_config(ws)
    seen: Counter[tuple[str, str | None]] = Counter()
    flipper = start_flipper(ws)
    try:
        for _ in range(3):
            turn = [("write_file", {"path": "notes.txt", "content": FSMONITOR})] * 30
            store, run_id = start(ws, [turn])
            assert git_config(ws) == config
            run = store.get_run(run_id)
            assert run.status in ("paused", "finished", "needs_attention")
            seen.update((p.effect, p.outcome) for p in run.pending)
    finally:
        flipper.kill()
        flipper.wait()
    allowed = {("ask", None), ("notify", "ran"), ("notify", "failed"), ("deny", "denied")}
    assert set(seen) <= allowed, seen
    assert_untouched(ws, config)


def test_request_targets_are_plain_json(ws: Path) -> None:
    """Recorded with the request, so `signoff resume` in a new process compares them."""
    store, _ = start(ws, "approved_new_file")
    (request,) = store.list_requests(state="pending")
    shown = cli("show", request.id, "--json", "--db", db_of(ws))
    assert shown.returncode == 0, shown.stderr
    doc = json.loads(shown.stdout)
    text = json.dumps(doc)
    assert "targets" in text and "report.txt" in text
