"""Issue 11, item 2, as verdict tables (`signoff check` level: `Policy.evaluate`).

Every place in `runs_later.RUNS_LATER` and every key family in `GIT_CONFIG_RUNS` is
tried through the declared file tools and through the shell routes; none may be allowed
or notified. Harmless neighbours (reading config, harmless keys, ordinary files) keep
their verdicts, so the list does not make everyday work ask.
"""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fast_loop import examples
from signoff.models import ToolCall
from signoff.policy import Policy
from signoff.runs_later import GIT_CONFIG_HARMLESS, GIT_CONFIG_RUNS, RUNS_LATER, runs_later
from signoff.settings import Settings

WS = "/home/dev/proj"
HOME = "/home/dev"


def _policy(mode: str = "default") -> Policy:
    return Policy(Settings(), workspace=WS, home=HOME, resolver=lambda p: p, mode=mode)  # type: ignore[arg-type]


def _places() -> list[str]:
    """Concrete paths for every pattern: at the root, nested, and a file inside."""
    out: list[str] = []
    for pattern, _ in RUNS_LATER:
        name = pattern.removeprefix("**/")
        out += [name, f"pkg/{name}", f"{name}/inner.sh"]
    return out


PLACES = _places()


def _effect(name: str, mode: str = "default", **arguments: object) -> str:
    return _policy(mode).evaluate(ToolCall(name, dict(arguments))).effect


@pytest.mark.parametrize("mode", ["default", "accept-edits"])
@pytest.mark.parametrize("place", PLACES)
def test_file_tools_ask_for_every_place(place: str, mode: str) -> None:
    for tool, extra in (
        ("write_file", {"content": "x"}),
        ("edit_file", {"old": "a", "new": "b"}),
        ("delete_file", {}),
        ("create_project", {"files": {"a": "b"}}),
    ):
        got = _effect(tool, mode, path=place, **extra)
        assert got in ("ask", "deny"), f"{tool} {place} in {mode}: {got}"


SHELL_WRITES = [
    "echo x > {p}",
    "echo x >> {p}",
    "printf x | tee {p}",
    "cp a.txt {p}",
    "mv a.txt {p}",
    "touch {p}",
    "chmod +x {p}",
    "rm -f {p}",
    "sed -i s/a/b/ {p}",
    "install a.txt {p}",
    "ln -s a.txt {p}",
    "dd if=a.txt of={p}",
    "truncate -s 0 {p}",
    "cp -t {p} a.txt",
    "mkdir -p {p}",
    "ln -s {p} link",
    "cp -l {p} copy",
]


@pytest.mark.parametrize("place", PLACES)
@pytest.mark.parametrize("form", SHELL_WRITES)
def test_shell_writes_ask_for_every_place(form: str, place: str) -> None:
    command = form.format(p=shlex.quote(place))
    got = _effect("execute_command", command=command)
    assert got in ("ask", "deny"), f"{command!r}: {got}"


@pytest.mark.parametrize(
    "place",
    [
        ".bashrc",
        ".zshrc",
        ".profile",
        ".gitconfig",
        ".config/git/config",
        ".bash_profile",
        ".zshenv",
    ],
)
def test_home_start_up_files(place: str) -> None:
    assert _effect("write_file", path=f"~/{place}", content="x") in ("ask", "deny")
    assert _effect("execute_command", command=f"echo x >> ~/{place}") in ("ask", "deny")


def _keys(patterns: list[str]) -> list[str]:
    return [p.replace("*", "x") for p in patterns]


RUNNING_KEYS = _keys([p for p, _ in GIT_CONFIG_RUNS])
HARMLESS_KEYS = _keys(list(GIT_CONFIG_HARMLESS))
CONFIG_WRITES = [
    "git config {k} v",
    "git config --local {k} v",
    "git config --global {k} v",
    "git config --system {k} v",
    "git config -f cfg {k} v",
    "git config --file=cfg {k} v",
    "git config --add {k} v",
    "git config --replace-all {k} v",
    "git config set {k} v",
    "git config set --append {k} v",
    "git -c {k}=v status",
    "git -c {k} status",
    "git --config-env={k}=HOME log",
    "git --config-env {k}=HOME log",
    "git -C sub config {k} v",
    "git config {K} v",
]


@pytest.mark.parametrize("key", RUNNING_KEYS)
@pytest.mark.parametrize("form", CONFIG_WRITES)
def test_git_config_keys_that_run_programs_ask(form: str, key: str) -> None:
    command = form.format(k=key, K=key.upper())
    assert _effect("execute_command", command=command) in ("ask", "deny"), command


