"""Attacks on "what runs is what was approved" (issue 11, item 5), performed for real:
the in-process gate that `signoff chat` uses, the built-in tools' own last check, and a
Hypothesis property over starting states and swaps. See test_attack_what_runs.py for
durable runs.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fast_loop import examples
from signoff.gate import Gate
from signoff.llm import ScriptedModel, run_session
from signoff.models import Decision, ToolCall
from signoff.policy import Policy
from signoff.settings import load_settings
from signoff.testing import ScriptedChannel
from signoff.tools import spec_of
from signoff.workspace import Workspace

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "helpers"))

from what_runs_agent import FSMONITOR, make_link_tool
from what_runs_support import (
    assert_untouched,
    git_config,
    git_status,
    start_flipper,
    swap_to_git_config,
    ws,
)

__all__ = ["ws"]  # a fixture, used by name

# ---------------------------------------------------------------------- the in-process gate


def gate_for(root: Path, answers: Any) -> tuple[Gate, Workspace, ScriptedChannel]:
    workspace = Workspace(root)
    channel = ScriptedChannel(answers)
    policy = Policy(load_settings(root, user=False), workspace=root)
    return Gate(policy, channel, previewer=workspace.preview), workspace, channel


GATE_CALLS: dict[str, tuple[ToolCall, Callable[[Path], None]]] = {
    "write_file new file -> link": (
        ToolCall("write_file", {"path": "report.txt", "content": FSMONITOR}),
        swap_to_git_config,
    ),
    "edit_file README -> link": (
        ToolCall("edit_file", {"path": "README", "old": "hello", "new": FSMONITOR}),
        lambda root: (os.unlink(root / "README"), os.symlink(".git/config", root / "README")),
    ),
    "create_project dir -> link": (
        ToolCall("create_project", {"path": "proj", "files": {"config": FSMONITOR}}),
        lambda root: os.symlink(".git", root / "proj"),
    ),
    "write_file into a dir -> link": (
        ToolCall("write_file", {"path": "out/config", "content": FSMONITOR}),
        lambda root: ((root / "out").rmdir(), os.symlink(".git", root / "out")),
    ),
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
    model = ScriptedModel(
        [
            {
                "content": "x",
                "tool_calls": [
                    {
                        "id": "a",
                        "function": {
                            "name": "make_link",
                            "arguments": {"target": ".git/config", "name": "notes.txt"},
                        },
                    },
                    {
                        "id": "b",
                        "function": {
                            "name": "write_file",
                            "arguments": {"path": "notes.txt", "content": FSMONITOR},
                        },
                    },
                ],
            },
            {
                "content": "x",
                "tool_calls": [
                    {
                        "id": "c",
                        "function": {
                            "name": "execute_command",
                            "arguments": {"command": "git status --short"},
                        },
                    }
                ],
            },
            {"content": "done"},
        ]
    )
    gate, workspace, channel = gate_for(ws, [])  # rejects every ask
    make_link = make_link_tool(str(ws))  # the embedding program's tool: notify, unseen
    spec = spec_of(make_link)
    assert spec is not None
    gate.policy.registry.add(spec)
    tools = {**workspace.as_mapping(), "make_link": make_link}
    run_session(
        model,
        [{"role": "user", "content": "go"}],
        gate=gate,
        tools=tools,
        tool_specs=workspace.openai_tools(),
    )
    assert [p.request.call.name for p in channel.prompts] == ["write_file"]
    assert_untouched(ws, config)


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
    return {
        str(p.relative_to(base)): p.read_bytes()
        for p in base.rglob("*")
        if p.is_file() and not p.is_symlink()
    }


@settings(
    max_examples=examples(200),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    start=st.sampled_from(STARTS),
    swap=st.sampled_from(SWAPS_TO),
    tool=st.sampled_from(["write_file", "edit_file"]),
)
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
    args = (
        {"path": "report.txt", "content": "new\n"}
        if tool == "write_file"
        else {"path": "report.txt", "old": "[core]", "new": "new"}
    )
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


def test_a_process_flipping_a_link_in_a_loop_never_gets_a_write_through(ws: Path) -> None:
    """A process the agent left running flips notes.txt between a file and a link to
    .git/config while the gate runs write_file notes.txt again and again. Whatever the
    interleaving, .git/config is never written: the judged target is compared again by
    the tool, and the open and the rename never follow a link."""
    config = git_config(ws)
    flipper = start_flipper(ws)
    try:
        workspace = Workspace(ws)
        gate = Gate(
            Policy(load_settings(ws, user=False), workspace=ws), previewer=workspace.preview
        )  # every ask is rejected: nobody is there
        outcomes = []
        for _ in range(300):
            gate.clear()  # the refusal limit would stop the session: keep attacking
            call = ToolCall("write_file", {"path": "notes.txt", "content": FSMONITOR})
            outcomes.append(gate.execute(call, workspace.write_file).outcome)
            assert git_config(ws) == config
    finally:
        flipper.kill()
        flipper.wait()
    assert set(outcomes) <= {"ran", "rejected", "failed", "denied"}
    assert_untouched(ws, config)
