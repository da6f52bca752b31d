"""Start-up stays lean: what `import signoff` and `signoff check` load in a fresh process.

A coding-agent hook starts one process per tool call; bench/startup.py times it. These
tests hold the structure that makes it fast (which modules are NOT imported), so a stray
top-level import fails here rather than only in a benchmark.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import signoff
from signoff.tools import BUILTIN_SPECS

SRC = str(Path(__file__).resolve().parents[1] / "src")

# never needed to judge a call: each is imported where it is used
HEAVY = (
    "pydantic",
    "rich",
    "tomlkit",
    "sqlite3",
    "psycopg",
    "psycopg_pool",
    "httpx",
    "signoff.store",
    "signoff.gate",
    "signoff.web",
    "signoff.cli.chat",
    "signoff.cli.demo",
    "signoff.cli.runs",
    "signoff.cli.audit",
    "signoff.cli.serve",
    "signoff.cli.keys",
)

# the judges of program families other than git's, which `git status` never meets
OTHER_JUDGES = (
    "signoff.shell.judges.archives",
    "signoff.shell.judges.databases",
    "signoff.shell.judges.files",
    "signoff.shell.judges.network",
    "signoff.shell.judges.packages",
    "signoff.shell.judges.queries",
    "signoff.shell.judges.runners",
    "signoff.shell.judges.sql",
    "signoff.shell.judges.system",
    "signoff.shell.judges.tools",
    "signoff.shell.judges.transfer",
)


def _modules_after(code: str, cwd: Path) -> tuple[set[str], str]:
    """Run `code` in a fresh interpreter; the modules it loaded, and what it printed."""
    env = {**os.environ, "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", "")}
    script = code + "\nimport json, sys\nsys.stderr.write(json.dumps(sorted(sys.modules)))\n"
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    return set(json.loads(done.stderr.splitlines()[-1])), done.stdout


def _loaded(modules: set[str], name: str) -> bool:
    return any(m == name or m.startswith(name + ".") for m in modules)


def test_import_signoff_loads_nothing_of_the_package(tmp_path: Path) -> None:
    modules, _ = _modules_after("import signoff", tmp_path)
    assert sorted(m for m in modules if m.startswith("signoff")) == ["signoff"]
    assert not [name for name in ("pydantic", "rich", "typing") if _loaded(modules, name)]


def test_check_path_loads_only_what_judging_needs(tmp_path: Path) -> None:
    code = (
        "from signoff.cli import main\n"
        "main(['check', '--shell', 'git status', '--json', '--no-user-settings'])"
    )
    modules, out = _modules_after(code, tmp_path)
    assert json.loads(out)["verdict"] == "allow"
    assert "signoff.shell" in modules and "signoff.policy" in modules  # it did judge
    assert "signoff.shell.judges.git" in modules
    assert [name for name in HEAVY + OTHER_JUDGES if _loaded(modules, name)] == []
    # nor what only digests, inspects packages' data, runs threads or reads shell rules
    lazy = ("hashlib", "threading", "importlib.resources", "signoff.shell.normalize")
    assert [name for name in lazy if name in modules] == []


def test_a_family_judge_loads_with_its_first_program(tmp_path: Path) -> None:
    code = (
        "from signoff.cli import main\n"
        "main(['check', '--shell', 'psql -l; apt-get purge libc6', '--json', "
        "'--no-user-settings'])"
    )
    modules, out = _modules_after(code, tmp_path)
    assert json.loads(out)["verdict"] == "deny"  # apt purge libc6: judged by system's judge
    for judge in ("queries", "databases", "system", "packages"):
        assert f"signoff.shell.judges.{judge}" in modules
    assert "signoff.shell.judges.git" not in modules


def test_the_judges_index_and_the_judges_agree() -> None:
    """`programs` asks `judge_local` and `judge_system` only about the programs the index
    names: a program a judge knows and the index does not would go unjudged by it."""
    from signoff.shell.judges import index, queries, system

    assert index.missing_from_index() == {}
    assert queries.local_programs() == index.LOCAL_QUERIES  # and no name that none judges
    assert frozenset(system.JUDGES) == index.SYSTEM_PROGRAMS == system.SYSTEM_PROGRAMS


def test_every_program_the_index_names_reaches_its_judge(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The dispatch imports each judge on first use and hands it every program the index
    names (recorded here in place of the judges, which are tested with the corpus)."""
    from signoff.models import ToolCall
    from signoff.policy import Policy
    from signoff.settings import Settings
    from signoff.shell.judges import index, queries, system

    seen: dict[str, set[str]] = {"local": set(), "system": set()}

    def local(base: str, *_: object) -> bool:
        seen["local"].add(base)
        return False

    def judged_system(base: str, *_: object) -> list[object]:
        seen["system"].add(base)
        return []

    monkeypatch.setattr(queries, "judge_local", local)
    monkeypatch.setattr(system, "judge_system", judged_system)
    policy = Policy(Settings(), workspace=str(tmp_path))
    for name in sorted(index.LOCAL_QUERIES | index.SYSTEM_PROGRAMS | {"git", "ls"}):
        policy.evaluate(ToolCall("execute_command", {"command": f"{name} x"}))
    assert seen["local"] == set(index.LOCAL_QUERIES)
    assert seen["system"] == set(index.SYSTEM_PROGRAMS)
    assert not {"git", "ls"} & (seen["local"] | seen["system"])


