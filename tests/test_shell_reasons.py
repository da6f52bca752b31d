"""Reasons and risks read right (issue 12): `signoff check` shows what a command does,
not the shell tool's tier, and a program's queries and mutations do not share a reason or
a risk."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from signoff.cli.app import explain
from signoff.models import ToolCall, Verdict
from signoff.policy import Policy
from signoff.settings import Settings

WS = "/home/dev/proj"


def _verdict(command: str) -> tuple[ToolCall, Verdict, Policy]:
    policy = Policy(Settings(), workspace=WS, home="/home/dev", resolver=lambda p: p)
    call = ToolCall("execute_command", {"command": command})
    return call, policy.evaluate(call), policy


def _check(command: str) -> str:
    out = io.StringIO()
    explain(*_verdict(command), out=out)
    return out.getvalue()


def test_ls_is_not_labelled_with_the_tools_tier() -> None:
    head = _check("ls -la").splitlines()[0]
    assert "destructive" not in head and "tier" not in head
    assert head.split() == ["ALLOW", "execute_command", "risk", "none", "class", "read_only"]


def test_the_header_names_the_worst_part() -> None:
    assert _check("ls -la; rm -rf build").splitlines()[0].endswith("class destructive")


def test_a_file_tool_still_shows_its_tier(tmp_path: Path) -> None:
    out = io.StringIO()
    policy = Policy(Settings(), workspace=str(tmp_path))
    call = ToolCall("write_file", {"path": "a.txt", "content": "x"})
    explain(call, policy.evaluate(call), policy, out=out)
    assert "tier write" in out.getvalue().splitlines()[0]


@pytest.mark.parametrize(
    ("query", "change"),
    [
        ("kubectl config get-contexts", "kubectl delete pod x"),
        ("helm repo list", "helm uninstall web"),
        ("docker ps", "docker rm -f web"),
        ("psql -c 'select count(*) from users'", "psql -c 'delete from users'"),
    ],
)
def test_a_query_and_a_mutation_do_not_share_reason_or_risk(query: str, change: str) -> None:
    _, asked, _ = _verdict(change)
    _, allowed, _ = _verdict(query)
    assert (allowed.effect, allowed.risk) == ("allow", "none")
    assert asked.effect == "ask" and asked.risk == "high"
    assert set(asked.reasons).isdisjoint(allowed.reasons)
    verb = change.split()[1]
    assert any(verb in r or "change" in r for r in asked.reasons), asked.reasons


@pytest.mark.parametrize(
    ("command", "says"),
    [
        ("kubectl delete pod x", "kubectl delete deletes resources from the cluster"),
        ("docker rm -f web", "docker rm deletes containers and the data inside them"),
        ("docker compose down -v", "docker compose down stops and deletes"),
        ("docker push app:1", "docker push uploads an image to a registry"),
        ("helm uninstall web", "helm uninstall removes a release"),
        ("npm publish --dry-run", "runs the package's prepack and prepare scripts"),
        ("make -n", "still runs the Makefile's $(shell"),
        ("ldd ./a.out", "ldd may run the program it inspects"),
        ("git branch -D old", "deletes a branch even when it is not merged"),
    ],
)
def test_reasons_say_what_the_command_does(command: str, says: str) -> None:
    _, verdict, _ = _verdict(command)
    assert any(says in r for r in verdict.reasons), verdict.reasons
    assert not any("runs project code" in r for r in verdict.reasons)
