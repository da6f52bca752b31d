"""What every read, list and search tool of every client can reach, with each argument
absent or present, judged as the shell's recursive reads are (issue 26, item 4).

A search (Claude Code's `Grep`, Gemini's `grep_search` and `read_many_files`) reads the
contents of the tree it walks: inside a denied folder or signoff's own state it is denied;
over a tree that holds one it asks (like `grep -r x .`), unless the tool provably skips
what the policy hides (signoff's own `search_code`). A listing (`Glob`, `LS`, `glob`,
`list_directory`) is judged by the folder it lists, as `ls DIR` is: the folder its path
and its pattern's leading folders name; wildcards below that list names only, as `find`
does. A path the tool needs but was not given asks: the client may read it under another
name (Gemini's older `absolute_path`, `paths`).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from signoff.adapters import claude_code, cursor, gemini
from signoff.adapters.core import Adapter, HookCall
from signoff.models import ToolCall
from signoff.policy import Policy
from signoff.settings import parse_settings
from signoff.tools import Registry

SETTINGS = '[permissions]\ndeny = ["Read(secrets/**)"]\n'


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_ed25519").write_text("KEY\n")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.delenv("SIGNOFF_DB", raising=False)
    root = tmp_path / "proj"
    for folder in ("src", "secrets", ".signoff", "docs"):
        (root / folder).mkdir(parents=True)
    (root / "src" / "a.py").write_text("S = 1\n")
    (root / "secrets" / "k").write_text("S = hunter2\n")
    (root / ".signoff" / "settings.toml").write_text(SETTINGS)
    (root / "README.md").write_text("S\n")
    (root / "lnk").symlink_to(".signoff")  # a link that is already there
    return Path(os.path.realpath(root))


def policy_for(
    ws: Path, specs: Any = None, *, deny: str = "Read(secrets/**)", allow: str | None = None
) -> Policy:
    text = f'[permissions]\ndeny = ["{deny}"]\n' + (f'allow = ["{allow}"]\n' if allow else "")
    settings = parse_settings(text, "settings.toml")
    registry = Registry(dict(specs)) if specs is not None else Registry()
    return Policy(settings, workspace=ws, registry=registry, home=os.environ["HOME"])


def expand(ws: Path, value: Any) -> Any:
    text = json.dumps(value).replace("{ws}", str(ws)).replace("{home}", os.environ["HOME"])
    return json.loads(text)


P = "S"  # a pattern
CLAUDE: list[tuple[str, dict[str, Any], str]] = [
    # Grep reads the contents of what it walks (ripgrep, hidden files included)
    ("Grep", {"pattern": P}, "ask"),  # the whole project: .signoff/ and secrets/ in it
    ("Grep", {"pattern": P, "path": "."}, "ask"),
    ("Grep", {"pattern": P, "path": "{ws}"}, "ask"),
    ("Grep", {"pattern": P, "path": "src"}, "allow"),
    ("Grep", {"pattern": P, "path": "src/a.py"}, "allow"),
    ("Grep", {"pattern": P, "path": "src", "glob": "*.py"}, "allow"),
    ("Grep", {"pattern": P, "path": "secrets"}, "deny"),
    ("Grep", {"pattern": P, "path": "secrets/k"}, "deny"),
    ("Grep", {"pattern": P, "path": ".signoff"}, "deny"),
    ("Grep", {"pattern": P, "path": "lnk"}, "deny"),
    ("Grep", {"pattern": P, "glob": ".signoff/**"}, "deny"),
    ("Grep", {"pattern": P, "glob": "lnk/**"}, "deny"),
    ("Grep", {"pattern": P, "glob": ".s*/*"}, "deny"),
    ("Grep", {"pattern": P, "glob": "secrets/*"}, "deny"),
    ("Grep", {"pattern": P, "glob": "*.py"}, "ask"),  # a name filter: still the whole tree
    ("Grep", {"pattern": P, "path": "src", "glob": ".env"}, "ask"),  # secret files by name
    ("Grep", {"pattern": P, "path": "src", "glob": "*.pem"}, "ask"),
    ("Grep", {"pattern": P, "path": "{home}"}, "ask"),  # outside the workspace
    ("Grep", {"pattern": P, "path": "~/.ssh"}, "ask"),
    # Glob lists names: judged by the folder it lists
    ("Glob", {"pattern": ".signoff/*"}, "deny"),
    ("Glob", {"pattern": ".signoff/**"}, "deny"),
    ("Glob", {"pattern": ".s*/*"}, "deny"),
    ("Glob", {"pattern": "{.signoff,src}/*"}, "deny"),
    ("Glob", {"pattern": "@(.signoff|src)/*"}, "deny"),
    ("Glob", {"pattern": "(.signoff)/*"}, "deny"),
    ("Glob", {"pattern": "[.]signoff/*"}, "deny"),
    ("Glob", {"pattern": "src/../.signoff/*"}, "deny"),
    ("Glob", {"pattern": "{ws}/.signoff/*"}, "deny"),
    ("Glob", {"pattern": "lnk/*"}, "deny"),
    ("Glob", {"pattern": "*", "path": "lnk"}, "deny"),  # an absolute pattern sets the folder
    ("Glob", {"pattern": "*", "path": ".signoff"}, "deny"),
    ("Glob", {"pattern": "secrets/*"}, "deny"),
    ("Glob", {"pattern": "secrets/**/*.txt"}, "deny"),
    ("Glob", {"pattern": "*", "path": "secrets"}, "deny"),
    ("Glob", {"pattern": "/etc/*"}, "ask"),  # outside the workspace
    ("Glob", {"pattern": "~/.ssh/*"}, "ask"),
    ("Glob", {"pattern": "*", "path": "{home}"}, "ask"),
    ("Glob", {"pattern": "**/*.py"}, "allow"),  # names at any depth, as `find . -name` lists
    ("Glob", {"pattern": "*.py"}, "allow"),
    ("Glob", {"pattern": "src/**/*.py"}, "allow"),
    ("Glob", {"pattern": "*.md", "path": "docs"}, "allow"),
    ("LS", {"path": "{ws}"}, "allow"),
    ("LS", {"path": "{ws}/src"}, "allow"),
    ("LS", {"path": "{ws}/.signoff"}, "deny"),
    ("LS", {"path": "{ws}/secrets"}, "deny"),
    ("LS", {"path": "{home}"}, "ask"),
    ("Read", {"file_path": "{ws}/src/a.py"}, "allow"),
    ("Read", {"file_path": "{ws}/secrets/k"}, "deny"),
    ("Read", {"file_path": "{ws}/.signoff/settings.toml"}, "deny"),
    ("Read", {}, "ask"),  # no path: nothing to judge, never the workspace root
    ("Read", {"path": "{ws}/secrets/k"}, "ask"),
]

GEMINI: list[tuple[str, dict[str, Any], str]] = [
    ("grep_search", {"pattern": P}, "ask"),
    ("grep_search", {"pattern": P, "dir_path": "."}, "ask"),
    ("grep_search", {"pattern": P, "dir_path": "src"}, "allow"),
    ("grep_search", {"pattern": P, "dir_path": "src", "include": "*.py"}, "allow"),
    ("grep_search", {"pattern": P, "dir_path": "secrets"}, "deny"),
    ("grep_search", {"pattern": P, "dir_path": ".signoff"}, "deny"),
    ("grep_search", {"pattern": P, "include": ".signoff/*"}, "deny"),
    ("grep_search", {"pattern": P, "include": "secrets/**"}, "deny"),
    ("grep_search", {"pattern": P, "dir_path": "{home}"}, "ask"),
    # the tool's name before grep_search, with its `path`
    ("search_file_content", {"pattern": P}, "ask"),
    ("search_file_content", {"pattern": P, "path": "src"}, "allow"),
    ("search_file_content", {"pattern": P, "path": ".signoff"}, "deny"),
    ("glob", {"pattern": ".signoff/*"}, "deny"),
    ("glob", {"pattern": "secrets/*"}, "deny"),
    ("glob", {"pattern": "*", "dir_path": ".signoff"}, "deny"),
    ("glob", {"pattern": "**/*.py"}, "allow"),
    ("glob", {"pattern": "*.py", "dir_path": "src"}, "allow"),
    ("glob", {"pattern": "*", "dir_path": "{home}"}, "ask"),
    ("list_directory", {"dir_path": "."}, "allow"),
    ("list_directory", {"dir_path": "src"}, "allow"),
    ("list_directory", {"dir_path": ".signoff"}, "deny"),
    ("list_directory", {"dir_path": "secrets"}, "deny"),
    ("list_directory", {}, "ask"),
    ("list_directory", {"path": ".signoff"}, "ask"),  # an older argument name
    # read_many_files reads the contents of every file its globs match
    ("read_many_files", {"include": ["src/**/*.py"]}, "allow"),
    ("read_many_files", {"include": ["*.md"]}, "allow"),
    ("read_many_files", {"include": ["README.md", "src/"]}, "allow"),
    ("read_many_files", {"include": ["**/*"]}, "ask"),
    ("read_many_files", {"include": ["**/*.py"]}, "ask"),
    ("read_many_files", {"include": ["."]}, "ask"),
    ("read_many_files", {"include": [".signoff/settings.toml"]}, "deny"),
    ("read_many_files", {"include": [".signoff/"]}, "deny"),
    ("read_many_files", {"include": [".s*/*"]}, "deny"),
    ("read_many_files", {"include": ["lnk/settings.toml"]}, "deny"),
    ("read_many_files", {"include": ["secrets/"]}, "deny"),
    ("read_many_files", {"include": ["src/*.py", "secrets/k"]}, "deny"),
    ("read_many_files", {"paths": [".signoff/settings.toml"]}, "deny"),  # older name
    ("read_many_files", {"include": ["src/**"], "paths": ["secrets"]}, "deny"),
    ("read_many_files", {}, "ask"),
    ("read_many_files", {"include": "secrets/k"}, "deny"),  # a string is read as one glob
    ("read_many_files", {"include": [7]}, "ask"),  # not a glob: nothing to judge
    ("read_file", {"file_path": "src/a.py"}, "allow"),
    ("read_file", {"file_path": "secrets/k"}, "deny"),
    ("read_file", {"absolute_path": "{ws}/.signoff/settings.toml"}, "ask"),  # older name
    ("read_file", {}, "ask"),
]

CURSOR: list[tuple[str, dict[str, Any], str]] = [
    ("Read", {"file_path": "{ws}/src/a.py"}, "allow"),
    ("Read", {"file_path": "{ws}/secrets/k"}, "deny"),
    ("Read", {"file_path": "{ws}/.signoff/settings.toml"}, "deny"),
]

# signoff's own tools: search_code skips what the policy hides, so a search of the whole
# workspace reads none of it (tests/attacks/test_attack_protected_state.py runs it)
BUILTIN: list[tuple[str, dict[str, Any], str]] = [
    ("search_code", {"pattern": P}, "allow"),
    ("search_code", {"pattern": P, "path": "."}, "allow"),
    ("search_code", {"pattern": P, "path": "secrets"}, "deny"),
    ("search_code", {"pattern": P, "path": ".signoff"}, "deny"),
    ("list_dir", {}, "allow"),
    ("list_dir", {"path": ".signoff"}, "deny"),
    ("list_dir", {"path": "secrets"}, "deny"),
    ("read_file", {"path": "src/a.py"}, "allow"),
    ("read_file", {}, "ask"),
    # the coding agents' names in the default registry are their tools, which skip nothing
    ("Grep", {"pattern": P}, "ask"),
    ("Glob", {"pattern": ".signoff/*"}, "deny"),
    ("LS", {"path": ".signoff"}, "deny"),
]

TABLE = [
    *(("claude-code", *row) for row in CLAUDE),
    *(("gemini", *row) for row in GEMINI),
    *(("cursor", *row) for row in CURSOR),
    *(("builtin", *row) for row in BUILTIN),
]
CLIENTS = {"claude-code": claude_code.CLIENT, "gemini": gemini.CLIENT, "cursor": cursor.CLIENT}


@pytest.mark.parametrize(
    ("client", "tool", "args", "expected"),
    TABLE,
    ids=[f"{c}-{t}-{json.dumps(a, sort_keys=True)}" for c, t, a, _ in TABLE],
)
def test_what_each_tool_can_reach_is_judged(
    ws: Path, client: str, tool: str, args: dict[str, Any], expected: str
) -> None:
    specs = CLIENTS[client].specs if client in CLIENTS else None
    verdict = policy_for(ws, specs).evaluate(ToolCall(tool, expand(ws, args)))
    assert verdict.effect == expected, verdict


def test_every_read_list_and_search_tool_of_every_client_is_in_the_table() -> None:
    """A new reading tool in a client's declarations must be added above."""
    tabled = {(c, t) for c, t, _, _ in TABLE}
    for name, client in CLIENTS.items():
        for tool, spec in client.specs.items():
            if spec.kind == "file_read":
                assert (name, tool) in tabled, f"{name} {tool} is not in the table"


