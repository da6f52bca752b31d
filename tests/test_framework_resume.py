"""What a framework's signoff run records and says (its factory, its status, its lease),
and how the worker treats one it cannot resume, in this process (the CLI in other
processes: test_framework_worker.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from signoff.adapters.frameworks import Guard
from signoff.approvals import decide
from signoff.exceptions import AlreadyClaimed, InvalidInput
from signoff.kinds import RUN_NOT_RESUMED
from signoff.models import Decision
from signoff.runs.worker import work
from signoff.store import open_store

EMAIL = ("email_customer", {"to": "bob@example.com", "body": "refund"})
CFG = {"configurable": {"thread_id": "t1"}}


@pytest.mark.parametrize("factory", ["app.agents", "app agents:build", ":build", "app:"])
def test_a_factory_must_be_an_importable_name(tmp_path: Path, factory: str) -> None:
    with pytest.raises(InvalidInput, match=r"is not of the form package\.module:attr"):
        Guard("langgraph", store=str(tmp_path / "s.db"), workspace=tmp_path, factory=factory)


def test_the_factory_is_kept_in_the_run_as_a_name(tmp_path: Path) -> None:
    guard = Guard(
        "pydantic_ai", store=str(tmp_path / "s.db"), workspace=tmp_path, factory="app.ai:build"
    )
    run = guard.run("t1")
    assert run.metadata == {"framework": "pydantic_ai", "factory": "app.ai:build"}


def test_the_worker_refuses_a_stored_factory_that_is_not_a_name(tmp_path: Path) -> None:
    store = open_store(str(tmp_path / "s.db"))
    guard = Guard("langgraph", store=store, workspace=tmp_path)
    guard.run("t1")
    # a run written by something else: what it names is never run as code
    run = guard.save("t1", status="paused", metadata={"factory": "print('hi')"})
    assert work(store, worker="w1", once=True) == 0
    assert store.get_run(run.id).status == "paused"
    (refusal,) = [e for e in store.events_after(0, limit=100) if e.kind == RUN_NOT_RESUMED]
    assert "is not of the form package.module:attr" in refusal.data["why"]
    assert refusal.data["worker"] == "w1" and refusal.run_id == run.id
    assert work(store, worker="w1", once=True) == 0  # held until its lease lapses: no loop


def test_a_running_run_whose_worker_died_needs_a_person(tmp_path: Path) -> None:
    store = open_store(str(tmp_path / "s.db"))
    guard = Guard("langgraph", store=store, workspace=tmp_path, factory="app.graphs:build")
    run = guard.save("t1", status="paused")  # its lease let go: a worker may take it
    store.claim_run("w0", run_id=run.id, lease_seconds=0.0)  # w0 took it, lapsed at once
    guard.save("t1", status="running")  # ... and died resuming it
    assert work(store, worker="w1", once=True) == 1
    after = store.get_run(run.id)
    assert after.status == "needs_attention" and "lease lapsed" in (after.note or "")


def test_a_langgraph_run_says_paused_running_finished_and_the_thread_goes_on(
    tmp_path: Path,
) -> None:
    pytest.importorskip("langgraph")
    from fw_langgraph import build, ran, resume_decided

    db = str(tmp_path / "s.db")
    graph, mw, conn = build(tmp_path, db, [EMAIL])
    try:
        out = graph.invoke({"messages": [{"role": "user", "content": "go"}]}, CFG)
    finally:
        conn.close()
    (item,) = out["__interrupt__"]
    request_id = item.value["signoff_request"]
    store = open_store(db)
    first = mw.guard.run_id("t1")
    assert store.get_run(first).status == "paused"
    assert store.get_run(first).waiting_on == [request_id]
    decide(store, request_id, Decision("approve"), actor="alice")
    lookup = ("lookup", {"order": "A1"})
    graph, mw, conn = build(tmp_path, db, [EMAIL])
    try:
        resume_decided(graph, mw, thread_id="t1")
        done = store.get_run(first)
        assert done.status == "finished" and "sent to bob@example.com" in (done.note or "")
        # the thread goes on: its next calls belong to its next run; the first stays done
        graph, mw, conn2 = build(tmp_path, db, [EMAIL, lookup])
        graph.invoke({"messages": [{"role": "user", "content": "and A1?"}]}, CFG)
        conn2.close()
    finally:
        conn.close()
    assert [r["tool"] for r in ran(tmp_path)] == ["email_customer", "lookup"]
    following = store.get_run(first).metadata["next"]
    second = store.get_run(following)
    assert second.thread == "t1" and second.status == "finished"
    assert second.metadata["segment"] == 1 and store.get_run(first).status == "finished"
    assert mw.guard.run_id("t1") == following


def test_your_code_does_not_resume_a_run_a_worker_holds(tmp_path: Path) -> None:
    pytest.importorskip("langgraph")
    from fw_langgraph import build, ran, resume_decided

    db = str(tmp_path / "s.db")
    graph, mw, conn = build(tmp_path, db, [EMAIL], factory="fw_langgraph:factory")
    try:
        out = graph.invoke({"messages": [{"role": "user", "content": "go"}]}, CFG)
        (item,) = out["__interrupt__"]
        store = open_store(db)
        decide(store, item.value["signoff_request"], Decision("approve"), actor="alice")
        claimed = store.claim_run("a-worker", lease_seconds=60.0)  # paused, decided: ready
        assert claimed is not None and claimed.id == mw.guard.run_id("t1")
        with pytest.raises(AlreadyClaimed, match="a-worker"):
            resume_decided(graph, mw, thread_id="t1")
    finally:
        conn.close()
    assert ran(tmp_path) == [] and store.get_run(claimed.id).status == "paused"


def test_signoff_resume_takes_a_framework_run_through_its_factory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("langgraph")
    import json

    from fw_langgraph import build, ran
    from signoff.runs.worker import resume_run

    db = str(tmp_path / "s.db")
    for name, value in [("FW_WORKSPACE", str(tmp_path)), ("FW_DB", db)]:
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("FW_STEPS", json.dumps([list(EMAIL)]))
    graph, mw, conn = build(tmp_path, db, [EMAIL], factory="fw_langgraph:factory")
    try:
        out = graph.invoke({"messages": [{"role": "user", "content": "go"}]}, CFG)
    finally:
        conn.close()
    store = open_store(db)
    decide(store, out["__interrupt__"][0].value["signoff_request"], Decision("approve"), actor="a")
    done = resume_run(store, mw.guard.run_id("t1"), worker="cli")
    assert done.status == "finished" and [r["tool"] for r in ran(tmp_path)] == ["email_customer"]
