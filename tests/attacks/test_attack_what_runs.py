"""Attacks on "what runs is what was approved" (issue 11, item 5), performed for real.

The hostile agent is a SCRIPTED model (no LLM) driving the built-in workspace tools: a
durable run through the real runner and SQLite store, decided and resumed with the real
CLI in other processes, or the in-process gate that `signoff chat` uses. After each attack
`.git/config` must be byte for byte what it was, and `git status` must not run the
`core.fsmonitor` payload the agent tried to plant (a control test shows that it would).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from signoff.agent import ScriptedModel, run_session
from signoff.gate import Gate
from signoff.models import Decision, ToolCall
from signoff.policy import Policy
from signoff.runner import Runner
from signoff.settings import load_settings
from signoff.store import Store, open_store
from signoff.testing import ScriptedChannel
from signoff.tools import Workspace

HELPERS = Path(__file__).resolve().parent.parent / "helpers"
sys.path.insert(0, str(HELPERS))

import what_runs_agent  # noqa: E402  (a helper module, importable by `signoff resume` too)
from what_runs_agent import FSMONITOR, git_repo  # noqa: E402

sys.path.insert(0, str(HELPERS.parent))
from store_helpers import Backend  # noqa: E402

SRC = Path(__file__).resolve().parents[2] / "src"
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
    subprocess.run(["git", "status", "--short"], cwd=root, env=env, capture_output=True,
                   check=False, timeout=60)


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
    return subprocess.run([sys.executable, "-m", "signoff", *args], capture_output=True,
                          text=True, env=env, timeout=120, check=False)


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
    return {m["tool_call_id"]: m["content"] for m in store.load_messages(run_id)
            if m.get("role") == "tool"}


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
        "ln -s .git gitdir", "write_file", {"path": "gitdir/config", "content": FSMONITOR}),
    "./ spelling": (
        "ln -s ./.git/config notes.txt", "write_file", {"path": "notes.txt",
                                                        "content": FSMONITOR}),
    "absolute target": (
        "ln -s $PWD/.git/config notes.txt", "write_file", {"path": "notes.txt",
                                                           "content": FSMONITOR}),
    "hooks dir link": (
        "ln -s .git/hooks hk", "write_file", {"path": "hk/pre-commit",
                                              "content": "#!/bin/sh\necho ran > hook_proof\n"}),
    "project into a link to .git": (
        "ln -s .git proj", "create_project", {"path": "proj", "files": {"x": FSMONITOR}}),
    "link made by cp -s": (
        "cp -s .git/config notes.txt", "write_file", {"path": "notes.txt",
                                                      "content": FSMONITOR}),
    "link made by python": (
        "python3 -c \"import os; os.symlink('.git/config', 'notes.txt')\"",
        "write_file", {"path": "notes.txt", "content": FSMONITOR}),
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
    args = ({"path": "notes.txt", "content": FSMONITOR} if tool == "write_file"
            else {"path": "notes.txt", "old": "[core]", "new": FSMONITOR})
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
        [("execute_command", {"command": "ln -s .git/config notes.txt"}),
         ("edit_file", {"path": "notes.txt", "old": "[core]", "new": FSMONITOR})],
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


@pytest.mark.parametrize("swap", list(SWAPS))
def test_finding_4_approved_then_swapped_is_not_run(ws: Path, swap: str, any_store: str
                                                    ) -> None:
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


@pytest.mark.parametrize("command", ["cp notes.md report.txt", "tee report.txt < notes.md",
                                     "dd if=notes.md of=report.txt"])
def test_finding_4_an_approved_shell_command_is_judged_again(ws: Path, command: str) -> None:
    """The shell has no targets to record: its analysis, run again at claim time, sees
    that the file it writes now resolves to .git/config, and the approval does not hold."""
    config = git_config(ws)
    (ws / "notes.md").write_text(FSMONITOR)
    (ws / ".signoff" / "settings.toml").write_text(
        SETTINGS.replace('ask = [', 'ask = ["Bash(cp:*)", "Bash(tee:*)", "Bash(dd:*)", '))
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
    (ws / ".signoff" / "settings.toml").write_text(
        SETTINGS + 'deny = ["write_file(report.txt)"]\n')
    assert cli("resume", run_id, "--db", db_of(ws)).returncode == 0
    assert "now denied" in tool_results(store, run_id)["t0c0"]
    assert not (ws / "report.txt").exists()


# ---------------------------------------------------------------------- the in-process gate


def gate_for(root: Path, answers: Any) -> tuple[Gate, Workspace, ScriptedChannel]:
    workspace = Workspace(root)
    channel = ScriptedChannel(answers)
    policy = Policy(load_settings(root, user=False), workspace=root)
    return Gate(policy, channel, previewer=workspace.preview), workspace, channel


GATE_CALLS: dict[str, tuple[ToolCall, Callable[[Path], None]]] = {
    "write_file new file -> link": (
        ToolCall("write_file", {"path": "report.txt", "content": FSMONITOR}),
        swap_to_git_config),
    "edit_file README -> link": (
        ToolCall("edit_file", {"path": "README", "old": "hello", "new": FSMONITOR}),
        lambda root: (os.unlink(root / "README"), os.symlink(".git/config", root / "README"))),
    "create_project dir -> link": (
        ToolCall("create_project", {"path": "proj", "files": {"config": FSMONITOR}}),
        lambda root: os.symlink(".git", root / "proj")),
    "write_file into a dir -> link": (
        ToolCall("write_file", {"path": "out/config", "content": FSMONITOR}),
        lambda root: ((root / "out").rmdir(), os.symlink(".git", root / "out"))),
}


@pytest.mark.parametrize("case", list(GATE_CALLS))
def test_gate_swap_while_the_box_is_shown_asks_again(ws: Path, case: str) -> None:
    """The person approves; while the box was up, the target became a link. The gate asks
    again, showing the change; the person, now seeing it, says no."""
    config = git_config(ws)
    (ws / "out").mkdir()
    call, swap = GATE_CALLS[case]
    answers = iter([Decision("approve"), Decision("reject", reason="not that")])

    def answer(prompt: Any) -> Decision:
        if len(channel.prompts) == 1:
            swap(ws)
        return next(answers)

    gate, workspace, channel = gate_for(ws, answer)
    result = gate.execute(call, workspace.as_mapping()[call.name])
    assert result.outcome == "rejected"
    assert len(channel.prompts) == 2
    assert channel.prompts[1].request.verdict.reasons[0].startswith("asked again")
    assert_untouched(ws, config)


def test_gate_refuses_a_call_that_keeps_changing(ws: Path) -> None:
    """Each time the person approves, the link points somewhere else (each place still
    asks): after asking again twice, the gate refuses instead of chasing it."""
    git_dir = {p: p.read_bytes() for p in (ws / ".git").rglob("*") if p.is_file()}
    targets = iter([".git/description", ".git/HEAD", ".git/config", ".git/info/exclude"])

    def answer(prompt: Any) -> Decision:
        if os.path.lexists(ws / "report.txt"):
            os.unlink(ws / "report.txt")
        os.symlink(next(targets), ws / "report.txt")
        return Decision("approve")

    gate, workspace, channel = gate_for(ws, answer)
    call = ToolCall("write_file", {"path": "report.txt", "content": FSMONITOR})
    result = gate.execute(call, workspace.write_file)
    assert result.outcome == "denied"
    assert "kept changing" in result.content
    assert len(channel.prompts) == 3
    assert {p: p.read_bytes() for p in (ws / ".git").rglob("*") if p.is_file()} == git_dir
    git_status(ws)
    assert not (ws / "fsmonitor_proof").exists()


def test_tool_refuses_a_swap_after_the_last_check(ws: Path) -> None:
    """The window between the gate's check and the tool's open: the tool compares its own
    resolution with the judged target and does not write through the new link."""
    from signoff.targets import TargetChanged, expecting

    config = git_config(ws)
    workspace = Workspace(ws)
    judged = {"report.txt": [str(ws / "report.txt"), "missing"]}
    swap_to_git_config(ws)
    with expecting(judged), pytest.raises(TargetChanged, match="now resolves to"):
        workspace.write_file("report.txt", FSMONITOR)
    assert_untouched(ws, config)


@pytest.mark.parametrize("swap", ["final", "parent"])
def test_open_never_follows_a_link_that_appears_after_resolution(ws: Path, swap: str) -> None:
    """O_NOFOLLOW on every component of the resolved path: a link swapped in after it
    was resolved is refused (or replaced by the rename), never written through."""
    from signoff.safe_files import write_regular
    from signoff.targets import TargetChanged

    config = git_config(ws)
    (ws / "out").mkdir()
    resolved = str(ws / "out" / "config") if swap == "parent" else str(ws / "report.txt")
    if swap == "parent":
        (ws / "out").rmdir()
        os.symlink(".git", ws / "out")
    else:
        swap_to_git_config(ws)
    with pytest.raises(TargetChanged):
        write_regular(resolved, FSMONITOR.encode(), raw="x", tool="write_file")
    assert_untouched(ws, config)


def test_chat_turn_link_then_write_asks(ws: Path) -> None:
    """`signoff chat`'s loop (run_session over the gate): the same turn as finding 3(b)."""
    config = git_config(ws)
    model = ScriptedModel([
        {"content": "x", "tool_calls": [
            {"id": "a", "function": {"name": "execute_command",
                                     "arguments": {"command": "ln -s .git/config notes.txt"}}},
            {"id": "b", "function": {"name": "write_file",
                                     "arguments": {"path": "notes.txt", "content": FSMONITOR}}},
        ]},
        {"content": "x", "tool_calls": [
            {"id": "c", "function": {"name": "execute_command",
                                     "arguments": {"command": "git status --short"}}}]},
        {"content": "done"},
    ])
    gate, workspace, channel = gate_for(ws, [])  # rejects every ask
    tools = workspace.as_mapping()
    run_session(model, [{"role": "user", "content": "go"}], gate=gate, tools=tools,
                tool_specs=workspace.openai_tools())
    assert [p.request.call.name for p in channel.prompts] == ["write_file"]
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