def test_every_lazy_pattern_compiles() -> None:
    """Regexes compile on first use (`signoff.lazyre`); a typo must still fail here."""
    import importlib
    import pkgutil

    from signoff import lazyre

    package = importlib.import_module("signoff.shell")
    for module in pkgutil.walk_packages(package.__path__, "signoff.shell."):
        importlib.import_module(module.name)
    for name in ("rules", "settings", "policy", "runs_later", "protected", "normalize"):
        importlib.import_module(f"signoff.{name}")
    assert lazyre.compile_all() > 80


def test_explained_check_is_plain_text_without_rich(tmp_path: Path) -> None:
    code = (
        "from signoff.cli import main\n"
        "main(['check', '--shell', 'ls -la; rm -rf build', '--no-user-settings'])"
    )
    modules, out = _modules_after(code, tmp_path)
    assert [name for name in HEAVY if _loaded(modules, name)] == []
    lines = out.splitlines()
    assert lines[0].split() == ["ASK", "execute_command", "risk", "high", "class", "destructive"]
    # one row per part, columns aligned under the header, no colour off a terminal
    assert lines[1].split() == ["command", "class", "effect", "why"]
    assert lines[2].split()[:4] == ["ls", "-la", "read_only", "allow"]
    assert lines[3].startswith("rm -rf build") and "destructive  ask" in lines[3]
    assert {line.index("class") for line in lines[1:2]} == {lines[2].index("read_only")}
    assert "\x1b" not in out


def test_explained_check_colours_a_terminal_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import pty

    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm")
    from signoff.cli.app import _painter

    primary, secondary = pty.openpty()
    try:
        with open(secondary, "w", closefd=False) as tty:
            assert _painter(tty)("ASK", "yellow") == "\x1b[33mASK\x1b[0m"
        monkeypatch.setenv("NO_COLOR", "1")  # https://no-color.org
        with open(secondary, "w", closefd=False) as tty:
            assert _painter(tty)("ASK", "yellow") == "ASK"
    finally:
        os.close(primary)
        os.close(secondary)
    with open(tmp_path / "out.txt", "w") as file:
        assert _painter(file)("ASK", "yellow") == "ASK"


def test_explained_untrusted_text_is_escaped(tmp_path: Path) -> None:
    """A model-written command cannot drive the terminal or break the table's rows."""
    import io

    from signoff.cli.app import explain
    from signoff.models import ToolCall
    from signoff.policy import Policy
    from signoff.settings import Settings

    policy = Policy(Settings(), workspace=str(tmp_path))
    call = ToolCall("execute_command", {"command": "echo '\x1b[2Jhi'; printf 'a\\nb'"})
    out = io.StringIO()
    explain(call, policy.evaluate(call), policy, out=out)
    assert "\x1b" not in out.getvalue() and "\\x1b[2J" in out.getvalue()


@pytest.mark.parametrize("name", signoff.__all__)
def test_every_public_name_is_importable_and_the_defining_object(name: str) -> None:
    value = getattr(signoff, name)
    if name != "__version__":
        module = sys.modules[f"signoff{signoff._PUBLIC[name]}"]
        assert value is getattr(module, name)
    assert name in dir(signoff)


def test_unknown_attribute_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'Gatee'"):
        signoff.Gatee  # noqa: B018
    assert not hasattr(signoff, "NoSuchName")


def test_exports_match_all() -> None:
    assert set(signoff._PUBLIC) | {"__version__"} == set(signoff.__all__)


