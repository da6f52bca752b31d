"""Property: no sequence of grants, mode switches, disabling and edits runs a denied call."""

from __future__ import annotations

import tempfile
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from signoff.gate import Gate
from signoff.models import Decision, ToolCall
from signoff.policy import Policy
from signoff.settings import Settings
from signoff.tools import Registry, ToolSpec

DENY = ["send(to=*@evil.com)", "write_file(secrets/**)", "pay(amount>=1000)", "delete_file"]
WORKSPACE = tempfile.mkdtemp(prefix="signoff-prop-")

recipients = st.sampled_from(["bob@ok.com", "eve@evil.com", "x@EVIL.com", "a@evil.com.ok"])
paths = st.sampled_from(["src/a.py", "secrets/k", "./secrets/../secrets/k", "secrets", "b.txt"])
calls = st.one_of(
    st.builds(lambda to: ToolCall("send", {"to": to}), recipients),
    st.builds(lambda p: ToolCall("write_file", {"path": p, "content": "x"}), paths),
    st.builds(lambda p: ToolCall("delete_file", {"path": p}), paths),
    st.builds(lambda n: ToolCall("pay", {"amount": n}), st.integers(0, 5000)),
)
broad_rules = st.sampled_from(
    [
        "send",
        "send(to=*)",
        "*",
        "Edit",
        "write_file",
        "write_file(**)",
        "pay",
        "delete_file",
        "pay(amount>=0)",
        "Write(secrets/**)",
    ]
)
decisions = st.one_of(
    st.just(Decision("approve")),
    st.builds(lambda r: Decision("approve_always", scope="session", rule=r), broad_rules),
    st.builds(lambda to: Decision("edit", arguments={"to": to}), recipients),
    st.builds(lambda p: Decision("edit", arguments={"path": p, "content": "y"}), paths),
    st.builds(lambda n: Decision("edit", arguments={"amount": n}), st.integers(0, 5000)),
    st.just(Decision("skip")),
)
steps = st.lists(
    st.one_of(
        st.tuples(st.just("call"), calls, decisions),
        st.tuples(st.just("mode"), st.sampled_from(["default", "accept-edits", "plan", "auto"])),
        st.tuples(st.just("enabled"), st.booleans()),
        st.tuples(st.just("clear")),
    ),
    max_size=25,
)


def registry() -> Registry:
    reg = Registry()
    reg.add(ToolSpec("send", "external", "other"))
    reg.add(ToolSpec("pay", "external", "other", amount_arg="amount"))
    return reg


BASELINE = Policy(Settings.from_rules(deny=DENY), workspace=WORKSPACE, registry=registry())


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps)
def test_no_sequence_runs_a_denied_call(sequence: list[tuple[Any, ...]]) -> None:
    answers: list[Decision] = []
    gate = Gate(
        Policy(Settings.from_rules(deny=DENY), workspace=WORKSPACE, registry=registry()),
        channel=_Channel(answers),
    )
    ran: list[ToolCall] = []
    for step in sequence:
        if step[0] == "call":
            _, call, decision = step
            answers[:] = [decision]
            gate.stopped = None  # limits are tested elsewhere; keep exploring
            result = gate.execute(call, lambda **kw: None)
            if result.ran:
                assert result.executed_call is not None
                ran.append(result.executed_call)
        elif step[0] == "mode":
            gate.set_mode(step[1])
        elif step[0] == "enabled":
            gate.set_enabled(step[1])
        else:
            gate.clear()
    for call in ran:
        assert BASELINE.evaluate(call).effect != "deny", call


class _Channel:
    def __init__(self, answers: list[Decision]) -> None:
        self.answers = answers

    def decide(self, prompt: Any) -> Decision:
        return self.answers.pop() if self.answers else Decision("skip")
