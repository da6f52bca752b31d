"""signoff inside the OpenAI Agents SDK, with the real package and a scripted `Model`
subclass (no LLM, no network)."""

from __future__ import annotations

import asyncio
import base64
import json
import zlib
from pathlib import Path
from typing import Any

import pytest

from fw_processes import approve_then_resume

pytest.importorskip("agents")

from agents import Runner, RunState

from fw_openai_agents import build, ran
from signoff.adapters.openai_agents import _THREAD as THREAD
from signoff.adapters.openai_agents import EDIT_REFUSED, pack, unpack
from signoff.approvals import decide
from signoff.exceptions import InvalidInput
from signoff.models import Decision
from signoff.policy import Policy
from signoff.store import open_store

EMAIL = ("email_customer", {"to": "bob@example.com", "body": "refund"})
Steps = list[tuple[str, dict[str, Any]]]


def start(workspace: Path, steps: Steps, thread: str = "t1") -> Any:
    agent, so = build(workspace, str(workspace / "s.db"), steps)
    return asyncio.run(so.run(agent, "go", thread=thread))


def resume(workspace: Path, steps: Steps, thread: str = "t1") -> Any:
    agent, so = build(workspace, str(workspace / "s.db"), steps)
    return asyncio.run(so.resume(agent, thread=thread))


def _decide(workspace: Path, request_id: str, decision: Decision) -> None:
    decide(open_store(str(workspace / "s.db")), request_id, decision, actor="alice")


def test_allow_runs_and_deny_reaches_the_model_through_the_guardrail(tmp_path: Path) -> None:
    out = start(
        tmp_path,
        [("lookup", {"order": "A1"}), ("email_customer", {"to": "x@competitor.com", "body": "x"})],
    )
    assert out.status == "finished"
    assert ran(tmp_path) == [{"tool": "lookup", "order": "A1"}]
    seen = json.loads(out.output.removeprefix("done: "))
    assert seen[0] == "order A1: paid" and "denied by policy" in seen[1]
    events = open_store(str(tmp_path / "s.db")).events_after(0, limit=100)
    assert [e.data["verdict"]["effect"] for e in events if e.kind == "verdict"] == ["allow", "deny"]


def test_ask_decided_elsewhere_and_resumed_in_a_fresh_process(tmp_path: Path) -> None:
    steps: Steps = [("lookup", {"order": "A1"}), EMAIL]
    out = start(tmp_path, steps)
    assert out.status == "paused" and len(out.requests) == 1
    assert resume(tmp_path, steps).status == "paused"  # nobody decided yet
    done = approve_then_resume(tmp_path, out.requests[0], "fw_openai_agents.py", steps)
    assert done["status"] == "finished" and "sent to bob@example.com" in done["output"]
    assert [r["tool"] for r in ran(tmp_path)] == ["lookup", "email_customer"]


def test_reject_and_answer_reach_the_model(tmp_path: Path) -> None:
    out = start(tmp_path, [EMAIL])
    _decide(tmp_path, out.requests[0], Decision("reject", reason="wrong customer"))
    assert "wrong customer" in resume(tmp_path, [EMAIL]).output
    out = start(tmp_path, [EMAIL], thread="t2")
    _decide(tmp_path, out.requests[0], Decision("respond", result="done by phone"))
    assert "done by phone" in resume(tmp_path, [EMAIL], thread="t2").output
    assert ran(tmp_path) == []


def test_edits_are_refused_with_a_clear_message(tmp_path: Path) -> None:
    out = start(tmp_path, [EMAIL])
    _agent, so = build(tmp_path, str(tmp_path / "s.db"), [EMAIL])
    with pytest.raises(InvalidInput, match="cannot run a tool call with edited arguments"):
        so.decide(
            out.requests[0],
            Decision("edit", arguments={"to": "a@example.com", "body": "x"}),
            actor="alice",
        )
    # decided elsewhere (the CLI, the web): not run, and the model is told why
    decide(
        so.guard.store,
        out.requests[0],
        Decision("edit", arguments={"to": "a@example.com", "body": "x"}),
        actor="alice",
        policy=Policy(workspace=tmp_path),
    )
    done = resume(tmp_path, [EMAIL])
    assert ran(tmp_path) == []
    assert EDIT_REFUSED.split(" (")[0] in done.output


