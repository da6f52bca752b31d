"""Durable runs: pause, decide, resume in a fresh runner; the model never re-decides."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from signoff.approvals import decide
from signoff.exceptions import ConflictError, InvalidInput
from signoff.llm import ScriptedModel
from signoff.models import Decision
from signoff.policy import Policy
from signoff.runs.agent import Agent, parse_tool_calls
from signoff.runs.runner import Runner
from signoff.settings import Settings
from signoff.store import Store, open_store
from signoff.tools import Registry, ToolSpec

ARGS_BAD = '{"to": "bob", '  # malformed JSON, as a model may send


class Tools:
    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []

    def mapping(self) -> dict[str, Any]:
        def lookup(key: str) -> str:
            self.calls.append(("lookup", {"key": key}))
            return f"value of {key}"

        def send(to: str, body: str = "", idempotency_key: str | None = None) -> str:
            self.calls.append(("send", {"to": to, "body": body, "key": idempotency_key}))
            return f"sent to {to}"

        return {"lookup": lookup, "send": send}


def registry() -> Registry:
    reg = Registry()
    reg.add(ToolSpec("lookup", "read", "other"))
    reg.add(ToolSpec("send", "external", "other"))
    return reg


def call(cid: str, name: str, args: dict[str, Any] | str) -> dict[str, Any]:
    return {"id": cid, "function": {"name": name, "arguments": args}}


def by_history(turns: list[dict[str, Any]]) -> ScriptedModel:
    """Reply i once i rounds of tool results are in the transcript (history-driven)."""

    def reply(messages: list[dict[str, Any]]) -> dict[str, Any]:
        assistant_turns = sum(1 for m in messages if m.get("role") == "assistant")
        return turns[assistant_turns] if assistant_turns < len(turns) else {"content": "done"}

    return ScriptedModel.history_driven(reply)


@pytest.fixture(params=["memory", "sqlite"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    url = "memory:" if request.param == "memory" else str(tmp_path / "signoff.db")
    s = open_store(url)
    yield s
    s.close()


def agent(tools: Tools, turns: list[dict[str, Any]], tmp_path: Path, **rules: Any) -> Agent:
    policy = Policy(Settings.from_rules(**rules), workspace=tmp_path, registry=registry())
    return Agent(model=by_history(turns), tools=tools.mapping(), policy=policy)


def start(store: Store, a: Agent) -> Any:
    return Runner(store, a).start([{"role": "user", "content": "go"}])


def tool_messages(store: Store, run_id: str) -> list[dict[str, Any]]:
    return [m for m in store.load_messages(run_id) if m.get("role") == "tool"]


def test_allowed_calls_run_and_the_run_finishes(store: Store, tmp_path: Path) -> None:
    tools = Tools()
    run = start(
        store,
        agent(
            tools,
            [
                {
                    "content": "",
                    "tool_calls": [
                        call("c1", "lookup", {"key": "a"}),
                        call("c2", "lookup", {"key": "b"}),
                    ],
                }
            ],
            tmp_path,
        ),
    )
    assert run.status == "finished" and run.note == "done"
    assert [m["tool_call_id"] for m in tool_messages(store, run.id)] == ["c1", "c2"]
    assert len(tools.calls) == 2


def test_ask_pauses_and_resume_in_a_fresh_runner_runs_once(store: Store, tmp_path: Path) -> None:
    tools = Tools()
    turns = [
        {
            "content": "Sending now.",
            "tool_calls": [
                call("c1", "lookup", {"key": "a"}),
                call("c2", "send", {"to": "bob"}),
                call("c3", "lookup", {"key": "b"}),
            ],
        }
    ]
    run = start(store, agent(tools, turns, tmp_path))
    assert run.status == "paused" and len(run.waiting_on) == 1
    assert [c[0] for c in tools.calls] == ["lookup", "lookup"]  # the ask did not run
    assert tool_messages(store, run.id) == []  # results wait, to keep call order
    request = store.get_request(run.waiting_on[0])
    assert request.call.arguments == {"to": "bob"} and request.run_id == run.id
    assert request.metadata.get("intent") == "Sending now."

    decide(store, request.id, Decision("approve"), actor="alice")
    fresh_tools = Tools()
    resumed = Runner(store, agent(fresh_tools, turns, tmp_path)).resume(run.id)
    assert resumed.status == "finished"
    assert fresh_tools.calls == [("send", {"to": "bob", "body": "", "key": request.id})]
    results = tool_messages(store, run.id)
    assert [m["tool_call_id"] for m in results] == ["c1", "c2", "c3"]
    assert results[1]["content"] == "sent to bob"
    with pytest.raises(ConflictError, match="finished"):
        Runner(store, agent(Tools(), turns, tmp_path)).resume(run.id)


def test_rejection_reason_reaches_the_transcript(store: Store, tmp_path: Path) -> None:
    tools = Tools()
    turns = [{"content": "", "tool_calls": [call("c1", "send", {"to": "bob"})]}]
    run = start(store, agent(tools, turns, tmp_path))
    decide(
        store, run.waiting_on[0], Decision("reject", reason="bob left the company"), actor="alice"
    )
    run = Runner(store, agent(tools, turns, tmp_path)).resume(run.id)
    assert run.status == "finished" and tools.calls == []
    assert "bob left the company" in tool_messages(store, run.id)[0]["content"]


def test_edit_runs_the_stored_edited_payload(store: Store, tmp_path: Path) -> None:
    tools = Tools()
    turns = [{"content": "", "tool_calls": [call("c1", "send", {"to": "bob", "body": "hi"})]}]
    a = agent(tools, turns, tmp_path)
    run = start(store, a)
    decide(
        store,
        run.waiting_on[0],
        Decision("edit", arguments={"to": "carol", "body": "hi"}),
        actor="alice",
        policy=a.policy,
    )
    Runner(store, a).resume(run.id)
    assert [c[1]["to"] for c in tools.calls] == ["carol"]


def test_edit_that_policy_denies_never_runs(store: Store, tmp_path: Path) -> None:
    tools = Tools()
    turns = [{"content": "", "tool_calls": [call("c1", "send", {"to": "bob"})]}]
    a = agent(tools, turns, tmp_path, deny=["send(to=*@evil.com)"])
    run = start(store, a)
    decided = decide(
        store,
        run.waiting_on[0],
        Decision("edit", arguments={"to": "x@evil.com"}),
        actor="alice",
        policy=a.policy,
    )
    assert decided.state == "rejected"
    run = Runner(store, a).resume(run.id)
    assert tools.calls == [] and "denied" in tool_messages(store, run.id)[0]["content"]


def test_edit_with_invalid_arguments_changes_nothing(store: Store, tmp_path: Path) -> None:
    from signoff.tools import tool

    @tool(tier="external", kind="other")
    def send(to: str, body: str = "") -> str:
        return to

    tools = Tools()
    turns = [{"content": "", "tool_calls": [call("c1", "send", {"to": "bob"})]}]
    a = agent(tools, turns, tmp_path)
    a.policy.registry.add(send.__signoff_spec__)  # type: ignore[attr-defined]
    run = start(store, a)
    with pytest.raises(InvalidInput, match="to"):
        decide(
            store,
            run.waiting_on[0],
            Decision("edit", arguments={"to": 5, "x": 1}),
            actor="alice",
            policy=a.policy,
        )
    assert store.get_request(run.waiting_on[0]).state == "pending"


def test_deny_and_malformed_arguments_never_run(store: Store, tmp_path: Path) -> None:
    tools = Tools()
    turns = [
        {
            "content": "",
            "tool_calls": [
                call("c1", "send", {"to": "x@evil.com"}),
                call("c2", "send", ARGS_BAD),
                call("c3", "nope", {}),
            ],
        },
        {"content": "giving up"},
    ]
    run = start(store, agent(tools, turns, tmp_path, deny=["send(to=*@evil.com)"]))
    assert tools.calls == []
    contents = [m["content"] for m in tool_messages(store, run.id)]
    assert "denied by policy" in contents[0]
    assert "not valid JSON" in contents[1]
    assert "no such tool" in contents[2]
    assert run.status == "needs_attention"  # three refusals in a row


def test_answer_becomes_the_result(store: Store, tmp_path: Path) -> None:
    tools = Tools()
    turns = [{"content": "", "tool_calls": [call("c1", "send", {"to": "bob"})]}]
    run = start(store, agent(tools, turns, tmp_path))
    # `send` is not the human's tool: the web offers no answer form by default
    assert store.get_request(run.waiting_on[0]).metadata["asks_human"] is False
    decide(
        store, run.waiting_on[0], Decision("respond", result="I mailed bob myself"), actor="alice"
    )
    run = Runner(store, agent(tools, turns, tmp_path)).resume(run.id)
    assert tool_messages(store, run.id)[0]["content"] == "I mailed bob myself"
    assert tools.calls == []


def test_decisions_arrive_one_by_one(store: Store, tmp_path: Path) -> None:
    tools = Tools()
    turns = [
        {
            "content": "",
            "tool_calls": [call("c1", "send", {"to": "a"}), call("c2", "send", {"to": "b"})],
        }
    ]
    run = start(store, agent(tools, turns, tmp_path))
    first, second = run.waiting_on
    decide(store, first, Decision("approve"), actor="alice")
    run = Runner(store, agent(tools, turns, tmp_path)).resume(run.id)
    assert run.status == "paused" and run.waiting_on == [second]
    assert [c[1]["to"] for c in tools.calls] == ["a"]  # the decided one ran, once
    decide(store, second, Decision("skip"), actor="alice")
    run = Runner(store, agent(tools, turns, tmp_path)).resume(run.id)
    assert run.status == "finished"
    assert [c[1]["to"] for c in tools.calls] == ["a"]
    assert [m["tool_call_id"] for m in tool_messages(store, run.id)] == ["c1", "c2"]


def test_a_call_finished_before_a_crash_is_not_run_again(store: Store, tmp_path: Path) -> None:
    tools = Tools()
    turns = [{"content": "", "tool_calls": [call("c1", "send", {"to": "bob"})]}]
    run = start(store, agent(tools, turns, tmp_path))
    rid = run.waiting_on[0]
    decide(store, rid, Decision("approve"), actor="alice")
    # Another worker claimed, ran and finished it, then died before saving the run.
    claim = store.claim(rid, worker="w-dead")
    store.finish(rid, claim.token, ok=True, result="sent to bob (by w-dead)")
    run = Runner(store, agent(tools, turns, tmp_path)).resume(run.id)
    assert tools.calls == []
    assert tool_messages(store, run.id)[0]["content"] == "sent to bob (by w-dead)"


def test_pause_writes_only_new_messages(store: Store, tmp_path: Path) -> None:
    tools = Tools()
    turns = [
        {"content": "", "tool_calls": [call(f"c{i}", "send", {"to": str(i)})]} for i in range(3)
    ]
    run = start(store, agent(tools, turns, tmp_path))
    counts = [run.message_count]
    for _ in range(3):
        decide(store, run.waiting_on[0], Decision("approve"), actor="alice")
        run = Runner(store, agent(tools, turns, tmp_path)).resume(run.id)
        counts.append(run.message_count)
    assert counts == [2, 4, 6, 8]
    assert run.status == "finished"
    transcript = store.load_messages(run.id)
    assert len(transcript) == 8
    assert json.loads(json.dumps(transcript)) == transcript


def test_a_tampered_run_document_is_judged_again(store: Store, tmp_path: Path) -> None:
    """An allowed call whose arguments were changed in the stored run never runs unjudged."""
    from dataclasses import replace as dc_replace

    from signoff.models import ToolCall

    tools = Tools()
    turns = [{"content": "", "tool_calls": [call("c1", "lookup", {"key": "a"})]}]
    a = agent(tools, turns, tmp_path, deny=["lookup(key=secret*)"])
    runner = Runner(store, a)
    run = store.create_run(
        __import__("signoff.runs.agent", fromlist=["Run"]).Run(id="run_t", created_at=1.0),
        [{"role": "user", "content": "go"}],
    )
    # Someone with database access rewrites the allowed, not yet run, call.
    reply = {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {
                "id": "c1",
                "type": "function",
                "function": {"name": "lookup", "arguments": '{"key": "a"}'},
            }
        ],
    }
    pending = parse_tool_calls(reply)
    forged = dc_replace(
        pending[0], effect="allow", call=ToolCall("lookup", {"key": "secret-x"}, "c1")
    )
    store.save_run(
        dc_replace(run, status="running", pending=(forged,)),
        [reply],
        expected_version=run.version,
    )
    run = runner.resume("run_t")
    assert tools.calls == []  # the deny rule held
    assert "denied by policy" in tool_messages(store, "run_t")[0]["content"]


def test_an_unanswered_request_expires_and_never_runs(store: Store, tmp_path: Path) -> None:
    import time

    from signoff.exceptions import RequestExpired

    tools = Tools()
    turns = [{"content": "", "tool_calls": [call("c1", "send", {"to": "bob"})]}]
    a = agent(tools, turns, tmp_path, tool_expiry={"send": 0.2})
    run = start(store, a)
    request = store.get_request(run.waiting_on[0])
    assert request.expires_at is not None
    assert request.expires_at - request.created_at == pytest.approx(0.2)
    time.sleep(0.3)
    with pytest.raises(RequestExpired):
        decide(store, request.id, Decision("approve"), actor="alice")
    run = Runner(store, a).resume(run.id)
    assert tools.calls == [] and run.status == "finished"
    assert "expired" in tool_messages(store, run.id)[0]["content"]


def test_resuming_with_nothing_decided_writes_nothing(store: Store, tmp_path: Path) -> None:
    tools = Tools()
    turns = [{"content": "", "tool_calls": [call("c1", "send", {"to": "bob"})]}]
    run = start(store, agent(tools, turns, tmp_path))
    before = store.get_run(run.id)
    again = Runner(store, agent(tools, turns, tmp_path)).resume(run.id)
    assert again.status == "paused" and again.waiting_on == run.waiting_on
    assert store.get_run(run.id).version == before.version and tools.calls == []
