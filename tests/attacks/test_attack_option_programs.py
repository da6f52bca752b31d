"""Issue 12: programs named in options or in the environment, writes through links made in
the same command line, and "always" rules that must stay exact.

The attacks run for real where they can (a symlink made by `ln -s` really carries an
`echo` into a file outside the workspace; `sort --compress-program` really runs the
program), and the analyzer and the policy must ask (or deny) for exactly those commands.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from signoff.models import ToolCall
from signoff.policy import Policy
from signoff.settings import Settings
from signoff.shell import analyze, suggest_rule


@pytest.fixture
def places(tmp_path: Path) -> tuple[Path, Path, Path]:
    # The home directory holds the workspace and the place outside it, as on a laptop
    # (the temp directory itself is scratch space: writes there only notify).
    ws, outside, home = tmp_path / "ws", tmp_path / "outside", tmp_path
    for p in (ws, outside):
        p.mkdir()
    (outside / "target.txt").write_text("original\n")
    (outside / "dir").mkdir()
    return ws, outside, home


LINK_ATTACKS = [
    "ln -s ../outside/target.txt p && echo pwned > p",
    "ln -sf ../outside/target.txt p; printf pwned > p",
    "cp -s {outside}/target.txt p && echo pwned >> p",
    "ln {outside}/target.txt p && echo pwned > p",
    "ln -s ../outside/dir d && echo pwned > d/target.txt",
    "mkdir sub && cd sub && ln -s ../../outside/target.txt p && echo pwned > p",
    "ln -s ../outside/target.txt p && tee p <<< pwned",
    "bash -c 'ln -s ../outside/target.txt p; echo pwned > p'",
]


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
@pytest.mark.parametrize("template", LINK_ATTACKS)
def test_a_write_through_a_link_made_in_the_line_is_a_write_to_its_target(
    places: tuple[Path, Path, Path], template: str
) -> None:
    ws, outside, home = places
    command = template.format(outside=outside)
    result = analyze(command, workspace=str(ws), home=str(home))
    assert result.effect == "ask", (command, result.reasons)
    assert any("outside the workspace" in r for r in result.reasons), result.reasons
    # The attack is real: run it, and the file outside the workspace changed.
    subprocess.run(["bash", "-c", command], cwd=ws, check=False, capture_output=True, timeout=30)
    written = [
        p
        for p in (outside / "target.txt", outside / "dir" / "target.txt")
        if p.exists() and "pwned" in p.read_text()
    ]
    assert written, command


def test_a_link_to_a_system_file_then_a_write_is_denied(tmp_path: Path) -> None:
    for command in (
        "ln -s /etc/passwd p && echo x > p",
        "ln -s /etc e && echo x > e/hosts",
        "ln -s ~/.bashrc b; echo x >> b",
    ):
        result = analyze(command, workspace=str(tmp_path), home=str(tmp_path.parent))
        assert result.effect == "deny", (command, result.reasons)


def test_links_inside_the_workspace_stay_ordinary_edits(tmp_path: Path) -> None:
    for command in ("ln -s build/app app && echo x > app", "ln -s src s && echo x > s/a.py"):
        assert analyze(command, workspace=str(tmp_path), home="/nonexistent").effect == "notify"


@pytest.mark.slow  # runs real programs
@pytest.mark.skipif(
    subprocess.run(["sort", "--version"], capture_output=True, check=False).returncode != 0,
    reason="needs GNU sort",
)
def test_sort_compress_program_really_runs_and_asks(tmp_path: Path) -> None:
    helper = tmp_path / "x"
    helper.write_text("#!/bin/sh\ntouch marker\nexec cat\n")
    helper.chmod(0o755)
    (tmp_path / "big.txt").write_text("".join(f"{i}\n" for i in range(200000)))
    command = "sort -S 16K -T . --compress-prog=./x big.txt"
    assert analyze(command, workspace=str(tmp_path), home="/nonexistent").effect == "ask"
    subprocess.run(["bash", "-c", command + " > /dev/null"], cwd=tmp_path, check=False, timeout=60)
    assert (tmp_path / "marker").exists()  # the option really ran the program


@pytest.mark.parametrize(
    "command",
    [
        "PAGER='./x' git log",
        "GIT_PAGER=./x git log",
        "env PAGER=./x git log",
        "EDITOR=./x git commit",
        "LESSOPEN='|./x %s' less README.md",
        "LD_PRELOAD=./x.so ls",
        "PATH=.:$PATH git log",
    ],
)
def test_a_rule_for_the_command_does_not_cover_the_program_its_environment_names(
    tmp_path: Path, command: str
) -> None:
    """The rule names `git log`; the variable before it names what really runs."""
    allow = [
        "Bash(git log:*)",
        "Bash(git commit:*)",
        "Bash(less:*)",
        "Bash(ls:*)",
        "Bash(env:*)",
        "Bash",
    ]
    policy = Policy(Settings.from_rules(allow=allow), workspace=str(tmp_path), home=str(tmp_path))
    verdict = policy.evaluate(ToolCall("Bash", {"command": command}))
    assert verdict.effect == "ask", (command, verdict.reasons)
    assert verdict.suggested_rule is None  # approved once, never "always"


@pytest.mark.parametrize(
    ("command", "variant"),
    [
        ("sort --compress-program=./x data.txt", "sort --compress-program=./y data.txt"),
        ("rsync --delete -e ssh a/ b/", "rsync --delete -e ssh a/ c/"),
        ("git remote set-url origin https://a.example/x", "git remote set-url origin https://b/x"),
        ("git branch -u evil/main", "git branch -u other/main"),
        ("git commit --amend", "git commit --amend --reset-author"),
        ("less -k keys README.md", "less -k other README.md"),
        ("git rebase --edit-todo", "git rebase --edit-todo --x"),
    ],
)
def test_always_for_these_is_exact(tmp_path: Path, command: str, variant: str) -> None:
    part = next(
        p for p in analyze(command, workspace=str(tmp_path), home="/h").parts if p.effect == "ask"
    )
    rule = suggest_rule(part)
    assert not rule.endswith(":*)"), rule
    policy = Policy(Settings.from_rules(allow=[rule]), workspace=str(tmp_path), home=str(tmp_path))
    assert policy.evaluate(ToolCall("Bash", {"command": command})).effect == "allow"
    assert policy.evaluate(ToolCall("Bash", {"command": variant})).effect == "ask", variant


def test_no_always_for_arguments_read_from_another_command(tmp_path: Path) -> None:
    """`… | xargs rm -rf`: the text `rm -rf <stdin>` would match any future input."""
    policy = Policy(workspace=str(tmp_path), home=str(tmp_path))
    for command in ("cat list.txt | xargs rm -rf", "find . -name x | xargs -I{} rm {}"):
        verdict = policy.evaluate(ToolCall("Bash", {"command": command}))
        assert verdict.effect == "ask" and verdict.suggested_rule is None, command


@pytest.mark.parametrize(
    "command",
    [
        "git remote set-url origin https://evil.example/x",
        "git remote add evil https://evil.example/x",
        "git branch -u evil/main",
        "git commit --amend",
        "ln -s ../outside/target.txt p && echo pwned > p",
        "sort --compress-program=./x data.txt",
    ],
)
def test_accept_edits_does_not_take_these_for_file_edits(tmp_path: Path, command: str) -> None:
    """accept-edits allows ordinary edits inside the workspace; redirecting where pushes
    go, an editor-driven rewrite, a write through a link or a program named in an option
    is none of those."""
    (tmp_path / "ws").mkdir()  # inside the home directory, as `outside` is
    policy = Policy(workspace=str(tmp_path / "ws"), home=str(tmp_path)).with_mode("accept-edits")
    assert policy.evaluate(ToolCall("Bash", {"command": command})).effect == "ask", command
    control = policy.evaluate(ToolCall("Bash", {"command": "git commit --amend --no-edit"}))
    assert control.effect == "allow"  # a rewrite without an editor is still an edit
