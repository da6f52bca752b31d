"""Harmless commands signoff misread on real agent work, and classes the held-out corpora
found let through or refused wrongly: each with the control that keeps its neighbour's
verdict. The workspace lives in a temp directory, as agents' checkouts often do, with a
sibling project beside it."""

from __future__ import annotations

from pathlib import Path

import pytest

from signoff.models import ToolCall, Verdict
from signoff.policy import Policy
from signoff.settings import Settings


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "work" / "app"
    for folder in ("tests/delete", "tests/web", "pkg", "build"):
        (root / folder).mkdir(parents=True)
    (tmp_path / "work" / "lib").mkdir()  # a sibling checkout
    return root.resolve()


def judge(project: Path, command: str) -> Verdict:
    policy = Policy(Settings(), workspace=project)
    return policy.evaluate(ToolCall("execute_command", {"command": command}))


# (command, expected effect)
TABLE = [
    # sed: a file operand is not part of the script, whatever letters its folders hold
    ("sed -n '10,40p' tests/delete/test_x.py", "allow"),
    ("sed -n 5p tests/delete/test_x.py", "allow"),
    ("sed -E 's/(a)/\\1/g' tests/web/w.py", "allow"),
    ("sed -ne 'w out.txt' a.py", "ask"),  # the controls: a script that writes
    ("sed -n -e 1p -e 'w x' a.py", "ask"),
    ("sed --expression='s/x/y/w out' f.py", "ask"),
    ("sed '1e id' a.py", "ask"),
    ("sed -f prog.sed a.py", "ask"),  # a script file signoff does not read
    ("sed -i 's/a/b/' tests/web/x.py", "notify"),
    ("sed -i.bak -e 's/a/b/' x.py y.py", "notify"),
    # versioned interpreters are the interpreter
    ("python3.11 --version", "allow"),
    ("pip3.11 install requests", "ask"),
    # cluster tools: a live cluster's state is the network; their local files are not
    ("kubectl get pods", "ask"),
    ("kubectl describe pod x", "ask"),
    ("helm status web", "ask"),
    ("kubectl config get-contexts", "allow"),
    ("helm lint ./chart", "allow"),
    # the project's neighbours in the temp directory are not scratch space
    ("echo x > ../lib/file.txt", "ask"),
    ("cp a.txt ../lib/", "ask"),
    ("ls ../lib", "ask"),
    ("echo x > /tmp/scratch-of-mine.txt", "notify"),  # the control: scratch space
    # a project folder moved out of the project
    ("mv pkg /tmp/pkg-old", "ask"),
    ("mv -t /tmp pkg", "ask"),
    ("mv build/ /tmp/b", "ask"),
    ("mv out.log /tmp/", "notify"),  # the control: one file into scratch space
    ("mv pkg pkg2", "notify"),
    # git checkout of a path after a branch option
    ("git checkout --track origin/feature file.py", "ask"),
    ("git checkout -b new origin/main file.py", "ask"),
    ("git checkout --track origin/feature", "notify"),
    ("git checkout -b new origin/main", "notify"),
    # --help of a program whose other uses are catastrophic
    ("mkfs --help", "allow"),
    ("mkfs.ext4 --version", "allow"),
    ("dd --help", "allow"),
    ("mkfs -h", "deny"),  # -h is not help everywhere
    ("shutdown -h", "deny"),
]


@pytest.mark.parametrize(("command", "expected"), TABLE)
def test_the_verdict(project: Path, command: str, expected: str) -> None:
    verdict = judge(project, command)
    assert verdict.effect == expected, verdict.reasons


@pytest.mark.parametrize(
    ("command", "says"),
    [
        ("python -m pytest tests -q", "python -m pytest runs the project's tests"),
        ("python3 -m http.server", "python3 -m http.server runs the module http.server"),
        ("python3 -c 'print(1)'", "python3 runs inline code"),
        ("python3.12 x.py", "python3 runs the script x.py"),
        ("kubectl get pods", "kubectl get reads the state of a remote cluster"),
    ],
)
def test_the_reason_says_what_it_runs(project: Path, command: str, says: str) -> None:
    assert says in judge(project, command).reasons
