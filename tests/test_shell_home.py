"""Reading one's own home asks like any read outside the workspace (a file tool's read
there asks too), also when it is /root (CI runs as root), and its secret places say so;
another user's home, /root included, stays a secret place. A project under the home is
still the project. (Context-free cases live in the corpus, tests/data/shell_corpus.py.)"""

from __future__ import annotations

import pytest

from signoff.shell import analyze


def same(path: str) -> str:
    return path


@pytest.mark.parametrize(
    ("home", "command", "effect"),
    [
        ("/root", "ls ~", "ask"),
        ("/root", "ls /root/projects", "ask"),
        ("/root", "cat ~/.bashrc", "ask"),
        ("/root", "ls ~/go/pkg/mod", "allow"),
        ("/root", "cat ~/.ssh/id_ed25519", "ask"),
        ("/root", "cat /root/.aws/credentials", "ask"),
        ("/root", "cat ~/project/.env", "ask"),
        ("/home/alice", "ls /root", "ask"),
        ("/home/alice", "cat /root/notes.txt", "ask"),
        ("/home/alice", "ls ~", "ask"),
        ("/home/alice", "cat ~/.cargo/registry/src/x/lib.rs", "allow"),
    ],
)
def test_home_reads(home: str, command: str, effect: str) -> None:
    result = analyze(command, workspace="/srv/ws", home=home, resolver=same)
    assert result.effect == effect, result


@pytest.mark.parametrize(
    ("command", "effect"),
    [
        ("mv a b", "notify"),
        ("cat README.md", "allow"),
        ("ls", "allow"),
        ("ls ~", "ask"),
        ("cat ~/.bashrc", "ask"),
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
    result = analyze(command, workspace="/root/proj", home="/root", cwd="/root/proj", resolver=same)
    assert result.effect == effect, result


def test_startup_files_stay_denied_when_the_workspace_is_home() -> None:
    result = analyze("echo x >> ~/.bashrc", workspace="/root", home="/root", resolver=same)
    assert result.effect == "deny", result
