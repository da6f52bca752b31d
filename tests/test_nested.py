"""Nested runs: a boss agent delegates to a manager, which delegates to a clerk, which asks
to charge 42. The question raised three levels down pauses every run above it, durably; a
person decides it from another process (`signoff approve` in a subprocess), and the answer
comes back up in a fresh process (`signoff resume` or `signoff worker`), the charge made
once and each parent given its child's answer once, even when a real process driving
them is killed (SIGKILL) at each level.

The agents are `tests/helpers/nested_agents.py` (scripted models, no LLM)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from contextlib import closing
from pathlib import Path

import pytest

from signoff.exceptions import ConfigurationError, InvalidInput
from signoff.kinds import RUN_CLAIMED, RUN_CREATED
from signoff.run_state import Run, parent_runs
from signoff.runs.nested import MAX_DEPTH, Delegate, child_run_id, descendants, lineage
from signoff.runs.runner import Runner
from signoff.store import Store, open_store

HELPERS = Path(__file__).parent / "helpers"
SRC = Path(__file__).resolve().parent.parent / "src"
sys.path.insert(0, str(HELPERS))

import nested_agents  # noqa: E402

# the store fixture: memory, SQLite and PostgreSQL (registered by name)
from store_helpers import backend_fixture, store_fixture  # noqa: E402,F401

HARNESS = HELPERS / "nested_harness.py"
LEASE = 0.5  # the harness's run leases: a later process may take the runs over after it
KILLED = -9
ANSWER = "boss: manager: clerk: charged 42"
MANAGER = child_run_id("run_boss", "boss_call")
CLERK = child_run_id(MANAGER, "manager_call")


def env() -> dict[str, str]:
    out = dict(os.environ)
    out.pop("SIGNOFF_DB", None)
    out["PYTHONPATH"] = os.pathsep.join([str(SRC), str(HELPERS)])
    return out


def harness(db: Path, phase: str, boundary: str = "none") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(HARNESS), str(db), str(effects_file(db)), phase, boundary],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=env(),
    )


def signoff(db: Path, *args: str) -> str:
    """The real CLI in a fresh process; its standard output."""
    done = subprocess.run(
        [sys.executable, "-m", "signoff", *args, "--db", str(db)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=env(),
        cwd=db.parent,
    )
    assert done.returncode == 0, (args, done.stdout, done.stderr)
    return done.stdout


def effects_file(db: Path) -> Path:
    return db.parent / "effects.log"


def effects(db: Path) -> list[str]:
    path = effects_file(db)
    return path.read_text().splitlines() if path.exists() else []


def runs(db: Path) -> dict[str, Run]:
    with closing(open_store(str(db))) as store:
        return {r.id: r for r in store.list_runs()}


def pending(db: Path) -> str:
    with closing(open_store(str(db))) as store:
        (request,) = store.list_requests(state="pending")
        return request.id


def tool_results(db: Path, run_id: str, call_id: str) -> list[str]:
    with closing(open_store(str(db))) as store:
        messages = store.load_messages(run_id)
    return [
        m["content"]
        for m in messages
        if m.get("role") == "tool" and m.get("tool_call_id") == call_id
    ]


def assert_answered_once(db: Path) -> None:
    """The charge ran once; every run finished; each parent got its child's answer once."""
    assert len(effects(db)) == 1, effects(db)
    found = runs(db)
    assert {k: r.status for k, r in found.items()} == dict.fromkeys(
        ("run_boss", MANAGER, CLERK), "finished"
    )
    assert found["run_boss"].note == ANSWER
    assert tool_results(db, "run_boss", "boss_call") == ["manager: clerk: charged 42"]
    assert tool_results(db, MANAGER, "manager_call") == ["clerk: charged 42"]
    assert tool_results(db, CLERK, "clerk_call") == ["charged 42"]
    assert (found[MANAGER].parent_id, found[MANAGER].parent_call_id) == ("run_boss", "boss_call")
    assert (found[CLERK].parent_id, found[CLERK].parent_call_id) == (MANAGER, "manager_call")


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "signoff.db"