@pytest.mark.parametrize("key", RUNNING_KEYS + HARMLESS_KEYS)
@pytest.mark.parametrize(
    "form",
    [
        "git config --get {k}",
        "git config get {k}",
        "git config --get-all {k}",
        "git config {k}",
        "git config --show-origin --get {k}",
    ],
)
def test_reading_any_key_is_allowed(form: str, key: str) -> None:
    assert _effect("execute_command", command=form.format(k=key)) == "allow"


@pytest.mark.parametrize("key", HARMLESS_KEYS)
def test_harmless_keys_stay_ordinary(key: str) -> None:
    assert _effect("execute_command", command=f"git config {key} v") == "notify"
    assert _effect("execute_command", command=f"git -c {key}=v log -1") == "allow"


@pytest.mark.parametrize("key", ["my.custom", "core.unknownnewthing", "x"])
def test_unknown_keys_ask(key: str) -> None:
    assert _effect("execute_command", command=f"git config {key} v") == "ask"


@pytest.mark.parametrize(
    "path",
    [
        "src/app.py",
        "README.md",
        "docs/hooks.md",
        "github/x.yml",
        "workflows/ci.yml",
        "scripts/run.sh",
        "config/HEAD.md",
        ".gitignore",
        "src/bashrc.py",
    ],
)
def test_ordinary_files_stay_notify(path: str) -> None:
    assert _effect("write_file", path=path, content="x") == "notify"
    assert _effect("execute_command", command=f"echo x > {path}") == "notify"


_NAMES = sorted(
    {p.removeprefix("**/").split("/")[0] for p, _ in RUNS_LATER}
    | {"src", "a", "docs", "hooks", "workflows", "lib"}
)


@settings(max_examples=examples(300), deadline=None)
@given(
    parts=st.lists(st.sampled_from(_NAMES), min_size=1, max_size=4),
    quote=st.sampled_from(["plain", "single", "double", "backslash", "dotslash"]),
    form=st.sampled_from(SHELL_WRITES),
)
def test_property_any_spelling_of_a_runs_later_path_asks(
    parts: list[str], quote: str, form: str
) -> None:
    rel = "/".join(parts)
    spelled = {
        "plain": rel,
        "single": f"'{rel}'",
        "double": f'"{rel}"',
        "backslash": rel.replace(".", "\\."),
        "dotslash": f"./{rel}",
    }[quote]
    got = _effect("execute_command", command=form.format(p=spelled))
    if runs_later(rel) is not None:
        assert got in ("ask", "deny"), (form, spelled, got)


def test_the_list_says_why_for_every_place(tmp_path: Path) -> None:
    for pattern, why in RUNS_LATER:
        assert pattern.startswith("**/") and why, pattern
        assert runs_later(pattern.removeprefix("**/")) is not None


# A small grammar of file operations: (template, which operand is written).
_OPS = [
    "cp a.txt {t}",
    "mv a.txt {t}",
    "tee {t} < a.txt",
    "cat a.txt > {t}",
    "echo x >> {t}",
    "sed -i s/a/b/ {t}",
    "ln -sf ../a.txt {t}",
    "install -m 755 a.txt {t}",
    "touch {t}",
    "chmod +x {t}",
    "dd if=a.txt of={t}",
    "rsync a.txt {t}",
    "git mv a.txt {t}",
    "cp -t {t} a.txt",
    "truncate -s 0 {t}",
    "printf x | tee -a {t}",
    "sort -o {t} a.txt",
]
_DIRS = ["", "src", ".git", "pkg/.github", "sub"]
_LEAVES = [
    "a.py",
    "hooks/pre-commit",
    "config",
    "workflows/ci.yml",
    ".envrc",
    "HEAD",
    ".gitattributes",
    "notes.md",
    ".husky/pre-commit",
    "Jenkinsfile",
]


@settings(max_examples=examples(400), deadline=None)
@given(
    steps=st.lists(
        st.tuples(st.sampled_from(_DIRS), st.sampled_from(_OPS), st.sampled_from(_LEAVES)),
        min_size=1,
        max_size=3,
    ),
    joiner=st.sampled_from([" && ", "; ", " || ", "\n"]),
    wrap=st.sampled_from(
        [
            "{c}",
            "bash -c {q}",
            "sh -c {q}",
            "env bash -c {q}",
            "( {c} )",
            "timeout 5 sh -c {q}",
            "eval {q}",
            "{{ {c}; }}",
        ]
    ),
)
def test_property_file_operations_never_plant_code_silently(
    steps: list[tuple[str, str, str]], joiner: str, wrap: str
) -> None:
    parts, planted = [], False
    for folder, op, leaf in steps:
        rel = f"{folder}/{leaf}" if folder else leaf
        planted = planted or runs_later(rel) is not None
        parts.append(
            f"cd {folder} && {op.format(t=leaf)}; cd -"
            if folder and leaf != "HEAD"
            else op.format(t=rel)
        )
    inner = joiner.join(parts)
    command = wrap.format(c=inner, q=shlex.quote(inner))
    got = _effect("execute_command", command=command)
    if planted:
        assert got in ("ask", "deny"), (command, got)


