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
