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
        "main(['check', '--shell', 'ls -la; rm -rf ../old', '--no-user-settings'])"
    )
    modules, out = _modules_after(code, tmp_path)
    assert [name for name in HEAVY if _loaded(modules, name)] == []
    lines = out.splitlines()
    assert lines[0].split() == ["ASK", "execute_command", "risk", "high", "class", "destructive"]
    # one row per part, columns aligned under the header, no colour off a terminal
    assert lines[1].split() == ["command", "class", "effect", "why"]
    assert lines[2].split()[:4] == ["ls", "-la", "read_only", "allow"]
    assert lines[3].startswith("rm -rf ../old") and "destructive  ask" in lines[3]
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


# ------------------------------------------------------------------ the coding-agent hook

# never needed by a hook that judges a call and records the verdict in a SQLite store:
# the other commands' parser, logging (nothing configured it), threads (no notification
# to send), uuid (and platform), tempfile (and shutil), what only a run or a preview needs;
# dataclasses and inspect (signoff.records makes its classes), OpenSSL (signoff.digests),
# typing (signoff.hints; tree-sitter's compiled module is loaded without its package),
# the sqlite3 package's date adapters (with datetime: the store uses _sqlite3 itself),
# pathlib with urllib.parse and ipaddress (signoff.plainpath; URLs parsed where judged)
HOOK_NEVER = (
    "shlex",  # imported by the rule or judge that splits words
    "pathlib",
    "urllib",
    "ipaddress",
    "typing",
    "sqlite3",
    "datetime",
    "zlib",
    "dataclasses",
    "inspect",
    "ast",
    "tokenize",
    "hashlib",
    "hmac",
    "_hashlib",
    "argparse",
    "gettext",
    "locale",
    "shutil",
    "logging",
    "threading",
    "platform",
    "uuid",
    "tempfile",
    "secrets",
    "random",
    "difflib",
    "signoff.cli.app",
    "signoff.run_state",
    "signoff.runs",
    "signoff.store.postgres",
    "signoff.store.memory",
    "signoff.notify",
    "signoff.workspace",
)

HOOK_RUN = """
import io, sys
sys.stdin = io.TextIOWrapper(io.BytesIO(sys.argv[1].encode()))
from signoff.cli import main
code = main(["hook", "claude-code"])
assert code == 0, code
"""


def _hook_event(ws: Path, tool: str, args: dict[str, object], n: int) -> str:
    return json.dumps(
        {
            "session_id": "startup",
            "tool_use_id": f"toolu_{n}",
            "cwd": str(ws),
            "permission_mode": "default",
            "hook_event_name": "PreToolUse",
            "tool_name": tool,
            "tool_input": args,
        }
    )


