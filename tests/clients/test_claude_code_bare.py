"""The real Claude Code client against the FAKE Anthropic API, with no hooks: the fake's
scripted tool calls really run, and what the client sends back reaches the fake."""

from __future__ import annotations

from claude_code_harness import VERSION, Claude

from signoff.llm.fake_anthropic import DONE_TEXT, FakeAnthropicServer, Seen, Text, ToolUse


def echo_last_result(seen: Seen) -> Text:
    result = seen.last_tool_result
    return Text(f"the tool said: {result.text if result else '(nothing)'}")


def test_a_scripted_bash_call_really_runs(claude: Claude) -> None:
    script = [
        ToolUse("Bash", {"command": "touch made-by-claude", "description": "make"}),
        echo_last_result,
    ]
    with FakeAnthropicServer(script) as api:
        run = claude.run(api, "make a file", "--allowedTools", "Bash")
    assert run.returncode == 0, run.stderr
    assert (claude.project / "made-by-claude").is_file()
    assert run.result["is_error"] is False
    assert run.result["result"].startswith("the tool said:")
    assert run.result["permission_denials"] == []
    # one agent turn per model answer; the second carries the tool's result, not an error
    assert len(api.requests) == 2
    assert api.paths() == ["POST /v1/messages", "POST /v1/messages"]  # streamed, no side calls
    assert all(body["stream"] is True for body in api.requests)
    (result,) = api.tool_results()
    assert result.is_error is False
    assert api.unknown == []
    assert {r.headers.get("x-api-key") for r in api.log} == {"sk-ant-fake-key-for-tests"}
    assert all(f"claude-cli/{VERSION}" in r.headers.get("user-agent", "") for r in api.log)


def test_without_permission_the_client_refuses_and_says_why(claude: Claude) -> None:
    # Headless and with no allow rule, Claude Code's own permission check refuses a write:
    # the refusal comes back to the model as an error tool result, and no file appears.
    script = [ToolUse("Bash", {"command": "touch made-by-claude"}), echo_last_result]
    with FakeAnthropicServer(script) as api:
        run = claude.run(api, "make a file")
    assert run.returncode == 0, run.stderr
    assert not (claude.project / "made-by-claude").exists()
    (result,) = api.tool_results()
    assert result.is_error is True
    assert "needs approval" in result.text
    assert [d["tool_name"] for d in run.result["permission_denials"]] == ["Bash"]


def test_the_script_ends_with_a_final_text(claude: Claude) -> None:
    with FakeAnthropicServer([]) as api:
        run = claude.run(api, "say something")
    assert run.returncode == 0, run.stderr
    assert run.result["result"] == DONE_TEXT
    assert run.result["stop_reason"] == "end_turn"


def test_with_nonessential_traffic_the_client_first_checks_the_api(claude: Claude) -> None:
    with FakeAnthropicServer([Text("hello")]) as api:
        run = claude.run(api, "hi", env={"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": ""})
    assert run.returncode == 0, run.stderr
    assert run.result["result"] == "hello"
    assert api.paths() == ["HEAD /api/hello", "POST /v1/messages"]
    assert api.unknown == []


# Tools the client offers that signoff leaves undeclared on purpose (so they ask).
ASKING = {"Workflow", "SendMessage"}


def test_every_tool_the_client_offers_is_declared_to_signoff(claude: Claude) -> None:
    # A new client release that adds a tool shows up here: an undeclared tool asks, which
    # is safe but puts a question to a person every time the model uses it.
    from signoff.adapters.claude_code import CLIENT

    with FakeAnthropicServer([Text("hello")]) as api:
        run = claude.run(api, "hi")
    assert run.returncode == 0, run.stderr
    offered = {tool["name"] for body in api.requests for tool in body["tools"]}
    assert {"Bash", "Read", "Write", "Edit", "Agent"} <= offered
    assert offered - set(CLIENT.specs) <= ASKING, sorted(offered - set(CLIENT.specs) - ASKING)
