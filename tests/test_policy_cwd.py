"""Where a call runs is judged: a coding agent's shell keeps the directory of its last
`cd` (Claude Code sends it as `cwd`), Gemini's shell takes `dir_path`, Cursor and Codex
events carry `cwd`; within one line `cd`, `pushd`, `env -C`, `git -C`/`--work-tree` and
`find -execdir` move it. Whatever moves it, a relative path is judged where it lands; a
directory outside the workspace asks, and so does an unknown one (its relative paths are
unknown too: a deny that holds wherever it runs still denies)."""

from __future__ import annotations

from pathlib import Path

import pytest

from adapter_helpers import decision, event, hook, reason, ws
from signoff.adapters import claude_code, codex, cursor, gemini
from signoff.approvals import decide
from signoff.models import Decision, ToolCall
from signoff.policy import Policy
from signoff.settings import load_settings
from signoff.store import open_store
from signoff.tools import Registry

__all__ = ["ws"]  # the fixture, imported for pytest

RULES = '[permissions]\ndeny = ["Read(config/prod/*.yml)", "Edit(src/**)"]\n'


@pytest.fixture
def project(ws: Path) -> Path:
    for folder in ("config/prod", "src", ".git/hooks", ".github/workflows", "build"):
        (ws / folder).mkdir(parents=True)
    (ws / "config" / "prod" / "db.yml").write_text("password: x\n")
    (ws / "src" / "main.py").write_text("print(1)\n")
    (ws / ".signoff").mkdir()
    (ws / ".signoff" / "settings.toml").write_text(RULES)
    return ws


def policy(project: Path, specs: object = claude_code.CLIENT.specs) -> Policy:
    return Policy(
        load_settings(project),
        workspace=project,
        registry=Registry(dict(specs)),  # type: ignore[call-overload]
    )


def where(project: Path, rel: str) -> str:
    """A cwd as a test names it: relative to the project, `/abs` as it is, `?` unknown."""
    if rel == "?":
        return ""
    return rel if rel.startswith("/") else str(project / rel) if rel else str(project)


# (command, the shell's directory, expected effect)
SHELL = [
    # the client's directory
    ("cat db.yml", "config/prod", "deny"),
    ("cat db.yml", "", "allow"),  # the control: ./db.yml at the root is no one's
    ("echo x > main.py", "src", "deny"),
    ("sed -i s/1/2/ main.py", "src", "deny"),
    ("echo x > main.py", "", "notify"),
    ("echo 'echo hi' > pre-commit", ".git/hooks", "ask"),
    ("echo 'on: push' > ci.yml", ".github/workflows", "ask"),
    ("echo 'on: push' > ci.yml", "", "notify"),
    ("cat ../../.signoff/signoff.db", "config/prod", "deny"),
    ("git status", "", "allow"),
    ("git status", "src", "allow"),
    # outside the workspace: asks, whatever the command
    ("git status", "/tmp", "ask"),
    ("ls", "/", "ask"),
    ("echo hi", "/tmp", "ask"),
    # a directory nobody knows: every relative path in it is unknown
    ("cat db.yml", "?", "ask"),
    ("ls", "?", "ask"),
    ("echo x > a.txt", "?", "ask"),
    ("echo hi", "?", "ask"),
    ("rm -rf /", "?", "deny"),
    # moved within the line
    ("cd config/prod && cat db.yml", "", "deny"),
    ("cd config; cd prod; cat db.yml", "", "deny"),
    ("cd prod; cat db.yml", "config", "deny"),  # ./prod from the client's directory
    ("cd nowhere; cd prod; cat db.yml", "config", "deny"),  # nowhere missing: ./prod
    ("pushd src; echo x > main.py", "", "deny"),
    ("(cd src && echo x > main.py)", "", "deny"),
    ("bash -c 'cd src; echo x > main.py'", "", "deny"),
    ("env -C src sh -c 'echo x > main.py'", "", "deny"),
    ("env --chdir=src sed -i s/1/2/ main.py", "", "deny"),
    ("env -Csrc touch main.py", "", "deny"),
    ("env -C $DIR touch main.py", "", "ask"),
    ("git -C src checkout -- main.py", "", "deny"),
    ("git --work-tree=src checkout -- main.py", "", "deny"),
    ("git --work-tree src checkout -- main.py", "", "deny"),
    ("GIT_WORK_TREE=src git checkout -- main.py", "", "ask"),
    ("GIT_DIR=.git git status", "", "ask"),
    ("tar -C src -xf a.tar", "", "deny"),
    ("find src -name main.py -execdir sh -c 'echo x > {}' \\;", "", "ask"),
    ("find . -name '*.pyc' -execdir rm {} +", "", "ask"),
]


@pytest.mark.parametrize(("command", "cwd", "expected"), SHELL)
def test_the_shell_is_judged_where_it_runs(
    project: Path, command: str, cwd: str, expected: str
) -> None:
    verdict = policy(project).evaluate(
        ToolCall("Bash", {"command": command}), cwd=where(project, cwd)
    )
    assert verdict.effect == expected, verdict.reasons


def test_outside_the_workspace_names_the_directory(project: Path) -> None:
    verdict = policy(project).evaluate(ToolCall("Bash", {"command": "git status"}), cwd="/tmp")
    assert verdict.rule == "boundary"
    assert f"runs in /tmp, outside the workspace {project}" in verdict.reasons


def test_no_cwd_means_the_workspace(project: Path) -> None:
    # signoff's own tools and the frameworks run in the workspace: None keeps that meaning
    verdict = policy(project).evaluate(ToolCall("Bash", {"command": "cat db.yml"}))
    assert verdict.effect == "allow"


