"""Switches that turn asking off (`/hitl off`, auto mode) never open signoff's own state:
an ask because a call may reach it still goes to a person."""

from __future__ import annotations

from pathlib import Path

import pytest

from signoff.gate import Gate
from signoff.models import ToolCall
from signoff.policy import Policy
from signoff.testing import ScriptedChannel
from signoff.workspace import Workspace

CANARY = "binding_key_canary_0f1e2d"


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    (tmp_path / ".signoff").mkdir()
    (tmp_path / ".signoff" / "signoff.db").write_text(CANARY)
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.py").write_text("print('hi')\n")
    return tmp_path


@pytest.mark.parametrize(
    "command",
    [
        "grep -ra binding_key .",
        "rg -a -uu binding_key",
        "rg -a --hidden binding_key",
        "find . -type f -exec cat {} +",
        'cat "$(ls -d .s*)/signoff.db"',
    ],
)
def test_approvals_off_still_asks_for_what_may_reach_protected_state(
    ws: Path, command: str
) -> None:
    workspace = Workspace(ws)
    channel = ScriptedChannel()  # rejects every question
    gate = Gate(Policy(workspace=ws), channel, previewer=workspace.preview)
    gate.enabled = False  # /hitl off
    result = gate.execute(
        ToolCall("execute_command", {"command": command}), workspace.as_mapping()["execute_command"]
    )
    assert CANARY not in str(result.content)
    # denied outright, or asked (and refused by the person): never run by the switch
    asked = [p.request.call.arguments["command"] for p in channel.prompts]
    assert (result.outcome, asked) in (("denied", []), ("rejected", [command]))


def test_approvals_off_still_lets_ordinary_asks_run(ws: Path) -> None:
    """The control: the switch does what it says for everything else."""
    workspace = Workspace(ws)
    channel = ScriptedChannel()
    gate = Gate(Policy(workspace=ws), channel, previewer=workspace.preview)
    gate.enabled = False
    result = gate.execute(
        ToolCall("execute_command", {"command": "grep -ra hi src"}),
        workspace.as_mapping()["execute_command"],
    )
    assert result.outcome == "ran" and "hi" in str(result.content)
    assert channel.prompts == []


# A tree that holds a path a deny rule names: reading the whole of it asks, because the
# deny cannot be checked file by file. No switch may settle that doubt: deny is absolute.
DENIED_SECRET = "prod_password_canary_5a4b"


@pytest.fixture
def denied_below(ws: Path) -> Path:
    (ws / "config" / "prod").mkdir(parents=True)
    (ws / "config" / "prod" / "db.yml").write_text(f"password: {DENIED_SECRET}\n")
    (ws / "config" / "dev.yml").write_text("password: dev\n")
    return ws


@pytest.mark.parametrize("switch", ["auto mode", "hitl off"])
@pytest.mark.parametrize(
    "command", ["grep -r password config", "cat config/*/*", "tar cf - config"]
)
def test_no_switch_settles_a_call_that_may_reach_a_denied_path(
    denied_below: Path, switch: str, command: str
) -> None:
    from signoff.settings import Settings

    mode = "auto" if switch == "auto mode" else "default"
    policy = Policy(
        Settings.from_rules(mode=mode, deny=["Read(config/prod/**)"]), workspace=denied_below
    )
    workspace = Workspace(denied_below, hidden=policy.hidden)
    channel = ScriptedChannel()  # rejects every question
    gate = Gate(policy, channel, previewer=workspace.preview)
    gate.enabled = switch != "hitl off"
    result = gate.execute(
        ToolCall("execute_command", {"command": command}), workspace.as_mapping()["execute_command"]
    )
    assert DENIED_SECRET not in str(result.content)
    asked = [p.request.call.arguments["command"] for p in channel.prompts]
    assert (result.outcome, asked) in (("denied", []), ("rejected", [command]))


@pytest.mark.parametrize("switch", ["auto mode", "hitl off"])
@pytest.mark.parametrize("ask_rule", ["execute_command", "Bash", "Bash(grep:*)"])
@pytest.mark.parametrize(
    ("command", "canary"),
    [("grep -ra binding_key .", CANARY), ("grep -r password config", DENIED_SECRET)],
)
def test_an_ask_rule_does_not_hide_a_doubt_only_a_person_settles(
    denied_below: Path, switch: str, ask_rule: str, command: str, canary: str
) -> None:
    # The rule asks for every grep; the switch turns asks into allows. The call's other
    # reason to ask (the store, or a denied folder, inside the tree it reads) must not be
    # lost behind the rule's.
    from signoff.settings import Settings

    mode = "auto" if switch == "auto mode" else "default"
    policy = Policy(
        Settings.from_rules(mode=mode, ask=[ask_rule], deny=["Read(config/prod/**)"]),
        workspace=denied_below,
    )
    workspace = Workspace(denied_below, hidden=policy.hidden)
    channel = ScriptedChannel()  # rejects every question
    gate = Gate(policy, channel, previewer=workspace.preview)
    gate.enabled = switch != "hitl off"
    result = gate.execute(
        ToolCall("execute_command", {"command": command}), workspace.as_mapping()["execute_command"]
    )
    assert canary not in str(result.content)
    assert result.outcome == "rejected" and len(channel.prompts) == 1
