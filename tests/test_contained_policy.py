"""The contained tier, in the policy: a shell command that asks only because what it runs
is unknown (code the agent wrote, the project's tests and builds, unknown programs) runs
in the OS sandbox instead, as notify, for an executor that can contain it. Deny rules,
ask rules, catastrophic commands, the network, installs, secrets, privilege and work
outside the project still decide first, and `[sandbox] enabled = false` turns it off."""

from __future__ import annotations

from pathlib import Path

import pytest

from signoff.models import ToolCall, Verdict
from signoff.policy import Policy
from signoff.settings import load_settings
from signoff.shell.restorable import KEPT_BYTES
from signoff.shell_judgement import CONTAINED
from signoff.tools import Registry

SETTINGS = """[permissions]
deny = ["Bash(python evil.py)", "Edit(src/locked/**)", "Read(secrets/**)"]
ask = ["Bash(make deploy:*)"]
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / ".signoff").mkdir(parents=True)
    (root / ".signoff" / "settings.toml").write_text(SETTINGS)
    (root / "reproduce_bug.py").write_text("print(1)\n")
    return root.resolve()


def judge(project: Path, command: str, *, contain: bool = True) -> Verdict:
    policy = Policy(load_settings(project, user=False), workspace=project, contain=contain)
    return policy.evaluate(ToolCall("execute_command", {"command": command}))


# (command, effect without containment, effect with it)
TABLE = [
    ("python reproduce_bug.py", "ask", "notify"),
    ("python3 -c 'print(1)'", "ask", "notify"),
    ("python -m pytest tests/test_x.py -q", "ask", "notify"),
    ("pytest -q", "ask", "notify"),
    ("make", "ask", "notify"),
    ("./prog --flag", "ask", "notify"),
    ("bash x.sh", "ask", "notify"),
    ("g++ x.cpp -o x && ./x", "ask", "notify"),
    ("python reproduce_bug.py | grep Error", "ask", "notify"),
    ("git status && pytest -x", "ask", "notify"),
    # what containment never stands in for
    ("python evil.py", "deny", "deny"),  # a deny rule
    ("make deploy", "ask", "ask"),  # an ask rule
    ("rm -rf /", "deny", "deny"),
    ("pip install requests", "ask", "ask"),  # installs reach the network
    ("npm install", "ask", "ask"),
    ("curl https://example.com", "ask", "ask"),
    ("python x.py && git push", "ask", "ask"),  # one part reaches the network
    ("sudo make", "ask", "ask"),
    ("python x.py > ../elsewhere.txt", "ask", "ask"),  # writes outside the project
    ("python x.py > .git/hooks/pre-commit", "ask", "ask"),  # code that runs later
    ("cat ~/.ssh/id_rsa | python x.py", "ask", "ask"),  # a secret
    ("python x.py > /tmp/out.txt", "ask", "ask"),  # scratch would vanish with the sandbox
    ("echo x > src/locked/a.py && make", "deny", "deny"),
    # servers and jobs left running: cut off and killed with the sandbox, so a person decides
    ("python -m http.server 8000", "ask", "ask"),
    ("flask run", "ask", "ask"),
    ("npm start", "ask", "ask"),
    ("python manage.py runserver", "ask", "ask"),
    ("python worker.py &", "ask", "ask"),
    ("pytest -q 2>&1 | tail -5", "ask", "notify"),  # the control: a redirect is no job
    # a read of a tree that holds signoff's state or a denied path: the sandbox hides them
    ("grep -rn needle .", "ask", "notify"),
    ("find . -name '*.py' | xargs grep -l needle", "ask", "notify"),
    ("cat .signoff/signoff.db", "deny", "deny"),  # the state itself: no tool, contained or not
    ("make deploy && grep -rn x .", "ask", "ask"),  # an ask rule still asks
    # deletions inside the workspace: the contained run keeps what they delete (revertible)
    ("rm reproduce_bug.py", "ask", "notify"),
    ("rm -rf .pytest_cache build", "ask", "notify"),
    ("find . -name '__pycache__' -type d -exec rm -rf {} +", "ask", "notify"),
    ("git checkout src/app.py", "ask", "notify"),
    ("rm ../elsewhere.txt", "ask", "ask"),  # outside: nothing of it is kept
    ("rm $FILE", "ask", "ask"),  # known only at run time
    ("kill 1234", "ask", "ask"),  # not files: nothing to keep
    # allowed already: nothing to contain
    ("git status", "allow", "allow"),
]


@pytest.mark.parametrize(("command", "plain", "contained"), TABLE)
def test_containment_turns_only_unknown_effects_into_notify(
    project: Path, command: str, plain: str, contained: str
) -> None:
    without = judge(project, command, contain=False)
    assert without.effect == plain, without.reasons
    assert without.contained is False
    verdict = judge(project, command)
    assert verdict.effect == contained, verdict.reasons
    assert verdict.contained is (contained != plain)
    if verdict.contained:
        assert verdict.rule == CONTAINED
        assert verdict.risk == "low"
        assert verdict.reasons[0].startswith("runs contained: no network")


def test_the_verdict_json_says_contained_only_when_it_is(project: Path) -> None:
    contained = judge(project, "pytest -q")
    assert contained.to_json()["contained"] is True
    assert Verdict.from_json(contained.to_json()) == contained
    assert "contained" not in judge(project, "git status").to_json()  # old records: unchanged


def test_sandbox_off_in_any_settings_file_asks_again(project: Path) -> None:
    local = project / ".signoff" / "settings.local.toml"
    local.write_text("[sandbox]\nenabled = false\n")
    verdict = judge(project, "pytest -q")
    assert (verdict.effect, verdict.contained) == ("ask", False)


def test_a_bad_sandbox_setting_names_the_file_and_the_line(project: Path) -> None:
    local = project / ".signoff" / "settings.local.toml"
    local.write_text('[sandbox]\nenabled = "no"\n')
    with pytest.raises(
        Exception, match=r"settings.local.toml:2: sandbox.enabled must be true or false"
    ):
        load_settings(project, user=False)


def test_a_mode_keeps_containment(project: Path) -> None:
    policy = Policy(load_settings(project, user=False), workspace=project, contain=True)
    assert policy.with_mode("accept-edits").contain is True
    plan = policy.with_mode("plan").evaluate(ToolCall("execute_command", {"command": "make"}))
    assert plan.effect == "deny"  # plan mode is read-only, contained or not


def test_a_registry_shell_alias_is_contained_too(project: Path) -> None:
    from signoff.adapters import claude_code

    policy = Policy(
        load_settings(project, user=False),
        workspace=project,
        registry=Registry(dict(claude_code.CLIENT.specs)),
        contain=True,
    )
    verdict = policy.evaluate(ToolCall("Bash", {"command": "pytest"}), cwd=str(project))
    assert (verdict.effect, verdict.contained) == ("notify", True)


def test_a_deletion_too_big_to_keep_asks(project: Path) -> None:
    big = project / "data.bin"
    with big.open("wb") as handle:
        handle.truncate(KEPT_BYTES + 1)  # sparse: no disk is used
    assert judge(project, "rm data.bin").effect == "ask"
    (project / "build").mkdir()
    (project / "build" / "big.o").write_bytes(b"")
    with (project / "build" / "big.o").open("wb") as handle:
        handle.truncate(KEPT_BYTES + 1)
    verdict = judge(project, "rm -rf build")  # a build output: the build makes it again
    assert (verdict.effect, verdict.contained) == ("notify", True)