def _hook_modules(ws: Path, doc: str, env: dict[str, str]) -> tuple[set[str], str]:
    script = HOOK_RUN + "\nimport json\nsys.stderr.write(json.dumps(sorted(sys.modules)))\n"
    done = subprocess.run(
        [sys.executable, "-c", script, doc],
        cwd=ws,
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    return set(json.loads(done.stderr.splitlines()[-1])), done.stdout


@pytest.mark.parametrize(
    ("tool", "args", "answer"),
    [
        ("Bash", {"command": "git status"}, "allow"),
        ("Read", {"file_path": "README.md"}, "allow"),
        ("Bash", {"command": "rm -rf build /"}, "deny"),
        ("Bash", {"command": "rm -rf ../old"}, "ask"),  # outside: nothing runs contained
    ],
)
def test_a_hook_process_loads_only_what_it_judges_and_records_with(
    tmp_path: Path, tool: str, args: dict[str, object], answer: str
) -> None:
    """What a `signoff hook claude-code` process imports, with its store (SQLite): the
    verdict is judged and on the keyed record, and nothing else was loaded for it."""
    ws = tmp_path / "proj"
    ws.mkdir()
    (ws / "README.md").write_text("hello\n")
    env = {
        **os.environ,
        "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", ""),
        "HOME": str(tmp_path / "home"),
        "SIGNOFF_CONFIG_DIR": str(tmp_path / "config"),
    }
    for name in ("SIGNOFF_DB", "SIGNOFF_KEY", "SIGNOFF_KEY_FILE", "CLAUDE_PROJECT_DIR"):
        env.pop(name, None)
    heavy = [name for name in HEAVY if name not in ("sqlite3", "signoff.store")]
    for n in (1, 2):  # the first creates the store and the key file; the second is usual
        modules, out = _hook_modules(ws, _hook_event(ws, tool, args, n), env)
        assert json.loads(out)["hookSpecificOutput"]["permissionDecision"] == answer
        assert "signoff.store.sqlite" in modules and "signoff.policy" in modules  # it did
        never = HOOK_NEVER if n == 2 else ("argparse", "logging", "threading", "uuid", "inspect")
        assert [name for name in (*never, *heavy) if _loaded(modules, name)] == []
    from signoff.kinds import VERDICT
    from signoff.store import open_store

    os.environ["SIGNOFF_CONFIG_DIR"] = env["SIGNOFF_CONFIG_DIR"]  # the hooks' key file
    try:
        store = open_store(workspace=str(ws))
        try:
            verdicts = [e for e in store.events_after(0) if e.kind == VERDICT]
            assert [e.data["tool_use_id"] for e in verdicts] == ["toolu_1", "toolu_2"]
            assert {e.data["verdict"]["effect"] for e in verdicts} == {answer}
            assert store.verify_chain()[0]  # keyed with the key outside the store
        finally:
            store.close()
    finally:
        del os.environ["SIGNOFF_CONFIG_DIR"]


@pytest.mark.parametrize(
    "argv",
    [
        ["claude-code"],
        ["claude-code", "--ask", "inbox"],
        ["--ask=defer", "claude-code"],
        ["claude-code", "--workspace", "/tmp/x y", "--ask", "native"],
        ["--workspace=", "claude-code"],
        ["--workspace=-odd", "claude-code"],
    ],
)
def test_plain_hook_reads_as_argparse_does(argv: list[str]) -> None:
    import argparse

    from signoff.cli.hooks import _hook_parser, plain_hook

    plain = plain_hook(argv)
    assert plain is not None
    parser = _hook_parser(argparse.ArgumentParser(prog="signoff hook", exit_on_error=False))
    assert plain == vars(parser.parse_args(argv))


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["vscode"],  # no such client: argparse refuses it
        ["claude-code", "--ask", "yolo"],
        ["claude-code", "--ask="],
        ["claude-code", "--as", "inbox"],  # an abbreviation: argparse completes it
        ["claude-code", "-h"],
        ["claude-code", "--workspace", "-x"],
        ["claude-code", "--workspace"],
        ["claude-code", "--ask", "inbox", "--ask", "native"],
        ["claude-code", "claude-code"],
        ["--", "claude-code"],
        ["claude-code", "--verbose"],
    ],
)
def test_plain_hook_leaves_anything_else_to_argparse(argv: list[str]) -> None:
    from signoff.cli.hooks import plain_hook

    assert plain_hook(argv) is None


def test_bad_hook_arguments_still_block_with_argparse_s_message(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from signoff.cli.hooks import run_hook

    assert run_hook(["claude-code", "--ask", "yolo"]) == 2
    err = capsys.readouterr().err
    assert "invalid choice: 'yolo'" in err and "the call is blocked" in err


@pytest.mark.parametrize(
    "search",
    [None, "", ":", "{bin}", "{other}:{bin}", "{dir}:{bin}", "{plain}:{bin}", "::{bin}", "{none}"],
)
def test_which_finds_what_shutil_which_finds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, search: str | None
) -> None:
    """The hook protects the `signoff` script it runs; it finds it as `shutil.which`."""
    import shutil

    from signoff.adapters.claude_code import which

    folders = {name: tmp_path / name for name in ("bin", "other", "dir", "plain", "none")}
    for folder in folders.values():
        folder.mkdir()
    for name in ("bin", "other"):
        (folders[name] / "signoff").write_text("#!/bin/sh\n")
        (folders[name] / "signoff").chmod(0o755)
    (folders["dir"] / "signoff").mkdir()  # a directory of that name is no program
    (folders["plain"] / "signoff").write_text("not executable\n")
    monkeypatch.chdir(folders["bin"])  # an empty entry means the current directory
    if search is None:
        monkeypatch.delenv("PATH", raising=False)
    else:
        monkeypatch.setenv("PATH", search.format(**folders))
    assert which("signoff") == shutil.which("signoff")
    if search and search != "{none}":
        assert which("signoff") is not None