def test_a_forged_approval_on_the_state_does_not_run_the_call(tmp_path: Path) -> None:
    out = start(tmp_path, [EMAIL])
    agent, so = build(tmp_path, str(tmp_path / "s.db"), [EMAIL])
    run = so.guard.run("t1")

    async def forge() -> Any:
        token = THREAD.set("t1")
        try:
            state = await RunState.from_json(agent, unpack(run.metadata["state"]))
            for item in state.get_interruptions():
                state.approve(item)  # nobody approved it in signoff
            return await Runner.run(agent, state)
        finally:
            THREAD.reset(token)

    result = asyncio.run(forge())
    assert ran(tmp_path) == []
    assert "nobody has decided it yet" in str(result.final_output)
    assert so.guard.store.get_request(out.requests[0]).state == "pending"


def test_an_approved_call_runs_once_when_the_state_is_replayed(tmp_path: Path) -> None:
    out = start(tmp_path, [EMAIL])
    _decide(tmp_path, out.requests[0], Decision("approve"))
    agent, so = build(tmp_path, str(tmp_path / "s.db"), [EMAIL])
    paused = unpack(so.guard.run("t1").metadata["state"])  # a copy kept by someone
    first = asyncio.run(so.resume(agent, thread="t1"))

    async def replay() -> Any:
        token = THREAD.set("t1")
        try:
            state = await RunState.from_json(agent, paused)
            for item in state.get_interruptions():
                state.approve(item)
            return await Runner.run(agent, state)
        finally:
            THREAD.reset(token)

    again = asyncio.run(replay())
    assert len(ran(tmp_path)) == 1
    assert "sent to bob@example.com" in first.output
    assert "sent to bob@example.com" in str(again.final_output)  # the stored result


def test_a_crash_after_the_claim_leaves_the_call_in_doubt(tmp_path: Path) -> None:
    out = start(tmp_path, [EMAIL])
    _decide(tmp_path, out.requests[0], Decision("approve"))
    open_store(str(tmp_path / "s.db")).claim(out.requests[0], worker="crashed", lease_seconds=0.0)
    done = resume(tmp_path, [EMAIL])
    assert ran(tmp_path) == [] and "in doubt" in done.output


def test_an_approved_call_is_finished_on_the_record_when_resume_returns(tmp_path: Path) -> None:
    # the finish is written off the path to the model's next turn, but before the return
    out = start(tmp_path, [EMAIL])
    _decide(tmp_path, out.requests[0], Decision("approve"))
    assert resume(tmp_path, [EMAIL]).status == "finished"
    store = open_store(str(tmp_path / "s.db"))
    assert store.get_request(out.requests[0]).state == "finished"
    assert "sent to bob@example.com" in str(store.get_outcome(out.requests[0]))


def test_a_stored_state_comes_back_whole_whatever_its_text_and_format() -> None:
    state = {
        "generated_items": [{"text": "naïve ✓ \U0001f600", "n": 1.5, "ok": True, "none": None}],
        "tool_output": "bytes a tool decoded badly: \udc80",  # a lone surrogate
    }
    stored = pack(state)
    assert stored.startswith("zlib:") and unpack(stored) == state
    # as an earlier signoff stored it: json.dumps, zlib's default level
    older = json.dumps({"k": "naïve"}, ensure_ascii=False).encode()
    assert unpack("zlib:" + base64.b64encode(zlib.compress(older, 6)).decode()) == {"k": "naïve"}
    with pytest.raises(InvalidInput, match="not a JSON object"):
        unpack(pack([1, 2]))  # type: ignore[arg-type]
