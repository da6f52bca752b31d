"""What a request's page says about its run: which tool result is this call's (call ids
repeat across turns), and the store option printed in a pasteable hint."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from signoff.models import Request, ToolCall, Verdict
from signoff.web.runview import result_index, steps_after, store_flag


def turn(call_id: str, args: dict[str, Any], result: str) -> list[dict[str, Any]]:
    call = {"id": call_id, "function": {"name": "send", "arguments": json.dumps(args)}}
    return [
        {"role": "assistant", "content": "sending", "tool_calls": [call]},
        {"role": "tool", "tool_call_id": call_id, "content": result},
    ]


def request(args: dict[str, Any], **metadata: Any) -> Request:
    verdict = Verdict("ask", "high", None, ("external",), "external")
    return Request("req_1", ToolCall("send", args, "c1"), verdict, metadata=metadata)


MESSAGES = [
    {"role": "user", "content": "send both"},
    *turn("c1", {"to": "carol"}, "sent to carol"),
    *turn("c1", {"to": "dave"}, "sent to dave"),
    {"role": "assistant", "content": "Both sent."},
]


@pytest.mark.parametrize(
    ("args", "metadata", "index"),
    [
        ({"to": "carol"}, {}, 2),  # the first turn's result, though "c1" comes twice
        ({"to": "dave"}, {}, 4),
        # an edited call: matched by the arguments the model wrote
        ({"to": "erin"}, {"original_call": {"arguments": {"to": "dave"}}}, 4),
        ({"to": "nobody"}, {}, 4),  # no match: the last result of that id
    ],
)
def test_result_index_finds_this_calls_result(
    args: dict[str, Any], metadata: dict[str, Any], index: int
) -> None:
    assert result_index(request(args, **metadata), MESSAGES) == index


def test_steps_after_are_what_happened_next() -> None:
    steps = steps_after(2, MESSAGES)
    assert [(s.role, s.text, s.calls) for s in steps] == [
        ("assistant", "sending", ("send",)),
        ("tool", "sent to dave", ()),
        ("assistant", "Both sent.", ()),
    ]
    assert result_index(request({"to": "carol"}), MESSAGES[:2]) is None


@pytest.mark.parametrize(
    ("url", "flag"),
    [
        ("{ws}/.signoff/signoff.db", "--workspace {ws}"),
        ("/data/other store.db", "--db '/data/other store.db'"),
        ("postgresql://app:s3cret@db:5432/signoff", "--db 'postgresql://app:…@db:5432/signoff'"),
        ("postgresql://app@db/signoff", "--db postgresql://app@db/signoff"),
    ],
)
def test_store_flag_names_the_store_and_never_a_password(
    tmp_path: Path, url: str, flag: str
) -> None:
    ws = tmp_path / "ws"
    assert store_flag(url.format(ws=ws), ws) == flag.format(ws=ws)
