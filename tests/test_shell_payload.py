"""The payload scanner's pieces (shell_payload, shell_settings, shell_feeds), and the
promise that the payload pass only ever adds denies. Nothing here runs a command."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

import signoff.shell.analysis as shell
from signoff.shell import analyze
from signoff.shell.judges.payload import path_expr, sed_commands, shell_strings
from signoff.shell.judges.settings import setting_command

HOME = "/home/dev"
WS = "/home/dev/proj"


def _judge(command: str) -> str:
    return analyze(command, workspace=WS, home=HOME, resolver=lambda p: p).effect


def test_shell_strings_reads_literals_concatenations_and_argv_lists() -> None:
    found = shell_strings("import subprocess; subprocess.run(['rm', '-rf', '/'])")
    assert "rm -rf /" in found
    found = shell_strings("os.system('rm -rf ' + '/tmp/x')")
    assert "rm -rf /tmp/x" in found
    found = shell_strings('BEGIN{system("rm -rf " "/")}')  # awk juxtaposition
    assert "rm -rf /" in found
    assert "ls -la" in shell_strings("`ls -la`")
    assert "rm -rf x" in shell_strings("%x(rm -rf x)")


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        ("'/etc'", "/etc"),
        ("'~'", HOME),
        ("'~/.ssh'", HOME + "/.ssh"),
        ("os.path.expanduser('~/x')", HOME + "/x"),
        ("Path.home() / '.config'", HOME + "/.config"),
        ("os.path.join(os.environ['HOME'], 'a', 'b')", HOME + "/a/b"),
        ("require('os').homedir()", HOME),
        ("$ENV{HOME} . '/.bashrc'", HOME + "/.bashrc"),
        ("Dir.home", HOME),
        ("process.env.HOME", HOME),
    ],
)
def test_path_expr_reads_literal_targets(code: str, expected: str) -> None:
    assert path_expr(code, 0, HOME)[0] == expected


@pytest.mark.parametrize("code", ["sys.argv[1]", "input()", "target", "f'{x}'", "os.getcwd()"])
def test_path_expr_gives_up_on_computed_targets(code: str) -> None:
    assert path_expr(code, 0, HOME)[0] is None


def test_sed_commands_reads_e_and_the_s_e_flag() -> None:
    assert sed_commands("1e date") == ["date"]
    assert sed_commands("/x/!e touch a") == ["touch a"]
    assert sed_commands(r"s/x/rm -rf \//e") == ["rm -rf /"]
    assert sed_commands("s|a|b|g") == []
    assert sed_commands("s/e/E/g") == []


def test_setting_command_knows_which_git_keys_run_commands() -> None:
    assert setting_command("alias.x", "!rm -rf ~") == "rm -rf ~"
    assert setting_command("alias.st", "status") is None  # a git alias, not a shell one
    assert setting_command("core.pager", "less -R") == "less -R"
    assert setting_command("pager.log", "false") is None
    assert setting_command("user.name", "rm -rf ~") is None


@pytest.mark.parametrize(
    "command",
    [
        "python3 -c \"import shutil; shutil.rmtree('/')\"",
        "echo / | xargs rm -rf",
        "git -c alias.x='!rm -rf ~' x",
        "rm$IFS-rf$IFS~",
        "touch ./-rf; rm *",
        "echo '* * * * * rm -rf ~' | crontab -",
    ],
)
def test_the_payload_pass_is_what_denies(command: str, monkeypatch: pytest.MonkeyPatch) -> None:
    assert _judge(command) == "deny"
    monkeypatch.setattr(shell, "judge_payloads", lambda *a: None)
    assert _judge(command) != "deny"


def _corpus_commands() -> list[str]:
    path = Path(__file__).parent / "data" / "shell_corpus.py"
    spec = importlib.util.spec_from_file_location("shell_corpus_payload", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("shell_corpus_payload", module)
    spec.loader.exec_module(module)
    return [command for _, _, command in module.corpus()]


def test_the_payload_pass_only_adds_denies(monkeypatch: pytest.MonkeyPatch) -> None:
    """Over the whole corpus: every verdict is the one without the pass, or deny."""
    commands = _corpus_commands()
    with_pass = [_judge(c) for c in commands]
    monkeypatch.setattr(shell, "judge_payloads", lambda *a: None)
    without = [_judge(c) for c in commands]
    changed = [(c, b, a) for c, a, b in zip(commands, with_pass, without, strict=True) if a != b]
    assert changed, "the pass changes nothing: the test would prove nothing"
    assert all(after == "deny" for _, _, after in changed), [x for x in changed if x[2] != "deny"]