_CONFIG = """# a project's .git/config
[core]
\thooksPath = tools/hooks
\tfsmonitor = "sh scripts/fsmon.sh --quiet"
\teditor = code --wait
\tpager = less -R
[sequence]
\teditor = python ./seq.py
[include]
\tpath = ../extra.cfg
[includeIf "gitdir:~/work/"]
\tpath = ~/elsewhere.cfg
[alias]
\tx = !./run.sh
\tst = status
[diff "pdf"]
\ttextconv = bin/pdf2txt
[remote "origin"]
\turl = ./local/repo
[user]
\tname = Alice
"""


@pytest.mark.parametrize(
    ("rel", "planted"),
    [
        ("tools/hooks/pre-commit", True),
        ("scripts/fsmon.sh", True),
        ("seq.py", True),
        ("extra.cfg", True),
        ("run.sh", True),
        ("bin/pdf2txt", True),
        ("tools/other.sh", False),
        ("local/repo/x", False),
        ("code", False),
        ("less", False),
        ("scripts/other.sh", False),
        ("elsewhere.cfg", False),
    ],
)
def test_what_a_projects_config_makes_code(rel: str, planted: bool) -> None:
    from signoff.runs_later import configured_places, configured_runs_later

    places = configured_places(_CONFIG, "/w/.git", "/w")
    assert (configured_runs_later(rel, places) is not None) is planted


@pytest.mark.parametrize("place", PLACES)
@pytest.mark.parametrize(
    "form", ["echo x > {p}", "cp a.txt {p}", "sed -i s/a/b/ {p}", "ln -s {p} link"]
)
def test_accept_edits_does_not_wave_code_through(form: str, place: str) -> None:
    """accept-edits lets ordinary workspace edits run; planting code is not one."""
    command = form.format(p=shlex.quote(place))
    assert _effect("execute_command", "accept-edits", command=command) in ("ask", "deny")


@pytest.mark.parametrize(
    "command",
    [
        "cp a.txt .git/hooks/pre-commit",
        "git config core.fsmonitor x",
        "echo x > .envrc",
        "patch -p1 < missing.patch",
        "tar xf missing.tar",
        "ln -s .git g",
    ],
)
def test_the_analysis_marks_these_asks_as_boundaries(command: str) -> None:
    """What the policy needs to keep an allow rule from silencing them (see below)."""
    from signoff.shell import analyze

    parts = analyze(command, workspace=WS, home=HOME, resolver=lambda p: p).parts
    assert any(p.boundaries for p in parts), parts


@pytest.mark.parametrize(
    ("rule", "command"),
    [
        ("execute_command(cp:*)", "cp a.txt .git/hooks/pre-commit"),
        ("execute_command(git:*)", "git config core.fsmonitor x"),
        ("execute_command(echo x)", "echo x > .git/hooks/post-checkout"),
    ],
)
def test_an_allow_rule_does_not_silence_a_boundary(rule: str, command: str) -> None:
    policy = Policy(
        Settings.from_rules(allow=[rule]), workspace=WS, home=HOME, resolver=lambda p: p
    )
    got = policy.evaluate(ToolCall("execute_command", {"command": command})).effect
    assert got in ("ask", "deny"), (rule, command, got)


@pytest.mark.parametrize(
    "command",
    [
        "git config core.fsmonitor 'sh -c id'",
        "echo x > .git/hooks/pre-commit",
        "cp a.txt .github/workflows/ci.yml",
        "patch -p1 < missing.patch",
        "ln -s .git g",
    ],
)
def test_always_is_never_offered_for_planting_code(command: str) -> None:
    """A suggested rule names the command (`echo x`, `git config:*`), not what it plants,
    so approving it "always" would let the next hook in: only "once" is offered."""
    verdict = _policy().evaluate(ToolCall("execute_command", {"command": command}))
    assert verdict.effect == "ask" and verdict.suggested_rule is None, verdict