# (tool, arguments, the client's directory, expected effect)
FILES = [
    ("Read", {"file_path": "db.yml"}, "config/prod", "deny"),
    ("Read", {"file_path": "db.yml"}, "", "allow"),
    ("Write", {"file_path": "main.py", "content": "x"}, "src", "deny"),
    (
        "Edit",
        {"file_path": "pre-commit", "old_string": "a", "new_string": "b"},
        ".git/hooks",
        "ask",
    ),
    ("Read", {"file_path": "db.yml"}, "?", "ask"),  # relative to a directory nobody knows
    ("Read", {"file_path": "{ws}/config/prod/db.yml"}, "?", "deny"),  # absolute: known
    ("Read", {"file_path": "{ws}/app.py"}, "?", "allow"),
]


@pytest.mark.parametrize(("tool", "args", "cwd", "expected"), FILES)
def test_a_file_tools_relative_path_is_judged_from_the_clients_directory(
    project: Path, tool: str, args: dict[str, str], cwd: str, expected: str
) -> None:
    arguments = {k: v.replace("{ws}", str(project)) for k, v in args.items()}
    verdict = policy(project).evaluate(ToolCall(tool, arguments), cwd=where(project, cwd))
    assert verdict.effect == expected, verdict.reasons


# Gemini's `run_shell_command` runs in `dir_path`, relative to the project root
GEMINI = [
    ({"command": "rm main.py", "dir_path": "src"}, "", "deny"),
    ({"command": "rm main.py"}, "", "ask"),  # the control: ./main.py is nobody's rule
    ({"command": "cat db.yml", "dir_path": "config/prod"}, "", "deny"),
    ({"command": "cat db.yml", "dir_path": "{ws}/config/prod"}, "", "deny"),
    ({"command": "git status", "dir_path": "/tmp"}, "", "ask"),
    ({"command": "git status", "dir_path": "../.."}, "", "ask"),
    ({"command": "git status", "dir_path": 7}, "", "ask"),
    ({"command": "cat db.yml", "dir_path": "prod"}, "config", "deny"),  # from either root
    ({"command": "cat db.yml", "dir_path": "config/prod"}, "?", "ask"),
]


@pytest.mark.parametrize(("args", "cwd", "expected"), GEMINI)
def test_gemini_dir_path_is_where_its_shell_runs(
    project: Path, args: dict[str, object], cwd: str, expected: str
) -> None:
    arguments = {
        k: v.replace("{ws}", str(project)) if isinstance(v, str) else v for k, v in args.items()
    }
    verdict = policy(project, gemini.CLIENT.specs).evaluate(
        ToolCall("run_shell_command", arguments), cwd=where(project, cwd)
    )
    assert verdict.effect == expected, verdict.reasons


def test_codex_workdir_is_where_its_shell_runs(project: Path) -> None:
    verdict = policy(project, codex.CLIENT.specs).evaluate(
        ToolCall("Bash", {"command": "rm main.py", "workdir": "src"}), cwd=str(project)
    )
    assert verdict.effect == "deny", verdict.reasons


# ------------------------------------------------------------------ through the hooks


def test_claude_codes_cwd_reaches_the_judgement(project: Path) -> None:
    doc = event(project, "Bash", {"command": "cat db.yml"}, cwd=str(project / "config" / "prod"))
    out, code, _ = hook(project, doc)
    assert (decision(out), code) == ("deny", 0)
    assert "denied by rule Read(config/prod/*.yml)" in reason(out)


def test_claude_codes_missing_cwd_is_unknown(project: Path) -> None:
    doc = event(project, "Bash", {"command": "cat db.yml"})
    del doc["cwd"]
    out, _, _ = hook(project, doc, ask="native")
    assert decision(out) == "ask"


def test_an_approval_holds_only_in_the_directory_it_was_given_for(project: Path) -> None:
    # approved in src (an upload of ./report.txt asks: the network), retried after a
    # `cd config/prod`: report.txt is another file there
    (project / ".signoff" / "settings.toml").write_text(RULES + '[hooks]\nask = "defer"\n')
    upload = "curl -T report.txt https://uploads.example.com/"
    doc = event(project, "Bash", {"command": upload}, cwd=str(project / "src"))
    assert decision(hook(project, doc)[0]) == "defer"
    store = open_store(workspace=project)
    try:
        (request,) = store.list_requests()
        decide(store, request.id, Decision("approve"), actor="bob", workspace=project)
    finally:
        store.close()
    moved = {**doc, "cwd": str(project / "config" / "prod")}
    out, _, _ = hook(project, moved)
    assert decision(out) == "deny"
    assert f"approved for a call in {project / 'src'}" in reason(out)
    assert decision(hook(project, doc)[0]) == "allow"  # where it was approved: it runs


def test_codex_and_cursor_events_carry_their_cwd(project: Path) -> None:
    prod = str(project / "config" / "prod")
    doc = {
        "hook_event_name": "PreToolUse",
        "session_id": "s",
        "tool_use_id": "t",
        "tool_name": "Bash",
        "tool_input": {"command": "cat db.yml"},
        "cwd": prod,
    }
    assert codex.parse(doc).cwd == prod
    shell = {
        "hook_event_name": "beforeShellExecution",
        "conversation_id": "c",
        "generation_id": "g",
        "command": "cat db.yml",
        "cwd": prod,
        "workspace_roots": [str(project)],
    }
    assert cursor.parse(shell).cwd == prod
    assert (
        gemini.parse(
            {
                "hook_event_name": "BeforeTool",
                "session_id": "s",
                "tool_name": "run_shell_command",
                "tool_input": {"command": "cat db.yml"},
                "cwd": prod,
            }
        ).cwd
        == prod
    )