LOGS_LATER = """
import json, sys
from signoff.models import Decision, Request, ToolCall, Verdict
from signoff.store import open_store

store = open_store(sys.argv[1])
def claimed():
    request = store.create_request(Request(
        id="", call=ToolCall("Bash", {"command": "make"}, "c1"),
        verdict=Verdict("ask", "high", None, ("x",), "destructive"), preview="make"))
    store.decide(request.id, Decision("approve"), actor="ann")
    store.claim(request.id, worker="w1")
    return request.id

claimed()
before = "logging" in sys.modules
import logging
format = "%(name)s %(funcName)s %(message)s"
logging.basicConfig(level=logging.INFO, stream=sys.stdout, format=format)
rid = claimed()
store.close()
print(json.dumps({"before": before, "rid": rid}))
"""


def test_the_store_logs_without_importing_logging_until_it_is_configured(
    tmp_path: Path,
) -> None:
    """Until some code imports `logging`, nothing is configured and the store's info and
    debug records would be dropped: it does not import it. Configured, it logs as before,
    under its own name and naming the store's function that logged."""
    env = {
        **os.environ,
        "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", ""),
        "SIGNOFF_CONFIG_DIR": str(tmp_path / "config"),
    }
    env.pop("SIGNOFF_KEY", None)
    done = subprocess.run(
        [sys.executable, "-c", LOGS_LATER, str(tmp_path / "s.db")],
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    *logged, last = done.stdout.splitlines()
    result = json.loads(last)
    assert result["before"] is False
    assert logged == [
        f"signoff.store.engine claim request {result['rid']} claimed by w1 (lease until "
        + logged[0].split("(lease until ")[1]
    ]


def test_a_hook_process_ends_with_its_verdict_on_disk_in_the_wal(tmp_path: Path) -> None:
    """`signoff hook` ends without closing its SQLite connection (no checkpoint on close):
    its commit is in the WAL, which every reader sees and the chain verifies with; the
    next process that closes the store last folds the WAL into the database."""
    ws = tmp_path / "proj"
    ws.mkdir()
    env = {
        **os.environ,
        "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", ""),
        "HOME": str(tmp_path / "home"),
        "SIGNOFF_CONFIG_DIR": str(tmp_path / "config"),
    }
    for name in ("SIGNOFF_DB", "SIGNOFF_KEY", "SIGNOFF_KEY_FILE", "CLAUDE_PROJECT_DIR"):
        env.pop(name, None)
    for n in (1, 2, 3):
        done = subprocess.run(
            [sys.executable, "-m", "signoff", "hook", "claude-code"],
            input=_hook_event(ws, "Bash", {"command": "git status"}, n),
            cwd=ws,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
        )
        assert json.loads(done.stdout)["hookSpecificOutput"]["permissionDecision"] == "allow"
    wal = ws / ".signoff" / "signoff.db-wal"
    assert wal.stat().st_size > 0  # left to the exit: not checkpointed, not deleted
    from signoff.kinds import VERDICT
    from signoff.store.sqlite import SQLiteStore

    os.environ["SIGNOFF_CONFIG_DIR"] = env["SIGNOFF_CONFIG_DIR"]
    try:
        store = SQLiteStore(ws / ".signoff" / "signoff.db")
        try:
            verdicts = [e.data["tool_use_id"] for e in store.events_after(0) if e.kind == VERDICT]
            assert verdicts == ["toolu_1", "toolu_2", "toolu_3"]
            ok, bad, message = store.verify_chain()  # the anchor the hooks moved included
            assert ok, (bad, message)
        finally:
            store.close()  # the last connection: checkpoints and removes the WAL
    finally:
        del os.environ["SIGNOFF_CONFIG_DIR"]
    assert not wal.exists()
