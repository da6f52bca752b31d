"""The model side of the agent loop: the real `openai` client over HTTP against the FAKE
server, the scripted model, and the in-process session loop through a real gate."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from signoff.exceptions import ConfigurationError
from signoff.gate import Gate
from signoff.llm import (
    OpenAIModel,
    ScriptedModel,
    assistant_message,
    run_session,
    tool_call_from_message,
)
from signoff.llm.fake_server import FakeError, FakeOpenAIServer, fake_call, scripted_reply
from signoff.models import Decision, ToolCall
from signoff.policy import Policy
from signoff.testing import ScriptedChannel

USER = [{"role": "user", "content": "go"}]
READ_SPEC = [
    {
        "type": "function",
        "function": {
            "name": "read_file",
            "description": "read a file",
            "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
        },
    }
]


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "SIGNOFF_MODEL"):
        monkeypatch.delenv(name, raising=False)


def model_for(server: FakeOpenAIServer, stream: bool) -> OpenAIModel:
    return OpenAIModel("fake-model", server.base_url, "sk-fake", stream=stream, max_retries=0)


class Recorder:
    """Tool implementations that record what actually ran."""

    def __init__(self) -> None:
        self.ran: list[tuple[str, dict[str, Any]]] = []

    def read_file(self, path: str) -> str:
        self.ran.append(("read_file", {"path": path}))
        return f"contents of {path}"

    def execute_command(self, command: str) -> str:
        self.ran.append(("execute_command", {"command": command}))
        return "exit 0"

    def mapping(self) -> dict[str, Any]:
        return {"read_file": self.read_file, "execute_command": self.execute_command}


def make_gate(tmp_path: Path, *answers: Decision) -> tuple[Gate, ScriptedChannel]:
    channel = ScriptedChannel(answers)
    return Gate(Policy(workspace=tmp_path), channel), channel


# ------------------------------------------------------------------ OpenAIModel over HTTP


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])
def test_reply_with_several_tool_calls(stream: bool) -> None:
    reply = scripted_reply(
        "Two reads.",
        fake_call("read_file", {"path": "a.txt"}, "call_a"),
        fake_call("read_file", {"path": "docs/中文.md"}, "call_b"),
    )
    with FakeOpenAIServer([reply], chunk_size=2) as server:
        message = model_for(server, stream).complete(USER, READ_SPEC)
        sent = server.requests[0]
    assert message == {
        "role": "assistant",
        "content": "Two reads.",
        "tool_calls": [
            {
                "id": "call_a",
                "type": "function",
                "function": {"name": "read_file", "arguments": '{"path": "a.txt"}'},
            },
            {
                "id": "call_b",
                "type": "function",
                "function": {
                    "name": "read_file",
                    "arguments": json.dumps({"path": "docs/中文.md"}),
                },
            },
        ],
    }
    assert sent["model"] == "fake-model" and sent["messages"] == USER
    assert sent["tools"] == READ_SPEC
    assert bool(sent.get("stream")) is stream


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])
def test_malformed_arguments_are_kept_exactly(stream: bool) -> None:
    broken = '{"path": "a.txt", '
    with FakeOpenAIServer([scripted_reply(None, fake_call("read_file", broken, "c1"))]) as server:
        message = model_for(server, stream).complete(USER, READ_SPEC)
    assert message["tool_calls"][0]["function"]["arguments"] == broken
    assert isinstance(tool_call_from_message(message["tool_calls"][0]), str)


def test_text_streams_through_on_text_as_it_arrives() -> None:
    text = "Hello, this answer arrives in many small pieces."
    with FakeOpenAIServer([scripted_reply(text)], chunk_size=5) as server:
        pieces: list[str] = []
        message = model_for(server, True).complete(USER, [], on_text=pieces.append)
    assert "".join(pieces) == text and len(pieces) >= len(text) // 5
    assert message == {"role": "assistant", "content": text}
    assert "tool_calls" not in message


def test_non_streaming_text_reaches_on_text_once() -> None:
    with FakeOpenAIServer([scripted_reply("whole")]) as server:
        pieces: list[str] = []
        model_for(server, False).complete(USER, [], on_text=pieces.append)
    assert pieces == ["whole"]


def test_unreachable_endpoint_is_a_friendly_error() -> None:
    with FakeOpenAIServer() as server:
        url = server.base_url  # a port that was just free and now is closed again
    model = OpenAIModel("m", url, "sk", max_retries=0, timeout=5)
    with pytest.raises(ConfigurationError, match="cannot reach the model endpoint") as info:
        model.complete(USER, [])
    assert url in str(info.value) and "--base-url" in str(info.value)
    with pytest.raises(ConfigurationError, match="cannot reach"):
        model.check()


def test_auth_failure_and_server_error_are_friendly() -> None:
    with FakeOpenAIServer([FakeError(400, "context too long")], api_key="sk-right") as server:
        wrong = OpenAIModel("m", server.base_url, "sk-wrong", max_retries=0)
        with pytest.raises(ConfigurationError, match=r"refused the API key.*OPENAI_API_KEY"):
            wrong.complete(USER, [])
        with pytest.raises(ConfigurationError, match="refused the API key"):
            wrong.check()
        right = OpenAIModel(server.model, server.base_url, "sk-right", max_retries=0)
        right.check()
        with pytest.raises(ConfigurationError, match="HTTP 400: context too long"):
            right.complete(USER, [])


def test_configuration_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ConfigurationError, match=r"no model configured.*SIGNOFF_MODEL"):
        OpenAIModel()
    with pytest.raises(ConfigurationError, match=r"no API key.*OPENAI_API_KEY"):
        OpenAIModel("gpt-x")  # no key and no local endpoint
    with FakeOpenAIServer([scripted_reply("from env")]) as server:
        monkeypatch.setenv("SIGNOFF_MODEL", "env-model")
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        model = OpenAIModel(max_retries=0)  # a local endpoint needs no key
        assert model.complete(USER, [])["content"] == "from env"
        assert server.requests[0]["model"] == "env-model"
        assert server.headers[0]["authorization"] == "Bearer not-needed"


# ------------------------------------------------------------------ helpers


def test_tool_call_from_message() -> None:
    good = fake_call("read_file", {"path": "x"}, "id1")
    assert tool_call_from_message(good) == ToolCall("read_file", {"path": "x"}, "id1")
    for arguments in ("{not json", "[1, 2]", '{"n": NaN}'):
        text = tool_call_from_message(fake_call("read_file", arguments, "id2"))
        assert isinstance(text, str) and "not run" in text and "read_file" in text
    assert isinstance(tool_call_from_message({"id": "x", "function": {"arguments": "{}"}}), str)


def test_assistant_message_shape() -> None:
    assert assistant_message(None) == {"role": "assistant", "content": ""}
    assert "tool_calls" not in assistant_message("hi")


def test_scripted_model_is_deterministic_and_records() -> None:
    model = ScriptedModel([scripted_reply("one", fake_call("read_file", {"path": "a"}))])
    pieces: list[str] = []
    reply = model.complete(USER, READ_SPEC, on_text=pieces.append)
    assert pieces == ["one"] and model.calls == [USER] and model.tools_seen == [READ_SPEC]
    assert reply["tool_calls"][0]["function"]["arguments"] == '{"path": "a"}'
    assert "scripted" in model.label
    with pytest.raises(ConfigurationError, match="no reply left"):
        model.complete(USER, [])


def test_history_driven_script_reads_the_transcript() -> None:
    def next_reply(messages: list[dict[str, Any]]) -> dict[str, Any]:
        last = messages[-1]
        if last["role"] == "tool":
            return scripted_reply(f"the tool said: {last['content']}")
        return scripted_reply(None, fake_call("read_file", {"path": "notes.txt"}, "c1"))

    model = ScriptedModel.history_driven(next_reply)
    gate = Gate(Policy(workspace="."), ScriptedChannel())
    tools = Recorder()
    out = run_session(model, list(USER), gate=gate, tools=tools.mapping(), tool_specs=READ_SPEC)
    assert out[-1]["content"] == "the tool said: contents of notes.txt"


# ------------------------------------------------------------------ run_session


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])
def test_session_over_http_runs_calls_in_order_and_refuses_malformed(
    tmp_path: Path, stream: bool
) -> None:
    replies = [
        scripted_reply(
            "Looking around.",
            fake_call("read_file", {"path": "a.txt"}, "c_a"),
            fake_call("read_file", '{"path": "b.txt"', "c_bad"),  # malformed: never run
            fake_call("no_such_tool", {}, "c_unknown"),
            fake_call("execute_command", {"command": "rm -rf build"}, "c_rm"),
            fake_call("read_file", {"path": "c.txt"}, "c_c"),
        ),
        scripted_reply("All done."),
    ]
    gate, channel = make_gate(tmp_path, Decision("approve", actor="tester"))
    tools = Recorder()
    pieces: list[str] = []
    with FakeOpenAIServer(replies) as server:
        out = run_session(
            model_for(server, stream),
            list(USER),
            gate=gate,
            tools=tools.mapping(),
            tool_specs=READ_SPEC,
            on_text=pieces.append,
        )
        second = server.messages(1)
    assert tools.ran == [
        ("read_file", {"path": "a.txt"}),
        ("execute_command", {"command": "rm -rf build"}),
        ("read_file", {"path": "c.txt"}),
    ]
    assert [p.request.call.name for p in channel.prompts] == ["execute_command"]
    results = [m for m in out if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in results] == ["c_a", "c_bad", "c_unknown", "c_rm", "c_c"]
    assert results[0]["content"] == "contents of a.txt"
    assert "not valid JSON" in results[1]["content"] and "not run" in results[1]["content"]
    assert "no tool named 'no_such_tool'" in results[2]["content"]
    assert results[3]["content"] == "exit 0"
    assert out[-1] == {"role": "assistant", "content": "All done."}
    assert second == out[:-1]  # the model saw the whole transcript, results included
    assert "".join(pieces) == "Looking around.All done."


def test_rejection_reason_goes_back_to_the_model(tmp_path: Path) -> None:
    model = ScriptedModel(
        [
            scripted_reply(None, fake_call("execute_command", {"command": "rm -rf build"}, "c1")),
            scripted_reply("Understood, I will keep the build."),
        ]
    )
    gate, _ = make_gate(tmp_path, Decision("reject", reason="keep build/ for now"))
    tools = Recorder()
    out = run_session(model, list(USER), gate=gate, tools=tools.mapping(), tool_specs=[])
    assert tools.ran == []
    assert "keep build/ for now" in out[-2]["content"]
    assert model.calls[1][-1]["tool_call_id"] == "c1"


def test_denial_limit_stops_the_session(tmp_path: Path) -> None:
    calls = [fake_call("execute_command", {"command": "rm -rf /"}, f"c{i}") for i in range(5)]
    model = ScriptedModel([scripted_reply(None, *calls), scripted_reply("never asked")])
    gate, channel = make_gate(tmp_path)
    tools = Recorder()
    out = run_session(model, list(USER), gate=gate, tools=tools.mapping(), tool_specs=[])
    assert tools.ran == [] and channel.prompts == []
    assert gate.stopped and "3 refusals in a row" in gate.stopped
    results = [m for m in out if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in results] == [f"c{i}" for i in range(5)]
    assert all("denied by policy" in m["content"] for m in results[:3])
    assert all("session was stopped" in m["content"] for m in results[3:])
    assert len(model.calls) == 1  # the model is not called again


def test_interrupt_mid_turn_keeps_the_transcript_valid(tmp_path: Path) -> None:
    def boom(path: str) -> str:
        raise KeyboardInterrupt

    calls = [fake_call("read_file", {"path": p}, f"c{i}") for i, p in enumerate("abc")]
    model = ScriptedModel([scripted_reply(None, *calls)])
    gate, _ = make_gate(tmp_path)
    messages = list(USER)
    with pytest.raises(KeyboardInterrupt):
        run_session(model, messages, gate=gate, tools={"read_file": boom}, tool_specs=[])
    results = [m for m in messages if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in results] == ["c0", "c1", "c2"]
    assert all("interrupted" in m["content"] for m in results)


def test_max_turns_bounds_the_loop(tmp_path: Path) -> None:
    model = ScriptedModel.history_driven(
        lambda _: scripted_reply(None, fake_call("read_file", {"path": "x"}))
    )
    gate, _ = make_gate(tmp_path)
    out = run_session(
        model, list(USER), gate=gate, tools=Recorder().mapping(), tool_specs=[], max_turns=3
    )
    assert len(model.calls) == 3 and out[-1]["role"] == "tool"


def test_calls_without_ids_get_one(tmp_path: Path) -> None:
    class Bare:
        def complete(self, messages: Any, tools: Any, *, on_text: Any = None) -> dict[str, Any]:
            if messages[-1]["role"] == "tool":
                return {"role": "assistant", "content": "ok"}
            call = {"type": "function", "function": {"name": "read_file", "arguments": "{}"}}
            return {"role": "assistant", "content": None, "tool_calls": [call]}

    gate, _ = make_gate(tmp_path)
    out = run_session(Bare(), list(USER), gate=gate, tools=Recorder().mapping(), tool_specs=[])
    assert out[2]["tool_call_id"] == out[1]["tool_calls"][0]["id"] != ""
