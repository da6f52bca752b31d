"""The FAKE OpenAI-compatible server: wire format checked with plain HTTP and the real client."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import openai
import pytest

from signoff.llm.fake_server import (
    BANNER,
    FAKE_MODEL,
    FakeError,
    FakeOpenAIServer,
    fake_call,
    scripted_reply,
)


def post(url: str, body: dict[str, Any], key: str | None = None) -> tuple[int, bytes]:
    request = urllib.request.Request(
        url,
        data=json.dumps(body).encode(),
        headers={
            "Content-Type": "application/json",
            **({"Authorization": f"Bearer {key}"} if key else {}),
        },
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def sse_events(raw: bytes) -> list[str]:
    return [
        line[len("data: ") :] for line in raw.decode().splitlines() if line.startswith("data: ")
    ]


TWO_CALLS = scripted_reply(
    "Reading both files.",
    fake_call("read_file", {"path": "a.txt"}, "call_a"),
    fake_call("read_file", {"path": "b.txt"}, "call_b"),
)


def test_fake_is_labelled_fake() -> None:
    import signoff.llm.fake_server as module

    assert "FAKE" in BANNER and "FAKE" in (module.__doc__ or "").splitlines()[0]
    assert "fake" in FAKE_MODEL


def test_streaming_wire_format_splits_text_and_arguments() -> None:
    with FakeOpenAIServer([TWO_CALLS], chunk_size=3) as server:
        status, raw = post(
            f"{server.base_url}/chat/completions",
            {"model": "m", "messages": [{"role": "user", "content": "hi"}], "stream": True},
        )
    assert status == 200
    events = sse_events(raw)
    assert events[-1] == "[DONE]"
    chunks = [json.loads(e) for e in events[:-1]]
    assert all(c["object"] == "chat.completion.chunk" for c in chunks)
    deltas = [c["choices"][0]["delta"] for c in chunks]
    text = "".join(d.get("content") or "" for d in deltas)
    assert text == "Reading both files."
    assert sum(1 for d in deltas if d.get("content")) > 3  # really split
    arguments: dict[int, str] = {}
    ids: dict[int, str] = {}
    for delta in deltas:
        for part in delta.get("tool_calls", []):
            arguments[part["index"]] = arguments.get(part["index"], "") + part["function"].get(
                "arguments", ""
            )
            if "id" in part:
                ids[part["index"]] = part["id"]
    assert ids == {0: "call_a", 1: "call_b"}
    assert [json.loads(arguments[i]) for i in (0, 1)] == [{"path": "a.txt"}, {"path": "b.txt"}]
    # arguments of one call arrive across several chunks
    assert sum(1 for d in deltas for p in d.get("tool_calls", []) if p["index"] == 0) > 2
    assert chunks[-1]["choices"][0]["finish_reason"] == "tool_calls"


def test_non_streaming_wire_format_and_recording() -> None:
    with FakeOpenAIServer([scripted_reply("plain answer")]) as server:
        body = {"model": "m", "messages": [{"role": "user", "content": "question"}]}
        status, raw = post(f"{server.base_url}/chat/completions", body)
        assert server.requests == [body]
        assert server.messages() == body["messages"]
    doc = json.loads(raw)
    assert status == 200 and doc["object"] == "chat.completion"
    assert doc["choices"][0]["message"] == {"role": "assistant", "content": "plain answer"}
    assert doc["choices"][0]["finish_reason"] == "stop"


def test_malformed_arguments_are_sent_verbatim() -> None:
    broken = '{"path": "a.txt"'
    with FakeOpenAIServer([scripted_reply(None, fake_call("read_file", broken))]) as server:
        _, raw = post(f"{server.base_url}/chat/completions", {"model": "m", "messages": []})
    call = json.loads(raw)["choices"][0]["message"]["tool_calls"][0]
    assert call["function"]["arguments"] == broken


def test_scripted_errors_auth_and_exhaustion() -> None:
    with FakeOpenAIServer([FakeError(429, "slow down")], api_key="sk-right") as server:
        url = f"{server.base_url}/chat/completions"
        status, raw = post(url, {"messages": []}, key="sk-wrong")
        assert status == 401 and "invalid API key" in raw.decode()
        status, raw = post(url, {"messages": []}, key="sk-right")
        assert status == 429 and json.loads(raw)["error"]["message"] == "slow down"
        status, raw = post(url, {"messages": []}, key="sk-right")
        assert status == 500 and "no scripted reply left" in raw.decode()


def test_function_script_sees_the_request() -> None:
    def reply(body: dict[str, Any]) -> dict[str, Any]:
        return scripted_reply(f"you sent {len(body['messages'])} messages")

    with FakeOpenAIServer(reply) as server:
        client = openai.OpenAI(base_url=server.base_url, api_key="fake", max_retries=0)
        done = client.chat.completions.create(
            model="m", messages=[{"role": "user", "content": "a"}, {"role": "user", "content": "b"}]
        )
    assert done.choices[0].message.content == "you sent 2 messages"


def test_models_endpoint_with_the_real_client() -> None:
    with FakeOpenAIServer() as server:
        client = openai.OpenAI(base_url=server.base_url, api_key="fake", max_retries=0)
        assert [m.id for m in client.models.list()] == [FAKE_MODEL]


def test_real_client_streams_tool_calls() -> None:
    with FakeOpenAIServer([TWO_CALLS]) as server:
        client = openai.OpenAI(base_url=server.base_url, api_key="fake", max_retries=0)
        stream = client.chat.completions.create(model="m", messages=[], stream=True)
        chunks = list(stream)
    assert len(chunks) > 10
    names = [
        part.function.name
        for chunk in chunks
        for part in chunk.choices[0].delta.tool_calls or ()
        if part.function and part.function.name
    ]
    assert names == ["read_file", "read_file"]


def test_not_running_has_no_url() -> None:
    server = FakeOpenAIServer()
    with pytest.raises(RuntimeError):
        _ = server.base_url


def test_command_line_serves_a_script_file(tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps([scripted_reply("from the file")]))
    proc = subprocess.Popen(
        [sys.executable, "-m", "signoff.llm.fake_server", str(script)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        banner = proc.stdout.readline()
        assert banner.startswith(BANNER)
        url = banner.split(" at ")[-1].strip()
        client = openai.OpenAI(base_url=url, api_key="fake", max_retries=0)
        done = client.chat.completions.create(model="m", messages=[])
        assert done.choices[0].message.content == "from the file"
    finally:
        proc.terminate()
        proc.wait(timeout=10)
