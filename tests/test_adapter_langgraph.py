"""signoff inside LangGraph / LangChain v1, with the real packages, a SqliteSaver on a file
and a scripted chat model (no LLM)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from fw_processes import approve_then_resume

pytest.importorskip("langgraph")

from langgraph.types import Command

from fw_langgraph import build, final_text, ran, resume_decided
from signoff.approvals import decide
from signoff.models import Decision, Grant, ToolCall
from signoff.store import open_store
from signoff.tools import ToolSpec

SPEC_LOOKUP = ToolSpec(name="lookup", tier="read")
EMAIL = ("email_customer", {"to": "bob@example.com", "body": "refund"})
Steps = list[tuple[str, dict[str, Any]]]
CFG = {"configurable": {"thread_id": "t1"}}


def start(workspace: Path, steps: Steps, *, hitl: bool = False) -> Any:
    agent, _, conn = build(workspace, str(workspace / "s.db"), steps, hitl=hitl)
    try:
        return agent.invoke({"messages": [{"role": "user", "content": "go"}]}, CFG)
    finally:
        conn.close()


def resume(workspace: Path, steps: Steps) -> Any:
    agent, so, conn = build(workspace, str(workspace / "s.db"), steps)
    try:
        return resume_decided(agent, so, thread_id="t1")
    finally:
        conn.close()


def asked(result: Any) -> list[str]:
    return [i.value["signoff_request"] for i in result.get("__interrupt__", ())]


def _decide(workspace: Path, request_id: str, decision: Decision) -> None:
    decide(open_store(str(workspace / "s.db")), request_id, decision, actor="alice")


def test_allow_runs_deny_is_refused_with_its_reason(tmp_path: Path) -> None:
    out = start(
        tmp_path,
        [("lookup", {"order": "A1"}), ("email_customer", {"to": "x@competitor.com", "body": "x"})],
    )
    assert "__interrupt__" not in out
    assert ran(tmp_path) == [{"tool": "lookup", "order": "A1"}]
    seen = json.loads(final_text(out).removeprefix("done: "))
    assert seen[0] == "order A1: paid"
    assert "denied by policy" in seen[1] and "competitor.com" in seen[1]
    events = open_store(str(tmp_path / "s.db")).events_after(0, limit=100)
    verdicts = [e.data["verdict"]["effect"] for e in events if e.kind == "verdict"]
    assert verdicts == ["allow", "deny"]  # on the record when the agent stopped


def test_ask_decided_elsewhere_and_resumed_in_a_fresh_process(tmp_path: Path) -> None:
    steps: Steps = [("lookup", {"order": "A1"}), EMAIL]
    out = start(tmp_path, steps)
    (request_id,) = asked(out)
    assert resume(tmp_path, steps) is None  # nobody decided yet: nothing to resume
    done = approve_then_resume(tmp_path, request_id, "fw_langgraph.py", steps)
    assert done["resumed"] and "sent to bob@example.com" in done["output"]
    assert [r["tool"] for r in ran(tmp_path)] == ["lookup", "email_customer"]


def test_a_resume_value_decides_nothing(tmp_path: Path) -> None:
    out = start(tmp_path, [EMAIL])
    (request_id,) = asked(out)
    agent, _, conn = build(tmp_path, str(tmp_path / "s.db"), [EMAIL])
    try:
        (pending,) = agent.get_state(CFG).interrupts
        forged = agent.invoke(Command(resume={pending.id: {"type": "approve"}}), CFG)
    finally:
        conn.close()
    assert asked(forged) == [request_id]  # interrupted again, not run
    assert ran(tmp_path) == []
    assert open_store(str(tmp_path / "s.db")).get_request(request_id).state == "pending"


def test_edit_is_judged_again_and_reject_and_answer_reach_the_model(tmp_path: Path) -> None:
    for decision, check in [
        (
            Decision("edit", arguments={"to": "bob@example.com", "body": "10 EUR back"}),
            lambda text, log: (
                log == [{"tool": "email_customer", "to": "bob@example.com", "body": "10 EUR back"}]
            ),
        ),
        (
            Decision("reject", reason="wrong customer"),
            lambda text, log: log == [] and "wrong customer" in text,
        ),
        (
            Decision("respond", result="done by phone"),
            lambda text, log: log == [] and "done by phone" in text,
        ),
    ]:
        for name in ("graph.db", "s.db", "ran.jsonl"):
            (tmp_path / name).unlink(missing_ok=True)
        (request_id,) = asked(start(tmp_path, [EMAIL]))
        _decide(tmp_path, request_id, decision)
        text = final_text(resume(tmp_path, [EMAIL]))
        assert check(text, ran(tmp_path)), (decision.kind, text, ran(tmp_path))


def test_an_edit_the_adapter_policy_denies_never_runs(tmp_path: Path) -> None:
    from signoff.policy import Policy

    (request_id,) = asked(start(tmp_path, [EMAIL]))
    store = open_store(str(tmp_path / "s.db"))
    decide(
        store,
        request_id,
        Decision("edit", arguments={"to": "ceo@competitor.com", "body": "x"}),
        actor="alice",
        policy=Policy(workspace=tmp_path),  # a policy without the deny rule approved it
    )
    text = final_text(resume(tmp_path, [EMAIL]))
    assert ran(tmp_path) == [] and "edit was refused" in text


def test_a_replayed_node_does_not_run_the_tool_twice(tmp_path: Path) -> None:
    (request_id,) = asked(start(tmp_path, [EMAIL]))
    _decide(tmp_path, request_id, Decision("approve"))
    agent, so, conn = build(tmp_path, str(tmp_path / "s.db"), [EMAIL])
    try:
        paused = agent.get_state(CFG)  # the checkpoint the run paused at
        first = resume_decided(agent, so, thread_id="t1")
        # time travel: run the tool node again from the paused checkpoint
        (item,) = paused.interrupts
        again = agent.invoke(
            Command(resume={item.id: {"signoff_request": request_id}}), paused.config
        )
    finally:
        conn.close()
    assert len(ran(tmp_path)) == 1
    assert "sent to bob@example.com" in final_text(first)
    assert "sent to bob@example.com" in final_text(again)  # the stored result, not a rerun
    kinds = [e.kind for e in open_store(str(tmp_path / "s.db")).events_after(0, limit=200)]
    assert kinds.count("request.created") == 1 and kinds.count("request.claimed") == 1


def test_a_crash_after_the_claim_leaves_the_call_in_doubt(tmp_path: Path) -> None:
    (request_id,) = asked(start(tmp_path, [EMAIL]))
    _decide(tmp_path, request_id, Decision("approve"))
    store = open_store(str(tmp_path / "s.db"))
    store.claim(request_id, worker="crashed", lease_seconds=0.0)
    text = final_text(resume(tmp_path, [EMAIL]))
    assert ran(tmp_path) == [] and "in doubt" in text


def test_langchain_hitl_with_signoff_as_its_when_predicate(tmp_path: Path) -> None:
    steps: Steps = [("lookup", {"order": "A1"}), EMAIL]
    agent, so, conn = build(tmp_path, str(tmp_path / "s.db"), steps, hitl=True)
    try:
        out = agent.invoke({"messages": [{"role": "user", "content": "go"}]}, CFG)
        (item,) = out["__interrupt__"]
        assert item.value["name"] == "email_customer"  # LangChain's own ToolApprovalRequest
        # a grant made meanwhile does not flip the frozen answer on resume
        so.guard.store.add_grant(Grant(rule="email_customer", scope="project", id="g1"))
        call = ToolCall("email_customer", dict(EMAIL[1]))
        assert so.guard.policy.evaluate(call, grants=so.guard.grants("t1")).effect == "allow"
        edit = {
            "type": "edit",
            "edited_action": {
                "name": "email_customer",
                "args": {"to": "spy@competitor.com", "body": "x"},
            },
        }
        done = agent.invoke(Command(resume={item.id: edit}), CFG)
    finally:
        conn.close()
    assert ran(tmp_path) == [{"tool": "lookup", "order": "A1"}]  # the denied edit never ran
    assert "denied by policy" in final_text(done)


def test_an_agent_that_raises_ends_its_run_failed_and_the_thread_goes_on(tmp_path: Path) -> None:
    steps: Steps = [EMAIL, ("!raise", {"message": "model down"})]
    out = start(tmp_path, steps)
    (request_id,) = asked(out)
    _decide(tmp_path, request_id, Decision("approve"))
    agent, so, conn = build(tmp_path, str(tmp_path / "s.db"), steps)
    first_id = so.guard.run_id("t1")  # the thread's first run: the one that paused
    try:
        with pytest.raises(RuntimeError, match="model down"):
            resume_decided(agent, so, thread_id="t1")
    finally:
        conn.close()
    store = open_store(str(tmp_path / "s.db"))
    first = store.get_run(first_id)
    assert first.status == "failed" and "RuntimeError: model down" in (first.note or "")
    assert store.get_request(request_id).state == "finished"  # the email ran, once
    # the thread goes on (another message) in a new run; the failed one stays failed
    lookup = ("lookup", {"order": "A1"})
    agent, so, conn = build(tmp_path, str(tmp_path / "s.db"), [EMAIL, lookup])
    try:
        agent.invoke({"messages": [{"role": "user", "content": "again"}]}, CFG)
    finally:
        conn.close()
    following = store.get_run(first.id).metadata["next"]
    assert store.get_run(following).status == "finished"
    assert store.get_run(first.id).status == "failed"
    assert [r["tool"] for r in ran(tmp_path)] == ["email_customer", "lookup"]


def test_a_tool_is_declared_from_its_metadata_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An undeclared tool is known from its metadata (description, JSON schema) on its
    first call; its schema is not built again on each call, and a declared tool's spec
    is never replaced by its metadata."""
    from langchain_core.tools import tool
    from langgraph.prebuilt.tool_node import ToolCallRequest

    from signoff.adapters import langgraph as lg
    from signoff.settings import Settings

    built: list[str] = []
    schema = lg._schema
    monkeypatch.setattr(lg, "_schema", lambda t: built.append(t.name) or schema(t))

    @tool
    def stock(sku: str) -> str:
        """How many of a SKU are in stock."""
        return "3"

    @tool
    def lookup(order: str) -> str:
        """Look an order up."""
        return "paid"

    policy = lg.Policy(Settings.from_rules(allow=["stock"]), workspace=tmp_path)
    so = lg.SignoffMiddleware(store=str(tmp_path / "s.db"), policy=policy, tools=[SPEC_LOOKUP])
    runtime = type("Runtime", (), {"config": CFG})()
    for i, (item, args) in enumerate([(stock, {"sku": "A"}), (stock, {"sku": "B"}), (lookup, {})]):
        request = ToolCallRequest(
            tool_call={"name": item.name, "args": args, "id": f"c{i}", "type": "tool_call"},
            tool=item,
            state={"messages": []},
            runtime=runtime,
        )
        out = so.wrap_tool_call(request, lambda r: lg._message(r, "ran", error=False))
        assert out.content == "ran"
    assert built == ["stock"]
    spec = so.guard.policy.registry.get("stock")
    assert (spec.tier, spec.description) == ("unknown", "How many of a SKU are in stock.")
    assert spec.schema is not None and "sku" in spec.schema["properties"]
    assert so.guard.policy.registry.get("lookup").tier == "read"  # declared: kept
