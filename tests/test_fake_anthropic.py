"""The FAKE Anthropic Messages API server: its wire format (streamed and not), its script,
and its record of what it received. The real Claude Code client is driven against it in
tests/clients/."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from signoff.llm.fake_anthropic import (
    DONE_TEXT,
    FakeAnthropicServer,
    FakeError,
    Seen,
    Text,
    ToolUse,
)

TOOLS = [{"name": "Bash", "input_schema": {"type": "object"}}]


def body(*messages: dict[str, Any], stream: bool = False, tools: Any = TOOLS) -> dict[str, Any]:
    doc: dict[str, Any] = {"model": "m", "max_tokens": 10, "messages": list(messages)}
    if tools:
        doc["tools"] = tools
    if stream:
        doc["stream"] = True
    return doc


USER = {"role": "user", "content": "go"}


def post(api: FakeAnthropicServer, doc: dict[str, Any], path: str = "/v1/messages") -> Any:
    return httpx.post(api.base_url + path, json=doc, headers={"x-api-key": "k"}, timeout=10)


def events(api: FakeAnthropicServer, doc: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """Parse the server-sent events of a streamed answer."""
    response = post(api, doc)
    assert response.headers["content-type"] == "text/event-stream"
    found = []
    for frame in response.text.split("\n\n"):
        if not frame.strip():
            continue
        name_line, data_line = frame.split("\n")
        name = name_line.removeprefix("event: ")
        data = json.loads(data_line.removeprefix("data: "))
        assert data["type"] == name  # the event name repeats the payload's type
        found.append((name, data))
    return found


def test_a_streamed_tool_call_is_split_into_input_json_deltas() -> None:
    call = ToolUse("Bash", {"command": "touch made-by-claude"}, id="toolu_1")
    with FakeAnthropicServer([[Text("On it."), call]], chunk_size=5) as api:
        got = events(api, body(USER, stream=True))
    names = [name for name, _ in got]
    assert names[:2] == ["message_start", "ping"]
    assert names[-2:] == ["message_delta", "message_stop"]
    starts = [data["content_block"] for name, data in got if name == "content_block_start"]
    assert starts == [
        {"type": "text", "text": ""},
        {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {}},
    ]
    deltas = [data["delta"] for name, data in got if name == "content_block_delta"]
    text = "".join(d["text"] for d in deltas if d["type"] == "text_delta")
    partial = [d["partial_json"] for d in deltas if d["type"] == "input_json_delta"]
    assert text == "On it."
    assert len(partial) > 1 and json.loads("".join(partial)) == {"command": "touch made-by-claude"}
    assert names.count("content_block_stop") == 2
    assert got[-2][1]["delta"]["stop_reason"] == "tool_use"


def test_a_text_answer_ends_the_turn_streamed_or_not() -> None:
    with FakeAnthropicServer([Text("hello")]) as api:
        got = events(api, body(USER, stream=True))
        whole = post(api, body(USER)).json()
    assert got[-2][1]["delta"]["stop_reason"] == "end_turn"
    assert whole["content"] == [{"type": "text", "text": "hello"}]
    assert whole["stop_reason"] == "end_turn"
    assert whole["role"] == "assistant" and whole["type"] == "message"


def test_the_step_served_follows_the_conversation_and_sees_the_last_tool_result() -> None:
    seen: list[Seen] = []

    def second(view: Seen) -> Text:
        seen.append(view)
        assert view.last_tool_result is not None
        return Text(f"tool said {view.last_tool_result.text}")

    script = [ToolUse("Bash", {"command": "ls"}, id="toolu_a"), second]
    with FakeAnthropicServer(script) as api:
        first = post(api, body(USER)).json()
        retried = post(api, body(USER)).json()  # a retry gets the same answer
        assert first["content"] == retried["content"]
        assert first["stop_reason"] == "tool_use"
        result = {
            "type": "tool_result",
            "tool_use_id": "toolu_a",
            "is_error": True,
            "content": [{"type": "text", "text": "denied by rule Bash(rm:*)"}],
        }
        answer = {"role": "assistant", "content": first["content"]}
        reply = post(api, body(USER, answer, {"role": "user", "content": [result]})).json()
        after = post(
            api,
            body(
                USER,
                answer,
                {"role": "user", "content": "more"},
                answer,
                {"role": "user", "content": "again"},
            ),
        ).json()
    assert reply["content"] == [{"type": "text", "text": "tool said denied by rule Bash(rm:*)"}]
    assert seen[0].turn == 1 and seen[0].last_tool_result is not None
    assert seen[0].last_tool_result.is_error is True
    assert after["content"] == [{"type": "text", "text": DONE_TEXT}]
    assert [r.tool_use_id for r in api.tool_results()] == ["toolu_a"]
    assert len(api.requests) == 4


def test_requests_without_tools_are_side_queries_and_keep_the_script() -> None:
    with FakeAnthropicServer([Text("agent")], side=lambda b: Text("side")) as api:
        side = post(api, body(USER, tools=None)).json()
        agent = post(api, body(USER)).json()
    assert side["content"][0]["text"] == "side"
    assert agent["content"][0]["text"] == "agent"
    assert len(api.side_requests) == 1 and len(api.requests) == 1


def test_other_endpoints_a_client_calls_at_start() -> None:
    with FakeAnthropicServer() as api:
        counted = post(api, body(USER), "/v1/messages/count_tokens")
        models = httpx.get(api.base_url + "/v1/models", timeout=10)
        one = httpx.get(api.base_url + "/v1/models/claude-x", timeout=10)
        missing = httpx.post(api.base_url + "/v1/files", json={}, timeout=10)
        hello = httpx.head(api.base_url + "/api/hello", timeout=10)
        head_missing = httpx.head(api.base_url + "/api/other", timeout=10)
    assert counted.status_code == 200 and counted.json()["input_tokens"] > 0
    assert models.json()["data"][0]["id"] == api.model
    assert one.json()["id"] == "claude-x"
    assert missing.status_code == 404
    assert missing.json()["error"]["type"] == "not_found_error"
    assert hello.status_code == 200 and head_missing.status_code == 404
    assert [f"{r.method} {r.path}" for r in api.unknown] == ["POST /v1/files", "HEAD /api/other"]
    assert api.paths()[-3:] == ["POST /v1/files", "HEAD /api/hello", "HEAD /api/other"]
    assert api.requests == []  # counting tokens is not an agent turn


def test_scripted_errors_bad_bodies_and_keys() -> None:
    script = [FakeError(529, "overloaded", "overloaded_error")]
    with FakeAnthropicServer(script, api_key="k") as api:
        overloaded = post(api, body(USER))
        not_json = httpx.post(
            api.base_url + "/v1/messages", content=b"{", timeout=10, headers={"x-api-key": "k"}
        )
        wrong_key = httpx.post(
            api.base_url + "/v1/messages",
            json=body(USER),
            timeout=10,
            headers={"x-api-key": "nope"},
        )
    assert overloaded.status_code == 529
    assert overloaded.json() == {
        "type": "error",
        "error": {"type": "overloaded_error", "message": "overloaded"},
    }
    assert not_json.status_code == 400
    assert wrong_key.status_code == 401
    assert wrong_key.json()["error"]["type"] == "authentication_error"


def test_a_string_input_is_streamed_verbatim() -> None:
    with FakeAnthropicServer([ToolUse("Bash", '{"command": "ls"')]) as api:
        got = events(api, body(USER, stream=True))
    partial = "".join(
        d["delta"]["partial_json"] for n, d in got if n == "content_block_delta"
    )  # malformed on purpose: a test can see how a client copes
    assert partial == '{"command": "ls"'


def test_the_server_must_be_running_for_its_address() -> None:
    with pytest.raises(RuntimeError, match="not running"):
        _ = FakeAnthropicServer().base_url
