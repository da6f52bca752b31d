"""targets: what a call's paths resolve to, how a change is told, when a verdict changed."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from signoff.models import ToolCall, Verdict
from signoff.policy import Policy
from signoff.settings import Settings
from signoff.targets import (
    TargetChanged,
    call_targets,
    judgement_change,
    path_state,
    pinned,
    portable,
    stored_targets,
    target_change,
    unjudgeable,
)


def test_targets_of_file_tools(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("a")
    os.symlink("a.txt", tmp_path / "link")
    policy = Policy(Settings(), workspace=tmp_path)
    root = str(tmp_path.resolve())
    assert call_targets(policy, ToolCall("write_file", {"path": "new.txt", "content": ""})) == {
        "new.txt": [f"{root}/new.txt", "missing"]
    }
    assert call_targets(policy, ToolCall("read_file", {"path": "link"})) == {
        "link": [f"{root}/a.txt", "file"]
    }
    project = call_targets(
        policy, ToolCall("create_project", {"path": "p", "files": {"x/y.py": ""}})
    )
    assert project == {"p": [f"{root}/p", "missing"], "p/x/y.py": [f"{root}/p/x/y.py", "missing"]}
    assert call_targets(policy, ToolCall("execute_command", {"command": "ls"})) == {}
    assert call_targets(policy, ToolCall("write_file", {"path": 3, "content": ""})) == {}


def test_portable_targets_are_relative_inside_the_workspace() -> None:
    targets = {"a": ["/ws/a", "file"], "b": ["/elsewhere/b", "missing"], ".": ["/ws", "dir"]}
    stored = portable(targets, "/ws")
    assert stored == {"a": ["./a", "file"], "b": ["/elsewhere/b", "missing"], ".": ["./.", "dir"]}
    assert stored_targets({"targets": stored}) == stored
    assert stored_targets({}) is None
    assert stored_targets({"targets": {"a": "garbage", 3: [1, 2]}}) == {}


def test_target_change_says_what_moved() -> None:
    before = {"report.txt": ["./report.txt", "missing"]}
    assert target_change(before, dict(before), "/ws") is None
    moved = target_change(before, {"report.txt": ["./.git/config", "file"]}, "/ws")
    assert moved == (
        "report.txt was a new file report.txt when judged and is now the file .git/config"
    )


def verdict(effect: str, *reasons: str, rule: str | None = None) -> Verdict:
    return Verdict(effect, "low", rule, reasons or ("why",))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("decided", "now", "changed"),
    [
        (verdict("ask"), verdict("ask"), None),
        (verdict("ask"), verdict("allow"), None),  # looser: the policy allows it anyway
        (verdict("ask"), verdict("notify"), None),
        (verdict("ask"), verdict("deny"), "it is now denied"),
        (verdict("allow"), verdict("ask"), "it now needs a person's approval"),
        (verdict("notify"), verdict("ask"), "it now needs a person's approval"),
        (verdict("allow"), verdict("notify"), "it now needs a person's approval"),
        (
            verdict("ask", "rule x asks", rule="x"),
            verdict("ask", "sensitive", rule="boundary"),
            "the reasons to ask changed",
        ),
    ],
)
def test_judgement_change(decided: Verdict, now: Verdict, changed: str | None) -> None:
    why = judgement_change(decided, now)
    assert (why is None) if changed is None else (why is not None and why.startswith(changed))


def test_path_state_never_opens(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")
    os.symlink("nowhere", tmp_path / "dangling")
    (tmp_path / "f").write_text("")
    states = {n: path_state(str(tmp_path / n)) for n in ("pipe", "dangling", "f", "none")}
    assert states == {"pipe": "fifo", "dangling": "link", "f": "file", "none": "missing"}
    assert path_state(str(tmp_path)) == "dir"


def test_pinned_judges_the_resolved_paths(tmp_path: Path) -> None:
    root = tmp_path.resolve()
    (root / ".git").mkdir()
    os.symlink(".git", root / "proj")
    os.symlink(".git/config", root / "notes.txt")
    policy = Policy(Settings(), workspace=root)
    write = ToolCall("write_file", {"path": "notes.txt", "content": "x"}, "c1")
    pinned_write = pinned(policy, write, call_targets(policy, write))
    assert pinned_write.arguments == {"path": f"{root}/.git/config", "content": "x"}
    assert pinned_write.id == "c1"
    project = ToolCall("create_project", {"path": "proj", "files": {"config": "x"}})
    pinned_project = pinned(policy, project, call_targets(policy, project))
    assert pinned_project.arguments == {"path": f"{root}/.git", "files": {"config": "x"}}
    shell = ToolCall("execute_command", {"command": "ls"})
    assert pinned(policy, shell, call_targets(policy, shell)) is shell
    # judged on the pinned path, the write through the link asks (a sensitive path)
    assert policy.evaluate(pinned_write).effect == "ask"


def test_a_path_that_cannot_be_resolved_is_refused(tmp_path: Path) -> None:
    def flipping(path: str) -> str:
        if path.endswith("notes.txt"):
            raise OSError(22, "Invalid argument")
        return os.path.realpath(path)

    policy = Policy(Settings(), workspace=tmp_path, resolver=flipping)
    call = ToolCall("write_file", {"path": "notes.txt", "content": "x"})
    with pytest.raises(TargetChanged, match="changed while it was being judged"):
        call_targets(policy, call)
    verdict = unjudgeable(policy, call, TargetChanged("notes.txt moved"))
    assert verdict.effect == "deny" and "call it again" in verdict.reason
