"""The vocabulary: canonical JSON and digests, decisions, tool declarations."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from signoff.exceptions import InvalidInput, SchemaVersionError
from signoff.models import (
    Decision,
    Grant,
    Request,
    ToolCall,
    Verdict,
    canonical_json,
)
from signoff.tools import ALIASES, BUILTIN_SPECS, Registry, tool

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)


@given(st.dictionaries(st.text(), json_values, max_size=6))
def test_digest_ignores_key_order(arguments: dict[str, Any]) -> None:
    reordered = dict(reversed(list(arguments.items())))
    assert ToolCall("t", arguments).digest() == ToolCall("t", reordered).digest()
    assert json.loads(ToolCall("t", arguments).canonical())["arguments"] == arguments


def _nested(depth: int) -> dict[str, Any]:
    value: Any = "leaf"
    for _ in range(depth):
        value = [value]
    return {"x": value}


def test_json_nested_to_the_limit_is_accepted() -> None:
    assert ToolCall("t", _nested(63)).arguments == _nested(63)


def test_digest_changes_with_any_argument() -> None:
    a = ToolCall("pay", {"amount": 10, "to": "bob"})
    assert a.digest() != ToolCall("pay", {"amount": 11, "to": "bob"}).digest()
    assert a.digest() != ToolCall("pay2", {"amount": 10, "to": "bob"}).digest()
    assert a.digest() == ToolCall("pay", {"to": "bob", "amount": 10}, id="other-id").digest()


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ({"x": float("nan")}, "nan is not allowed"),
        ({"x": [1, float("inf")]}, "inf is not allowed"),
        ({"x": {1: "a"}}, "key 1 is not a string"),
        ({"x": object()}, "is not a JSON value"),
        # each place a bad value can sit, named: a value, a key, an item, a nested item
        ({"x": "a\udc80"}, r"t\.arguments\.x: invalid Unicode"),
        ({"a\udc80": 1}, r"t\.arguments \(a key\): invalid Unicode"),
        ({"x": ["ok", "b\udc80"]}, r"t\.arguments\.x\[1\]: invalid Unicode"),
        ({"x": [{"y": [1, None, "c\udc80"]}]}, r"t\.arguments\.x\[0\]\.y\[2\]: invalid"),
        ({"x": [[True, 2.5, float("-inf")]]}, r"t\.arguments\.x\[0\]\[2\]: -inf"),
        ({"x": ("tuple", {2: 0})}, r"t\.arguments\.x\[1\]: object key 2"),
        (_nested(64), "nested more than 64 levels deep"),
    ],
)
def test_canonical_json_refuses(value: dict[str, Any], message: str) -> None:
    with pytest.raises(InvalidInput, match=message):
        ToolCall("t", value)
    with pytest.raises(InvalidInput):
        canonical_json(value)


def test_from_openai_refuses_malformed_arguments() -> None:
    good = ToolCall.from_openai({"id": "c1", "function": {"name": "t", "arguments": '{"a": 1}'}})
    assert good == ToolCall("t", {"a": 1}, "c1")
    for bad in ('{"a": ', "[1, 2]", '{"a": NaN}', "nope"):
        with pytest.raises(InvalidInput):
            ToolCall.from_openai({"id": "c", "function": {"name": "t", "arguments": bad}})


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"kind": "reject"}, "needs a reason"),
        ({"kind": "reject", "reason": "  "}, "needs a reason"),
        ({"kind": "edit"}, "needs new arguments"),
        ({"kind": "approve_always"}, "needs a scope"),
        ({"kind": "yolo"}, "unknown kind"),
        ({"kind": "respond", "result": float("nan")}, "nan"),
    ],
)
def test_bad_decisions_are_refused(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(InvalidInput, match=message):
        Decision(**kwargs)


def test_documents_round_trip_and_newer_versions_are_refused() -> None:
    verdict = Verdict("ask", "high", "rule", ("why",), "external", "send(to=bob)")
    request = Request(
        "req_1",
        ToolCall("send", {"to": "bob"}, "c1"),
        verdict,
        preview="p",
        decision=Decision("edit", arguments={"to": "carol"}, actor="alice"),
    )
    assert Request.from_json(json.loads(json.dumps(request.to_json()))) == request
    grant = Grant("send(to=bob)", "project", id="g1", created_at=1.0)
    assert Grant.from_json(grant.to_json()) == grant
    for doc, cls in ((request.to_json(), Request), (grant.to_json(), Grant)):
        newer = {**doc, "v": 99}
        with pytest.raises(SchemaVersionError, match="version 99"):
            cls.from_json(newer)  # type: ignore[attr-defined]


def test_tool_decorator_derives_schema_and_validates() -> None:
    @tool(tier="external", kind="other", amount_arg="amount")
    def refund(order: str, amount: float, note: str = "") -> str:
        """Refund an order.

        More text that is not the description."""
        return order

    spec = refund.__signoff_spec__  # type: ignore[attr-defined]
    assert spec.description == "Refund an order."
    assert spec.schema["required"] == ["order", "amount"]
    assert spec.validate({"order": "A1", "amount": 3}) == {"order": "A1", "amount": 3.0}
    with pytest.raises(InvalidInput, match="amount"):
        spec.validate({"order": "A1", "amount": "lots"})
    with pytest.raises(InvalidInput, match="extra"):
        spec.validate({"order": "A1", "amount": 1, "extra": True})
    with pytest.raises(InvalidInput, match="not a parameter"):
        tool(tier="read", path_arg="nope")(lambda path: path)


def test_builtins_and_aliases_are_declared() -> None:
    registry = Registry()
    for name in (
        "read_file",
        "list_dir",
        "search_code",
        "write_file",
        "edit_file",
        "create_project",
        "delete_file",
        "execute_command",
        "fetch_url",
        "send_email",
        "ask_human",
    ):
        assert name in BUILTIN_SPECS and registry.known(name)
    assert registry.get("Bash").kind == "shell" and registry.get("Bash").command_arg == "command"
    assert registry.get("Write").path_arg == "file_path"
    assert registry.get("Edit").tier == "write"
    assert set(ALIASES) >= {"Bash", "Read", "Write", "Edit", "WebFetch"}
    unknown = registry.get("launch_rocket")
    assert unknown.tier == "unknown"