def test_a_search_that_holds_signoffs_state_asks_a_person_even_in_auto_mode(ws: Path) -> None:
    policy = policy_for(ws, claude_code.CLIENT.specs).with_mode("auto")
    verdict = policy.evaluate(ToolCall("Grep", {"pattern": P}))
    assert verdict.effect == "ask" and verdict.rule == "protected", verdict
    assert ".signoff" in verdict.reason and verdict.suggested_rule is None


def test_a_search_over_a_denied_folder_says_which_rule(ws: Path) -> None:
    (ws / "src" / "keys").mkdir()
    verdict = policy_for(ws, claude_code.CLIENT.specs, deny="Read(src/keys/**)").evaluate(
        ToolCall("Grep", {"pattern": P, "path": "src"})
    )
    assert verdict.effect == "ask" and verdict.rule == "Read(src/keys/**)", verdict
    assert verdict.suggested_rule is None  # no allow rule may lift it


def test_an_allow_rule_does_not_lift_a_search_over_a_denied_folder(ws: Path) -> None:
    policy = policy_for(ws, claude_code.CLIENT.specs, deny="Read(src/keys/**)", allow="Grep")
    assert policy.evaluate(ToolCall("Grep", {"pattern": P, "path": "src"})).effect == "ask"
    assert policy.evaluate(ToolCall("Grep", {"pattern": P, "path": "docs"})).effect == "allow"
    assert policy.evaluate(ToolCall("Grep", {"pattern": P, "path": "src/keys"})).effect == "deny"