# ---------------------------------------------------------------------- a property

LINK_TARGETS = [".git/config", "src/a.py", "../outside.txt", "src", ".git", "missing.txt"]
STARTS = ["missing", "file", *[f"link:{t}" for t in LINK_TARGETS]]
SWAPS_TO = ["none", "remove", "file", "dir", *[f"link:{t}" for t in LINK_TARGETS]]


def _make(root: Path, name: str, what: str) -> None:
    path = root / name
    if os.path.lexists(path):
        if path.is_dir() and not path.is_symlink():
            path.rmdir()
        else:
            path.unlink()
    if what == "file":
        path.write_text("was here\n")
    elif what == "dir":
        path.mkdir()
    elif what.startswith("link:"):
        os.symlink(what[5:], path)


def _snapshot(base: Path) -> dict[str, bytes]:
    return {str(p.relative_to(base)): p.read_bytes() for p in base.rglob("*")
            if p.is_file() and not p.is_symlink()}


@settings(max_examples=200, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(start=st.sampled_from(STARTS), swap=st.sampled_from(SWAPS_TO),
       tool=st.sampled_from(["write_file", "edit_file"]))
def test_property_the_gate_writes_the_judged_target_or_nothing(
    tmp_path_factory: pytest.TempPathFactory, start: str, swap: str, tool: str
) -> None:
    """Whatever the path was when judged and whatever it became while the person looked,
    the call writes only where the path resolves when it runs, and only after that target
    was judged (allowed by the policy, or shown to the person): a sensitive file such as
    .git/config changes only when the last box shown named it."""
    base = tmp_path_factory.mktemp("prop")
    root = base / "ws"
    (root / ".git").mkdir(parents=True)
    (root / ".git" / "config").write_text("[core]\n")
    (root / "src").mkdir()
    (root / "src" / "a.py").write_text("[core]\n")
    (base / "outside.txt").write_text("[core]\n")
    _make(root, "report.txt", start)
    args = ({"path": "report.txt", "content": "new\n"} if tool == "write_file"
            else {"path": "report.txt", "old": "[core]", "new": "new"})
    before = [_snapshot(base)]

    def answer(prompt: Any) -> Decision:
        if len(channel.prompts) == 1:
            _make(root, "report.txt", swap)  # the attacker's change: not the tool's doing
            before[0] = _snapshot(base)
        return Decision("approve")

    workspace = Workspace(root)
    channel = ScriptedChannel(answer)
    policy = Policy(load_settings(root, user=False), workspace=root)
    gate = Gate(policy, channel, previewer=workspace.preview)
    result = gate.execute(ToolCall(tool, args), getattr(workspace, tool))
    after = _snapshot(base)
    changed = {n for n in set(before[0]) | set(after) if before[0].get(n) != after.get(n)}
    if result.outcome != "ran":
        assert changed == set(), (start, swap, tool, result.outcome, result.content)
        return
    final = os.path.relpath(os.path.realpath(root / "report.txt"), base)
    assert changed <= {final}
    if "ws/.git/config" in changed:  # a sensitive file: only after a box that named it
        last = channel.prompts[-1].request
        assert ".git/config" in " ".join(last.verdict.reasons) + last.preview
