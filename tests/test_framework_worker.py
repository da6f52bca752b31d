"""`signoff worker` resumes the framework adapters' runs once they are decided: a run
started here pauses, `signoff approve` / `reject` decides it in another process, and
`signoff worker --once` in a third rebuilds the agent from the adapter's factory and
resumes it, with the real packages and scripted models (no LLM)."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest

from fw_processes import signoff, worker_env
from signoff.exceptions import AlreadyClaimed
from signoff.kinds import RUN_CLAIMED, RUN_NOT_RESUMED
from signoff.store import open_store

# every test starts the CLI (approve, reject, worker) in other processes
pytestmark = pytest.mark.slow

EMAIL = ("email_customer", {"to": "bob@example.com", "body": "refund"})
STEPS = [list(EMAIL)]
FRAMEWORKS = ["langgraph", "pydantic_ai", "openai_agents"]
PACKAGE = {"langgraph": "langgraph", "pydantic_ai": "pydantic_ai", "openai_agents": "agents"}


def start(framework: str, ws: Path, *, factory: str | None = "default") -> tuple[str, str]:
    """Start a run that asks for one email (in this process): (run id, request id)."""
    pytest.importorskip(PACKAGE[framework])
    db = str(ws / "s.db")
    steps = [(n, a) for n, a in STEPS]
    ref = f"fw_{framework}:factory" if factory == "default" else factory
    if framework == "langgraph":
        from fw_langgraph import build as build_graph

        graph, mw, conn = build_graph(ws, db, steps, factory=ref)
        try:
            out = graph.invoke(
                {"messages": [{"role": "user", "content": "go"}]},
                {"configurable": {"thread_id": "t1"}},
            )
        finally:
            conn.close()
        (item,) = out["__interrupt__"]
        return mw.guard.run_id("t1"), str(item.value["signoff_request"])
    if framework == "pydantic_ai":
        from fw_pydantic_ai import build as build_pydantic

        agent, so = build_pydantic(ws, db, steps, factory=ref)
        outcome = asyncio.run(so.run(agent, "go", thread="t1"))
    else:
        from fw_openai_agents import build as build_agents

        sdk_agent, sdk_so = build_agents(ws, db, steps, factory=ref)
        outcome = asyncio.run(sdk_so.run(sdk_agent, "go", thread="t1"))
    assert outcome.status == "paused"
    (request_id,) = outcome.requests
    return outcome.run_id, request_id


def ran(ws: Path) -> list[str]:
    log = ws / "ran.jsonl"
    return log.read_text().splitlines() if log.exists() else []


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_the_worker_resumes_an_approved_run_once(tmp_path: Path, framework: str) -> None:
    run_id, request_id = start(framework, tmp_path)
    store = open_store(str(tmp_path / "s.db"))
    paused = store.get_run(run_id)
    assert paused.status == "paused" and paused.waiting_on == [request_id]
    env = worker_env(tmp_path, STEPS)
    listed = json.loads(signoff(tmp_path, "runs", "--json", env=env).stdout)
    assert [(r["id"], r["status"]) for r in listed] == [(run_id, "paused")]
    signoff(tmp_path, "approve", request_id, env=env)
    out = signoff(tmp_path, "worker", "--once", env=env)
    assert "resumed 1 run" in out.stdout, out.stderr
    assert f"worker: {run_id}: " in out.stdout and out.stdout.count("finished") == 1
    done = store.get_run(run_id)
    assert done.status == "finished" and "sent to bob@example.com" in (done.note or "")
    assert len(ran(tmp_path)) == 1
    again = signoff(tmp_path, "worker", "--once", env=env)  # nothing left to resume
    assert "resumed 0 runs" in again.stdout
    assert len(ran(tmp_path)) == 1


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_a_rejected_call_reaches_the_model_with_its_reason(tmp_path: Path, framework: str) -> None:
    run_id, request_id = start(framework, tmp_path)
    env = worker_env(tmp_path, STEPS)
    signoff(tmp_path, "reject", request_id, "--reason", "wrong customer", env=env)
    signoff(tmp_path, "worker", "--once", env=env)
    done = open_store(str(tmp_path / "s.db")).get_run(run_id)
    assert ran(tmp_path) == []
    assert done.status == "finished" and "wrong customer" in (done.note or "")


@pytest.mark.parametrize(
    ("factory", "why"),
    [
        ("fw_langgraph:no_such_factory", "cannot import"),
        ("fw_no_such_module:factory", "cannot import"),
        ("fw_langgraph:wrong_type", "not (agent, signoff.adapters.langgraph.SignoffMiddleware)"),
    ],
)
def test_a_bad_factory_is_refused_recorded_and_the_run_stays_paused(
    tmp_path: Path, factory: str, why: str
) -> None:
    run_id, request_id = start("langgraph", tmp_path, factory=factory)
    env = worker_env(tmp_path, STEPS)
    signoff(tmp_path, "approve", request_id, env=env)
    out = signoff(tmp_path, "worker", "--once", env=env)
    assert f"{run_id} not resumed" in out.stderr and why in out.stderr
    store = open_store(str(tmp_path / "s.db"))
    assert store.get_run(run_id).status == "paused" and ran(tmp_path) == []
    (refusal,) = [e for e in store.events_after(0, limit=500) if e.kind == RUN_NOT_RESUMED]
    assert refusal.run_id == run_id and why in refusal.data["why"]
    assert refusal.data["factory"] == factory


def test_two_workers_at_once_one_resumes(tmp_path: Path) -> None:
    run_id, request_id = start("langgraph", tmp_path)
    env = worker_env(tmp_path, STEPS)
    signoff(tmp_path, "approve", request_id, env=env)
    argv = [sys.executable, "-m", "signoff", "worker", "--once", "--db", str(tmp_path / "s.db")]
    workers = [
        subprocess.Popen(argv, cwd=tmp_path, env=env, stdout=subprocess.PIPE, text=True)
        for _ in range(2)
    ]
    outputs = [w.communicate(timeout=120)[0] for w in workers]
    assert [w.returncode for w in workers] == [0, 0]
    assert sorted("resumed 1 run" in o for o in outputs) == [False, True], outputs
    store = open_store(str(tmp_path / "s.db"))
    assert store.get_run(run_id).status == "finished" and len(ran(tmp_path)) == 1
    claims = [e for e in store.events_after(0, limit=500) if e.kind == RUN_CLAIMED]
    assert len(claims) == 1  # one worker leased it; the other found nothing ready
    assert claims[0].run_id == run_id and claims[0].data["worker"] != "signoff.adapters.langgraph"


def test_a_run_without_a_factory_is_left_alone_and_the_worker_says_so(tmp_path: Path) -> None:
    run_id, request_id = start("langgraph", tmp_path, factory=None)
    env = worker_env(tmp_path, STEPS)
    signoff(tmp_path, "approve", request_id, env=env)
    out = signoff(tmp_path, "worker", "--once", env=env)
    assert "left alone: 1 paused framework run without a factory" in out.stderr
    assert out.stderr.count("left alone") == 1 and "resumed 0 runs" in out.stdout
    assert open_store(str(tmp_path / "s.db")).get_run(run_id).status == "paused"
    assert ran(tmp_path) == []


def test_a_direct_resume_of_a_run_a_worker_holds_does_not_run_its_call(tmp_path: Path) -> None:
    """`graph.invoke(Command(resume=...))` without `resume_decided` takes the run's lease
    too: while a worker (another process) holds it, the call does not run here."""
    pytest.importorskip("langgraph")
    from langgraph.types import Command

    from fw_langgraph import build

    run_id, request_id = start("langgraph", tmp_path)
    env = worker_env(tmp_path, STEPS)
    signoff(tmp_path, "approve", request_id, env=env)
    db = str(tmp_path / "s.db")
    holds = (
        "import sys; from signoff.store import open_store; "
        "open_store(sys.argv[1]).claim_run('worker-2', run_id=sys.argv[2], lease_seconds=600)"
    )
    subprocess.run([sys.executable, "-c", holds, db, run_id], env=env, check=True)
    steps = [(n, a) for n, a in STEPS]
    graph, _mw, conn = build(tmp_path, db, steps, factory="fw_langgraph:factory")
    cfg = {"configurable": {"thread_id": "t1"}}
    try:
        (item,) = graph.get_state(cfg).interrupts
        with pytest.raises(AlreadyClaimed, match="worker-2"):
            graph.invoke(Command(resume={item.id: {"signoff_request": request_id}}), cfg)
    finally:
        conn.close()
    store = open_store(db)
    assert ran(tmp_path) == [] and store.get_run(run_id).status == "paused"
    assert store.get_request(request_id).state == "approved"  # not claimed here
    store.release_run(run_id, "worker-2")  # the worker let it go: another one resumes it
    out = signoff(tmp_path, "worker", "--once", env=env)
    assert "resumed 1 run" in out.stdout, out.stderr
    assert store.get_run(run_id).status == "finished" and len(ran(tmp_path)) == 1