# ------------------------------------------------------------------ across processes


def test_three_levels_decided_and_resumed_in_other_processes(db: Path) -> None:
    assert harness(db, "start").stdout.startswith("paused")
    found = runs(db)
    assert {k: r.status for k, r in found.items()} == dict.fromkeys(
        ("run_boss", MANAGER, CLERK), "paused"
    )
    assert found["run_boss"].waiting_for == [MANAGER] and found[MANAGER].waiting_for == [CLERK]
    request = pending(db)

    # the inbox shows the grandchild's question under the runs above it
    inbox = signoff(db, "inbox")
    assert f"{CLERK} <- {MANAGER} <- run_boss" in inbox.replace("\n", "")
    (shown,) = json.loads(signoff(db, "inbox", "--json"))
    assert shown["run_id"] == CLERK and parent_runs(shown["metadata"]) == (MANAGER, "run_boss")

    assert "Approved" in signoff(db, "approve", request)
    assert effects(db) == []  # deciding runs nothing
    signoff(db, "resume", "run_boss")  # resuming the parent resumes the children first
    assert_answered_once(db)
    assert effects(db)[0].split()[0] == request  # the request id is the idempotency key
    # resuming again is refused, and runs nothing
    again = subprocess.run(
        [sys.executable, "-m", "signoff", "resume", CLERK, "--db", str(db)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=env(),
    )
    assert "is finished; there is nothing to resume" in again.stderr
    assert len(effects(db)) == 1


def test_the_worker_takes_the_deepest_ready_run_first(db: Path) -> None:
    harness(db, "start")
    with closing(open_store(str(db))) as store:
        assert store.claim_run("nobody") is None  # every run waits on the question
        seen = store.last_seq()
    signoff(db, "approve", pending(db))
    signoff(db, "worker", "--once", "--quiet")
    assert_answered_once(db)
    with closing(open_store(str(db))) as store:
        claimed = [e.run_id for e in store.events_after(seen, 1000) if e.kind == RUN_CLAIMED]
    assert claimed == [CLERK, MANAGER, "run_boss"]


def test_resuming_the_grandchild_hands_its_answer_up(db: Path) -> None:
    harness(db, "start")
    signoff(db, "approve", pending(db))
    signoff(db, "resume", CLERK)
    assert_answered_once(db)


def test_crash_before_the_child_starts(db: Path) -> None:
    assert harness(db, "start", "child_start").returncode == KILLED
    assert set(runs(db)) == {"run_boss"}  # its turn saved; no child yet
    assert runs(db)["run_boss"].status == "running"
    time.sleep(LEASE + 0.1)
    out = signoff(db, "resume", "run_boss")  # starts the child, which starts the grandchild
    assert {r.status for r in runs(db).values()} == {"paused"}
    # where the question is, and how to move the whole run on
    assert f"(in run {CLERK} <- {MANAGER} <- run_boss)" in out.replace("\n", "")
    assert f"signoff approve {pending(db)}" in out and "signoff resume run_boss" in out
    assert "run_boss" in signoff(db, "runs") and MANAGER in signoff(db, "runs")
    signoff(db, "approve", pending(db))
    signoff(db, "resume", "run_boss")
    assert_answered_once(db)


def test_crash_while_the_grandchild_waits(db: Path) -> None:
    assert harness(db, "start", "grandchild_waits").returncode == KILLED
    found = runs(db)
    assert found[CLERK].status == "paused"
    assert found[MANAGER].status == found["run_boss"].status == "running"  # their driver died
    signoff(db, "approve", pending(db))
    time.sleep(LEASE + 0.1)
    signoff(db, "worker", "--once", "--quiet")
    assert_answered_once(db)


@pytest.mark.parametrize("boundary", ["after_call", "grandchild_done"])
def test_crash_between_the_approved_call_and_the_child(db: Path, boundary: str) -> None:
    harness(db, "start")
    signoff(db, "approve", pending(db))
    assert harness(db, "resume", boundary).returncode == KILLED
    assert len(effects(db)) == 1  # the charge ran; nobody above has its answer yet
    assert runs(db)[MANAGER].status != "finished"
    assert tool_results(db, MANAGER, "manager_call") == []
    time.sleep(LEASE + 0.1)
    if boundary == "after_call":
        signoff(db, "resume", "run_boss")
    else:
        signoff(db, "worker", "--once", "--quiet")
    assert_answered_once(db)  # never charged again


def test_a_rejection_inside_is_the_childs_answer(db: Path) -> None:
    harness(db, "start")
    signoff(db, "reject", pending(db), "--reason", "not this month")
    signoff(db, "resume", "run_boss")
    found = runs(db)
    assert effects(db) == []
    assert found["run_boss"].status == "finished"
    (answer,) = tool_results(db, "run_boss", "boss_call")
    assert answer.startswith("manager: clerk: ") and "not this month" in answer
    assert found["run_boss"].note == f"boss: {answer}"


# ------------------------------------------------------------------ in one process


def start(store: Store, tmp_path: Path, **metadata: object) -> Run:
    meta = {"effects": str(tmp_path / "effects.log"), **metadata}
    runner = Runner(store, nested_agents.boss(meta), agent_ref="nested_agents:boss")
    return runner.start([{"role": "user", "content": "go"}], metadata=meta, run_id="run_boss")


def test_a_deny_inside_is_reported_up_as_the_tool_result(store: Store, tmp_path: Path) -> None:
    run = start(store, tmp_path, deny_charge=True)
    assert run.status == "finished" and store.list_requests() == []
    (answer,) = [m["content"] for m in store.load_messages("run_boss") if m.get("role") == "tool"]
    assert answer == "manager: clerk: Tool call charge was denied by policy: denied by rule charge"
    assert not (tmp_path / "effects.log").exists()


def test_a_parent_is_not_ready_while_its_child_is_unfinished(store: Store, tmp_path: Path) -> None:
    start(store, tmp_path)
    assert store.claim_run("w", lease_seconds=60) is None
    (request,) = store.list_requests(state="pending")
    from signoff.approvals import decide
    from signoff.models import Decision

    decide(store, request.id, Decision("approve"), actor="alice")
    claimed = store.claim_run("w", lease_seconds=60)
    assert claimed is not None and claimed.id == CLERK  # the deepest goes first
    store.release_run(CLERK, "w")


def test_the_record_links_the_runs(store: Store, tmp_path: Path) -> None:
    start(store, tmp_path)
    assert [r.id for r in store.child_runs("run_boss")] == [MANAGER]
    assert descendants(store, "run_boss") == [MANAGER, CLERK]
    assert lineage(store, store.get_run(CLERK)) == [CLERK, MANAGER, "run_boss"]
    events = store.events_after(0, 1000)
    for event in events:
        if event.run_id in (MANAGER, CLERK) and event.kind.startswith("run."):
            assert event.data["parent_run"] == store.get_run(event.run_id).parent_id
    created = [e for e in events if e.kind == RUN_CREATED and e.run_id == MANAGER]
    assert created[0].data["parent_call"] == "boss_call"
    assert all("parent_run" not in e.data for e in events if e.run_id == "run_boss")
    (asked,) = [e for e in events if e.kind == "request.created"]
    assert asked.run_id == CLERK and asked.data["parent_runs"] == [MANAGER, "run_boss"]


def test_audit_of_a_run_can_include_its_children(db: Path) -> None:
    harness(db, "start")
    own = {e["run_id"] for e in json.loads(signoff(db, "audit", "--run", "run_boss", "--json"))}
    assert own == {"run_boss"}
    out = signoff(db, "audit", "--run", "run_boss", "--children", "--json")
    assert {e["run_id"] for e in json.loads(out)} == {"run_boss", MANAGER, CLERK}


def test_a_child_run_needs_an_existing_parent(store: Store) -> None:
    orphan = Run(id="run_x", parent_id="run_missing", parent_call_id="c1")
    with pytest.raises(InvalidInput, match="parent 'run_missing'"):
        store.create_run(orphan, [])
    with pytest.raises(InvalidInput, match="both a parent run and the parent's call id"):
        store.create_run(Run(id="run_y", parent_id="run_missing"), [])


def test_a_runs_parent_cannot_change(store: Store) -> None:
    store.create_run(Run(id="run_p"), [])
    child = store.create_run(Run(id="run_c", parent_id="run_p", parent_call_id="c1"), [])
    from dataclasses import replace

    with pytest.raises(InvalidInput, match="its parent cannot change"):
        store.save_run(replace(child, parent_id=None, parent_call_id=None), [], expected_version=1)


def test_an_unknown_agent_is_refused_with_the_names_it_may_start(
    store: Store, tmp_path: Path
) -> None:
    from signoff.llm import ScriptedModel

    meta = {"effects": str(tmp_path / "effects.log")}
    agent = nested_agents.boss(meta)
    agent.model = ScriptedModel(
        [
            {
                "tool_calls": [
                    {
                        "id": "c1",
                        "function": {
                            "name": "delegate",
                            "arguments": {"agent": "ceo", "task": "x"},
                        },
                    }
                ]
            },
            {"content": "ok"},
        ]
    )
    run = Runner(store, agent, agent_ref="nested_agents:boss").start(
        [{"role": "user", "content": "go"}], metadata=meta
    )
    assert run.status == "finished" and store.child_runs(run.id) == []
    (result,) = [m["content"] for m in store.load_messages(run.id) if m.get("role") == "tool"]
    assert "no agent named 'ceo'" in result and "clerk, manager" in result


@pytest.mark.parametrize(
    ("agents", "problem"),
    [
        ({}, "at least one agent"),
        ({"a b": "m:f"}, "agent name 'a b'"),
        ({"a": "not a reference"}, "package.module:factory"),
    ],
)
def test_a_delegate_is_configured_with_clear_errors(agents: dict[str, str], problem: str) -> None:
    with pytest.raises(ConfigurationError, match=problem):
        Delegate(agents)


def test_a_delegate_outside_a_run_does_not_run() -> None:
    with pytest.raises(ConfigurationError, match="only inside a durable run"):
        nested_agents.DELEGATE(agent="clerk", task="x")


def test_an_agent_that_delegates_to_itself_stops_at_the_depth_limit(
    store: Store, tmp_path: Path
) -> None:
    meta = {"effects": str(tmp_path / "effects.log")}
    agent = nested_agents.looping_boss(meta)  # its only agent is a boss like itself
    run = Runner(store, agent, agent_ref="nested_agents:looping_boss").start(
        [{"role": "user", "content": "go"}], metadata=meta, run_id="run_loop"
    )
    assert run.status == "finished"
    chain = ["run_loop", *descendants(store, "run_loop")]
    assert len(chain) == MAX_DEPTH and {store.get_run(r).status for r in chain} == {"finished"}
    assert run.note is not None and run.note.endswith(
        f"runs nest at most {MAX_DEPTH} deep, and run {chain[-1]} is that deep"
    )


def test_the_web_inbox_shows_a_childs_request_under_its_parents(tmp_path: Path) -> None:
    from web_helpers import LiveServer

    with LiveServer(tmp_path) as live:
        start(live.store, tmp_path)
        (request,) = live.store.list_requests(state="pending")
        with live.client() as c:
            page = c.get("/").text
            assert f"{CLERK} ← {MANAGER} ← run_boss" in page
            assert request.id in c.get("/", params={"run": "run_boss"}).text  # under the parent
            assert request.id in c.get("/", params={"run": MANAGER}).text
            assert request.id not in c.get("/", params={"run": "run_other"}).text
            card = f"/fragments/card/{request.id}"
            assert c.get(card, params={"run": "run_boss", "state": "all"}).status_code == 200
            assert c.get(card, params={"run": "run_other", "state": "all"}).status_code == 204


def test_a_child_run_document_is_frozen() -> None:
    """tests/fixtures/v1/run_child.json was written once by the store: a child run paused
    while its own child waits. Never regenerate it (see test_store_fixtures)."""
    doc = json.loads((Path(__file__).parent / "fixtures" / "v1" / "run_child.json").read_text())
    run = Run.from_json(doc)
    assert run.to_json() == doc
    assert (run.parent_id, run.parent_call_id) == ("run_boss", "boss_call")
    assert run.waiting_for == ["run_83971f0e9046"] and run.waiting_on == []
    assert run.pending[0].child_run == "run_83971f0e9046"


def test_a_started_child_is_followed_not_judged_again(store: Store, tmp_path: Path) -> None:
    """The parent died after starting its child, before noting it; meanwhile a rule now
    asks before any delegation. The call is not asked again (that would orphan the child):
    the child it started answers it."""
    from dataclasses import replace

    from signoff.approvals import decide
    from signoff.models import Decision
    from signoff.policy import Policy
    from signoff.settings import Settings
    from signoff.tools import Registry

    start(store, tmp_path)
    boss = store.get_run("run_boss")
    forgot = replace(boss, pending=tuple(replace(p, child_run=None) for p in boss.pending))
    store.save_run(forgot, [], expected_version=boss.version)
    (request,) = store.list_requests(state="pending")
    decide(store, request.id, Decision("approve"), actor="alice")
    agent = nested_agents.boss({"effects": str(tmp_path / "effects.log")})
    registry = Registry(builtins=False)
    registry.add(nested_agents.DELEGATE.spec())
    agent.policy = Policy(Settings.from_rules(ask=["delegate"]), workspace=".", registry=registry)
    run = Runner(store, agent, agent_ref="nested_agents:boss").resume("run_boss")
    assert run.status == "finished" and run.note == ANSWER
    assert [r.id for r in store.list_requests()] == [request.id]  # no new question
    assert len((tmp_path / "effects.log").read_text().splitlines()) == 1


def test_an_asked_delegation_starts_the_edited_task_once(store: Store, tmp_path: Path) -> None:
    """With `ask = ["delegate"]` the parent asks before it delegates; the person edits the
    task; the child starts with the edited task, after the approval, once."""
    from signoff.approvals import decide
    from signoff.models import Decision
    from signoff.policy import Policy
    from signoff.settings import Settings
    from signoff.tools import Registry

    meta = {"effects": str(tmp_path / "effects.log")}
    agent = nested_agents.boss(meta)
    registry = Registry(builtins=False)
    registry.add(nested_agents.DELEGATE.spec())
    agent.policy = Policy(Settings.from_rules(ask=["delegate"]), workspace=".", registry=registry)
    runner = Runner(store, agent, agent_ref="nested_agents:boss")
    run = runner.start([{"role": "user", "content": "go"}], metadata=meta, run_id="run_boss")
    assert run.status == "paused" and store.child_runs("run_boss") == []  # asked first
    (asked,) = store.list_requests(state="pending")
    edited = {"agent": "manager", "task": "get 42 charged, with a receipt"}
    decide(store, asked.id, Decision("edit", arguments=edited), actor="alice", policy=agent.policy)
    run = runner.resume("run_boss")
    assert run.status == "paused" and run.waiting_for == [MANAGER] and run.waiting_on == []
    first = store.load_messages(MANAGER)[0]
    assert first == {"role": "user", "content": "get 42 charged, with a receipt"}
    assert store.get_outcome(asked.id) is not None
    assert store.get_request(asked.id).state == "finished"
    (charge,) = store.list_requests(state="pending")
    decide(store, charge.id, Decision("approve"), actor="alice")
    run = runner.resume("run_boss")
    assert run.status == "finished" and run.note == ANSWER
    assert len((tmp_path / "effects.log").read_text().splitlines()) == 1
    assert [r.id for r in store.child_runs("run_boss")] == [MANAGER]