def test_the_hook_answers_the_search_of_the_whole_project(ws: Path) -> None:
    """Through Claude Code's hook, as the client sends it: ask, with the reason."""
    doc = {
        "session_id": "s",
        "tool_use_id": "t1",
        "cwd": str(ws),
        "hook_event_name": "PreToolUse",
        "tool_name": "Grep",
        "tool_input": {"pattern": "hunter2"},
    }
    out, code, _ = claude_code.answer(doc, workspace=str(ws), env={})
    assert code == 0 and out is not None
    answer = out["hookSpecificOutput"]
    assert answer["permissionDecision"] == "ask", answer
    assert ".signoff" in answer["permissionDecisionReason"]
    listing = {"tool_name": "Glob", "tool_input": {"pattern": ".signoff/*"}}
    glob = {**doc, "tool_use_id": "t2", **listing}
    out, code, _ = claude_code.answer(glob, workspace=str(ws), env={})
    assert out is not None and out["hookSpecificOutput"]["permissionDecision"] == "deny"


def test_gemini_hook_judges_read_many_files_globs(ws: Path) -> None:
    adapter = Adapter(gemini.CLIENT, ws)
    try:
        call = HookCall("gemini", "pre", "g", "t:1", "read_many_files", {"include": [".s*/*"]})
        assert adapter.judge(call).effect == "deny"
    finally:
        adapter.close()


