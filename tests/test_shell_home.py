"""One's own home is judged by its secret places, also when it is /root (CI runs as root);
another user's home, /root included, stays a secret place."""

from __future__ import annotations

import pytest

from signoff.shell import analyze


def same(path: str) -> str:
    return path


@pytest.mark.parametrize(
    ("home", "command", "effect"),
    [
        ("/root", "ls ~", "allow"),
        ("/root", "ls /root/projects", "allow"),
        ("/root", "cat ~/.bashrc", "allow"),
        ("/root", "cat ~/.ssh/id_ed25519", "ask"),
        ("/root", "cat /root/.aws/credentials", "ask"),
        ("/root", "cat ~/project/.env", "ask"),
        ("/home/alice", "ls /root", "ask"),
        ("/home/alice", "cat /root/notes.txt", "ask"),
        ("/home/alice", "ls ~", "allow"),
    ],
)
def test_home_reads(home: str, command: str, effect: str) -> None:
    result = analyze(command, workspace="/srv/ws", home=home, resolver=same)
    assert result.effect == effect, result


@pytest.mark.parametrize(
    ("command", "effect"),
    [
        ("mv a b", "notify"),
        ("chmod +x run.sh", "notify"),
        ("ln -s a b", "notify"),
        ("echo x > notes.txt", "notify"),
        ("echo x > ~/.bashrc", "deny"),
        ("echo x > ~/other/file.txt", "ask"),
        ("echo x > /etc/hosts", "deny"),
        ("rm -rf ~", "deny"),
        ("rm -rf /root/proj", "deny"),
    ],
)
def test_a_project_under_root_is_still_the_project(command: str, effect: str) -> None:
    result = analyze(command, workspace="/root/proj", home="/root", cwd="/root/proj",
                     resolver=same)
    assert result.effect == effect, result


def test_startup_files_stay_denied_when_the_workspace_is_home() -> None:
    result = analyze("echo x >> ~/.bashrc", workspace="/root", home="/root", resolver=same)
    assert result.effect == "deny", result


@pytest.mark.parametrize(
    ("command", "effect"),
    [
        ("cat $(echo ~/.ssh/id_rsa)", "ask"),
        ("head $(ls ~/.aws/*)", "ask"),
        ("cat $(printf '\\x2e\\x65\\x6e\\x76')", "ask"),
        ("cat $(echo L3Jvb3QvLnNzaA== | base64 -d)", "ask"),
        ("cat $(echo ahsr_di/hss./~ | rev)", "ask"),
        ("cat $(git rev-parse --show-toplevel)/README.md", "allow"),
        ('for f in *.md; do wc -l "$f"; done', "allow"),
    ],
)
def test_reads_of_paths_built_at_run_time(command: str, effect: str) -> None:
    result = analyze(command, workspace="/srv/ws", home="/home/alice", cwd="/srv/ws",
                     resolver=same)
    assert result.effect == effect, result


@pytest.mark.parametrize(
    ("command", "effect"),
    [
        ("xargs -I{} sh -c '{}' < cmds.txt", "ask"),
        ("cat cmds | xargs -I % bash -c %", "ask"),
        ("find . -name '*.py' | xargs -I{} wc -l {}", "allow"),
        ("zip -T -TT 'rm -rf x' a.zip f", "ask"),
        ("rsync -e 'sh -c rm' a b", "ask"),
        ("tar --to-command=sh -xf a.tar", "ask"),
        ("zip -r out.zip src", "notify"),
        ("rsync -a src/ dst/", "notify"),
    ],
)
def test_programs_run_through_options_and_placeholders(command: str, effect: str) -> None:
    result = analyze(command, workspace="/srv/ws", home="/home/alice", cwd="/srv/ws",
                     resolver=same)
    assert result.effect == effect, result


@pytest.mark.parametrize(
    ("command", "effect"),
    [
        ("ln -s ~/.ssh/id_rsa key; cat key", "ask"),
        ("ln -s ../shared/lib lib", "notify"),
        ("grep -r password ~", "ask"),
        ("grep -r AKIA /", "ask"),
        ("rg token /etc", "ask"),
        ("grep -rn TODO src/", "allow"),
        ("rg -n foo", "allow"),
        ("grep password notes.txt", "allow"),
        ("ss -ltnp", "allow"),
        ("netstat -tlnp", "allow"),
        ("ss -K dst 10.0.0.1", "ask"),
    ],
)
def test_secrets_reached_by_links_and_recursive_searches(command: str, effect: str) -> None:
    result = analyze(command, workspace="/srv/ws", home="/home/alice", cwd="/srv/ws",
                     resolver=same)
    assert result.effect == effect, result
