"""Bash evaluates data as code in arithmetic, subscripts, `${v@P}` and `${!x}`: each such
context whose value could carry code must ask. Proven with real bash first, so the class is
real and not a guess."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from signoff.shell import analyze

WS, HOME = "/home/dev/proj", "/home/dev"
VALUE = "x='a[$(touch {proof})]'; "

# (form that reads $x as code, does bash run the subscript?)
CODE_CONTEXTS = [
    "echo $((x))",
    "(( x ))",
    "[[ $x -eq 1 ]]",
    "let y=x+1",
    "declare -i n=x",
    "echo ${arr[x]}",
    "echo ${!x}",
    "echo ${x@P}",
]


def judge(command: str) -> str:
    return analyze(command, workspace=WS, home=HOME, resolver=lambda p: p).effect


@pytest.mark.skipif(shutil.which("bash") is None, reason="bash is not installed")
@pytest.mark.parametrize("form", CODE_CONTEXTS)
def test_bash_runs_code_from_a_value_and_signoff_asks(form: str, tmp_path: Path) -> None:
    proof = tmp_path / "proof"
    command = VALUE.format(proof=proof) + form
    subprocess.run(
        ["bash", "-c", command], cwd=tmp_path, capture_output=True, check=False, timeout=10
    )
    assert proof.exists(), f"bash did not run the subscript for {form!r}: the test is wrong"
    assert judge(command) in ("ask", "deny"), command
    # the same context reading a variable that is not set on the command line also asks
    assert judge(form) in ("ask", "deny"), form


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("echo ${v@P}", "ask"),
        ("echo ${!x}", "ask"),
        ("read -r n < count.txt; echo $((n + 1))", "ask"),
        ("for ((i=0; i<n; i++)); do echo; done", "ask"),
        ("unset 'a[$(id)]'", "ask"),
        ("printf -v 'a[`id`]' %s x", "ask"),
        ("[[ -v 'a[$(id)]' ]]", "ask"),
        ("test -v 'a[$(id)]'", "ask"),
        ("a[x]=1", "ask"),
        # values known on the command line to be plain: nothing can run
        ("x=5; echo $((x * 2))", "allow"),
        ("echo $((1 + 2))", "allow"),
        ("echo $((RANDOM % 6))", "allow"),
        ("for ((i=0; i<3; i++)); do echo $i; done", "allow"),
        ("let y=1", "allow"),
        ("x=HOME; echo ${!x}", "allow"),
        ("echo ${!BASH*}", "allow"),
        ("echo ${arr[0]} ${arr[@]} ${#x} ${x:-default}", "allow"),
        ("test $x -eq 1", "allow"),  # test(1) compares integers; it does not evaluate
        ("[[ -v x ]]", "allow"),
        ('printf "%s" "a[$x]"', "allow"),
        ("echo 'a[$(id)]'", "allow"),
    ],
)
def test_verdicts(command: str, expected: str) -> None:
    assert judge(command) == expected, command