# ------------------------------------------------------------------ a property

_PARTS = (
    ".signoff",
    "secrets",
    "src",
    "docs",
    "k",
    "a.py",
    "settings.toml",
    "*",
    "**",
    "*.py",
    ".s*",
    "?signoff",
    "[.]signoff",
    "sec*",
    "*et*",
    "..",
    ".",
)


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A project with signoff's state, a denied folder and ordinary files (no links)."""
    root = Path(os.path.realpath(tmp_path_factory.mktemp("reach") / "proj"))
    for folder in ("src/deep", "secrets/inner", ".signoff/hooks", "docs"):
        (root / folder).mkdir(parents=True)
    for name in ("src/a.py", "src/deep/k", "secrets/k", "secrets/inner/a.py", "docs/k"):
        (root / name).write_text("S\n")
    for name in (".signoff/settings.toml", ".signoff/hooks/a.py", ".signoff/k"):
        (root / name).write_text("S\n")
    return root


def _files_read(root: Path, pattern: str) -> set[str]:
    """What a glob reads, by Python's own glob (hidden names, `**`): each file it matches
    and every file under each folder it matches."""
    import glob as globbing

    found: set[str] = set()
    for match in globbing.glob(pattern, root_dir=root, recursive=True, include_hidden=True):
        full = os.path.realpath(os.path.join(root, match))
        found.add(full)
        for folder, _, files in os.walk(full):
            found.update(os.path.join(folder, f) for f in files)
    return found


def _off_limits(root: Path, path: str) -> bool:
    inside = path == str(root) or path.startswith(f"{root}/")
    return not inside or any(
        path == str(root / name) or path.startswith(f"{root / name}/")
        for name in (".signoff", "secrets")
    )


from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from fast_loop import examples  # noqa: E402

globs = st.lists(st.sampled_from(_PARTS), min_size=1, max_size=4).map("/".join)


@settings(max_examples=examples(400), deadline=None)
@given(pattern=globs)
def test_a_glob_that_reads_a_denied_or_protected_file_never_runs_unasked(
    tree: Path, pattern: str
) -> None:
    """Gemini's read_many_files (and Claude Code's Grep, whose path is no glob, with a
    plain path): whenever the files they would read, as Python's glob reads the pattern,
    include one in `.signoff/`, in the denied `secrets/` or outside the project, the
    verdict is not allow."""
    specs = {**gemini.CLIENT.specs, **claude_code.CLIENT.specs}
    policy = policy_for(tree, specs)
    reached = _files_read(tree, pattern)
    if not any(_off_limits(tree, path) for path in reached):
        return
    many = policy.evaluate(ToolCall("read_many_files", {"include": [pattern]}))
    assert many.effect != "allow", (pattern, sorted(reached), many)
    if not any(c in pattern for c in "*?["):
        grep = policy.evaluate(ToolCall("Grep", {"pattern": P, "path": pattern}))
        assert grep.effect != "allow", (pattern, grep)
