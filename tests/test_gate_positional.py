"""A wrapped tool is called as the function is: positional arguments are bound to its
signature, so `refund("A-1", 25.0)` is the call `refund(order="A-1", amount=25.0)`, judged,
shown and recorded exactly as the keyword form; a call the signature refuses is a clear
`TypeError` naming the tool and the argument, and nothing is judged or run."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest

from signoff import CallDenied, Decision, Gate, Policy, Settings, open_store, tool
from signoff.audit import read_log, session_recorder
from signoff.testing import ScriptedChannel

RAN: list[tuple[str, float, str]] = []


@tool(tier="external", kind="other", amount_arg="amount")
def refund(order: str, amount: float, note: str = "") -> str:
    RAN.append((order, amount, note))
    return f"refunded {amount:.2f} on {order}"


@tool(tier="external", kind="other", amount_arg="amount")
async def arefund(order: str, amount: float, note: str = "") -> str:
    await asyncio.sleep(0)
    RAN.append((order, amount, note))
    return f"refunded {amount:.2f} on {order}"


def _session(
    decisions: list[Decision], **rules: Any
) -> tuple[Gate, ScriptedChannel, Callable[[], list[dict[str, Any]]]]:
    store = open_store("memory:")
    channel = ScriptedChannel(decisions)
    gate = Gate(
        Policy(Settings.from_rules(**rules), workspace="."),
        channel,
        listener=session_recorder(store, "session-1"),
    )

    def record() -> list[dict[str, Any]]:
        """The audit entries without what differs between any two sessions (times, ids,
        hashes): kind, actor and content."""
        out = []
        for event in read_log(store):
            doc = event.to_json()
            data = {k: v for k, v in doc["data"].items() if k not in ("asked_at", "request")}
            out.append({"kind": doc["kind"], "actor": doc["actor"], "data": data})
        return out

    return gate, channel, record


FORMS: dict[str, tuple[tuple[Any, ...], dict[str, Any]]] = {
    "keyword": ((), {"order": "A-1", "amount": 25.0}),
    "keyword, other order": ((), {"amount": 25.0, "order": "A-1"}),
    "positional": (("A-1", 25.0), {}),
    "mixed": (("A-1",), {"amount": 25.0}),
}


def _outcome(decision: Decision, args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
    RAN.clear()
    gate, channel, record = _session([decision], deny=["refund(amount>=1000)"])
    try:
        value: Any = gate.wrap(refund)(*args, **kwargs)
    except CallDenied as refusal:
        value = ("refused", refusal.reason)
    (prompt,) = channel.prompts
    return {
        "value": value,
        "ran": list(RAN),
        "call": prompt.request.call.to_json(),
        "verdict": prompt.request.verdict.to_json(),
        "preview": prompt.request.preview,
        "record": record(),
    }


@pytest.mark.parametrize(
    "decision",
    [
        Decision("approve", actor="ann"),
        Decision("reject", reason="not this one", actor="ann"),
        Decision("edit", arguments={"order": "A-2", "amount": 10.0}, actor="ann"),
    ],
    ids=["approve", "reject", "edit"],
)
def test_every_form_gets_the_same_verdict_preview_and_record(decision: Decision) -> None:
    outcomes = {form: _outcome(decision, *call) for form, call in FORMS.items()}
    keyword = outcomes["keyword"]
    assert keyword["verdict"]["effect"] == "ask"
    assert '"amount": 25.0' in keyword["preview"]
    assert len(keyword["record"]) == 3
    for form, outcome in outcomes.items():
        assert outcome == keyword, form


def test_a_positional_call_over_a_deny_rule_is_denied_as_the_keyword_one() -> None:
    records = []
    for args, kwargs in (((), {"order": "A-9", "amount": 5000.0}), (("A-9", 5000.0), {})):
        RAN.clear()
        gate, channel, record = _session([], deny=["refund(amount>=1000)"])
        with pytest.raises(CallDenied, match="amount>=1000"):
            gate.wrap(refund)(*args, **kwargs)
        assert RAN == [] and channel.prompts == []
        records.append(record())
    assert records[0] == records[1]
    assert records[0][0]["data"]["verdict"]["effect"] == "deny"


def test_async_tools_take_positional_arguments_too() -> None:
    RAN.clear()
    gate, channel, _ = _session([Decision("approve", actor="ann")])
    value = asyncio.run(gate.wrap(arefund)("A-1", 25.0, "late"))
    assert value == "refunded 25.00 on A-1"
    assert RAN == [("A-1", 25.0, "late")]
    assert channel.prompts[0].request.call.arguments == {
        "order": "A-1",
        "amount": 25.0,
        "note": "late",
    }


def test_with_the_gate_off_a_positional_call_runs_as_called() -> None:
    RAN.clear()
    gate, channel, _ = _session([])
    gate.set_enabled(False)
    assert gate.wrap(refund)("A-1", 2.0) == "refunded 2.00 on A-1"
    assert RAN == [("A-1", 2.0, "")] and channel.prompts == []


@pytest.mark.parametrize(
    ("args", "kwargs", "problem"),
    [
        (("A-1",), {}, "missing a required argument: 'amount'"),
        ((), {"amount": 1.0}, "missing a required argument: 'order'"),
        (
            ("A-1", 1.0, "n", "extra"),
            {},
            r"takes 3 positional arguments \(order, amount, note\) but 4 were given",
        ),
        (("A-1", 1.0), {"order": "A-2"}, "multiple values for argument 'order'"),
        (("A-1", 1.0), {"ammount": 2.0}, "got an unexpected keyword argument 'ammount'"),
    ],
    ids=["missing", "missing-first", "too-many", "twice", "misspelt"],
)
def test_a_call_the_signature_refuses_names_the_tool_and_the_argument(
    args: tuple[Any, ...], kwargs: dict[str, Any], problem: str
) -> None:
    RAN.clear()
    gate, channel, record = _session([Decision("approve", actor="ann")])
    with pytest.raises(TypeError, match=rf"^tool 'refund': {problem}; it is called as refund\("):
        gate.wrap(refund)(*args, **kwargs)
    assert RAN == [] and channel.prompts == [] and record() == []  # nothing judged or run


def test_positional_only_and_catch_all_parameters() -> None:
    def tag(item: str, /, label: str, **extra: str) -> str:
        return f"{item}:{label}:{sorted(extra.items())}"

    gate, channel, _ = _session([Decision("approve", actor="ann")])
    guarded = gate.wrap(tag)  # undeclared: unknown tier, so it asks
    assert guarded("x", "y", colour="red") == "x:y:[('colour', 'red')]"
    assert channel.prompts[0].request.call.arguments == {
        "item": "x",
        "label": "y",
        "colour": "red",
    }

    def spread(*names: str) -> str:
        return ",".join(names)

    with pytest.raises(TypeError, match=r"tool 'spread': \*names cannot be passed"):
        gate.wrap(spread)("a", "b")