@pytest.mark.parametrize("name", sorted(BUILTIN_SPECS))
def test_builtin_schema_is_pydantics(name: str) -> None:
    """The built-ins' schemas are written out without pydantic; they must stay equal to
    what pydantic derives from the same fields (key order included: it is shown)."""
    spec = BUILTIN_SPECS[name]
    assert spec.lazy_validator is not None
    derived = spec.lazy_validator().model_json_schema()
    assert spec.schema == derived
    assert json.dumps(spec.schema) == json.dumps(derived)


def test_builtin_validator_is_made_on_first_use_and_refuses_bad_arguments() -> None:
    from signoff.exceptions import InvalidInput
    from signoff.tools import Registry

    spec = Registry().get("send_email")
    assert spec.validate({"to": "a@example.com", "subject": "s", "body": "b"}) == {
        "to": "a@example.com",
        "subject": "s",
        "body": "b",
    }
    assert spec.validator is not None  # kept once made
    with pytest.raises(InvalidInput, match="bcc"):
        spec.validate({"to": "a@example.com", "subject": "s", "body": "b", "bcc": ["x"]})
    alias = Registry().get("Bash")  # other argument names: no validator at all
    assert alias.lazy_validator is None and alias.validator is None


def test_check_help_and_full_help(capsys: pytest.CaptureFixture[str]) -> None:
    from signoff.cli import main

    with pytest.raises(SystemExit):
        main(["check", "--help"])
    assert "--shell CMD" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["--help"])
    listed = capsys.readouterr().out
    assert all(command in listed for command in ("check", "inbox", "serve", "audit", "demo"))


def test_sensitive_paths_are_worked_out_only_when_a_path_is_judged(tmp_path: Path) -> None:
    """Policy defers compiling its ~80 sensitive-path patterns; a call that writes a path
    still meets every one of them."""
    from signoff.models import ToolCall
    from signoff.policy import LazyRules, Policy
    from signoff.settings import Settings

    policy = Policy(Settings(), workspace=str(tmp_path))
    assert isinstance(policy._sensitive, LazyRules)
    assert policy.evaluate(ToolCall("Bash", {"command": "git status"})).effect == "allow"
    assert policy._sensitive._rules is None  # nothing was compiled for it
    verdict = policy.evaluate(
        ToolCall("write_file", {"path": ".github/workflows/ci.yml", "content": "x"})
    )
    assert verdict.effect == "ask" and policy._sensitive._rules is not None
    eager = [r.specifier for r in policy._sensitive]
    assert len(eager) > 50 and len(policy._sensitive) == len(eager)


@pytest.mark.parametrize(
    "argv",
    [
        ["check", "--shell", "git status", "--json"],
        ["check", "--json", "--shell=git status"],
        ["check", "--shell="],
        ["check", "--tool", "write_file", "--args", '{"path": "a"}', "--mode", "plan"],
        ["check", "--shell-file", "cmds.jsonl", "--workspace=/tmp", "--no-user-settings"],
        ["check", "--mode=auto", "--shell", "ls; rm -rf x", "--workspace", ".."],
        ["check"],
    ],
)
def test_plain_check_reads_as_argparse_does(argv: list[str]) -> None:
    from signoff.cli.app import _plain_check, build_parser

    plain = _plain_check(argv)
    assert plain is not None
    assert vars(plain) == vars(build_parser().parse_args(argv))


@pytest.mark.parametrize(
    "argv",
    [
        ["check", "--sh", "ls"],  # an abbreviation: argparse completes it
        ["check", "-h"],
        ["check", "--shell", "-x"],  # argparse refuses it
        ["check", "--shell-file", "-"],  # argparse takes "-" as a value
        ["check", "--mode", "yolo"],
        ["check", "--mode="],
        ["check", "--json=yes"],
        ["check", "--json", "--json"],
        ["check", "--shell", "ls", "--shell", "rm -rf x"],
        ["check", "--shell"],
        ["check", "ls"],
        ["check", "--", "--shell", "ls"],
        ["--version"],
        ["inbox"],
        [],
    ],
)
def test_plain_check_leaves_anything_else_to_argparse(argv: list[str]) -> None:
    from signoff.cli.app import _plain_check

    assert _plain_check(argv) is None


def test_check_without_argparse(tmp_path: Path) -> None:
    code = (
        "from signoff.cli import main\n"
        "main(['check', '--shell', 'git status', '--json', '--no-user-settings'])"
    )
    modules, out = _modules_after(code, tmp_path)
    assert json.loads(out)["verdict"] == "allow"
    assert [name for name in ("shutil", "locale") if name in modules] == []
