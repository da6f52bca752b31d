"""The core the framework adapters share (`signoff.adapters.frameworks`), on a real SQLite
store: ids that survive replays, the run leased away from `signoff worker`, two processes
driving one thread, and the idempotency key a tool sees."""

from __future__ import annotations

from pathlib import Path

import pytest

from signoff import Settings
from signoff.adapters.frameworks import Guard, idempotency_key
from signoff.approvals import decide
from signoff.exceptions import ConflictError
from signoff.models import Decision, ToolCall
from signoff.policy import Policy
from signoff.runs.worker import work
from signoff.tools import ToolSpec


def guard(tmp_path: Path) -> Guard:
    policy = Policy(Settings.from_rules(deny=["wire(to=evil*)"]), workspace=tmp_path)
    return Guard(
        "testfw",
        store=str(tmp_path / "s.db"),
        policy=policy,
        tools=[ToolSpec(name="wire", tier="external")],
    )


def test_ids_come_from_the_framework_thread_and_call(tmp_path: Path) -> None:
    g = guard(tmp_path)
    assert g.request_id("t1", "c1") == g.request_id("t1", "c1")
    assert len({g.request_id("t1", "c1"), g.request_id("t1", "c2"), g.request_id("t2", "c1")}) == 3
    other = Guard("otherfw", store=g.store, policy=g.policy)
    assert other.request_id("t1", "c1") != g.request_id("t1", "c1")


def test_the_store_is_protected_wherever_it_lives(tmp_path: Path) -> None:
    # s.db is not under .signoff/: the guard's policy is told it is signoff's own state,
    # so no agent it judges reads the transcripts and decisions of every run in it
    g = guard(tmp_path)
    for command in ("cat s.db", "strings s.db-wal", "cp s.db /tmp/copy.db"):
        verdict = g.policy.evaluate(ToolCall("execute_command", {"command": command}))
        assert verdict.effect == "deny", command


def test_asking_twice_finds_the_same_request(tmp_path: Path) -> None:
    g = guard(tmp_path)
    call = ToolCall("wire", {"to": "bob", "amount": 5}, "c1")
    verdict = g.judge(call, thread="t1")
    assert verdict.effect == "ask"
    first = g.ask(call, verdict, thread="t1")
    again = guard(tmp_path).ask(call, verdict, thread="t1")  # a fresh process replays it
    assert first.id == again.id
    assert [r.id for r in g.store.list_requests()] == [first.id]
    assert g.run("t1").waiting_on == [first.id]


def test_the_signoff_worker_leaves_framework_runs_alone(tmp_path: Path) -> None:
    g = guard(tmp_path)
    call = ToolCall("wire", {"to": "bob"}, "c1")
    request = g.ask(call, g.judge(call, thread="t1"), thread="t1")
    g.save("t1", status="paused")
    decide(g.store, request.id, Decision("approve"), actor="alice")
    # decided and paused: a signoff run would be ready; this one is the adapter's
    assert work(g.store, once=True) == 0
    assert g.store.get_run(g.run_id("t1")).status == "paused"


def test_two_processes_driving_one_thread_one_wins(tmp_path: Path) -> None:
    a, b = guard(tmp_path), guard(tmp_path)
    a.run("t1")
    a.begin("t1")
    b.begin("t1")
    b.save("t1", status="paused", messages=[{"kind": "response", "n": 1}])
    with pytest.raises(ConflictError, match="saved by another process"):
        a.save("t1", status="paused", messages=[{"kind": "response", "n": 2}])
    assert a.load_messages("t1") == [{"kind": "response", "n": 1}]
    # verdicts alone are merged onto the run as it is now
    call = ToolCall("wire", {"to": "evil corp"}, "c9")
    assert a.judge(call, thread="t1").effect == "deny"
    a.flush("t1")
    kinds = [e.kind for e in a.store.events_after(0, limit=100)]
    assert "verdict" in kinds


def test_a_save_after_begin_reads_no_run_and_a_stale_one_is_read_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b = guard(tmp_path), guard(tmp_path)
    a.begin("t1")
    reads: list[str] = []
    get_run = a.store.get_run
    monkeypatch.setattr(a.store, "get_run", lambda run_id: reads.append(run_id) or get_run(run_id))
    a.save("t1", messages=[{"kind": "request", "n": 1}])
    assert reads == []  # the run as begin read it, at the version it expects
    b.begin("t1")
    b.save("t1", messages=[{"kind": "response", "n": 2}])
    reads.clear()  # (a and b share the process's store: b's reads were counted too)
    # a's copy is stale now: a call it asks is merged onto the run as it is (read again)
    call = ToolCall("wire", {"to": "bob"}, "c1")
    asked = a.ask(call, a.judge(call, thread="t1"), thread="t1")
    assert reads and a.store.get_request(asked.id).state == "pending"
    assert [p.request_id for p in a.run("t1").pending] == [asked.id]
    assert a.load_messages("t1") == [{"kind": "request", "n": 1}, {"kind": "response", "n": 2}]


def test_a_held_request_made_meanwhile_elsewhere_is_found_not_made_twice(tmp_path: Path) -> None:
    a, b = guard(tmp_path), guard(tmp_path)
    call = ToolCall("wire", {"to": "bob"}, "c1")
    held = a.ask(call, a.judge(call, thread="t1"), thread="t1", defer=True)  # with the next save
    made = b.ask(call, b.judge(call, thread="t1"), thread="t1")  # another process, stored now
    assert made.id == held.id
    a.flush("t1")  # its held request is refused as a duplicate, looked for, and found
    assert [r.id for r in a.store.list_requests(run_id=a.run_id("t1"))] == [made.id]
    assert [p.request_id for p in a.run("t1").pending] == [made.id]


def test_an_approved_call_runs_once_with_its_request_as_key(tmp_path: Path) -> None:
    g = guard(tmp_path)
    call = ToolCall("wire", {"to": "bob"}, "c1")
    request = g.ask(call, g.judge(call, thread="t1"), thread="t1")
    decide(g.store, request.id, Decision("approve"), actor="alice")
    settled = g.settle(request.id, thread="t1")
    assert settled.action == "run"
    seen: list[str | None] = []
    ran, value = g.run_once(settled.request, lambda: seen.append(idempotency_key()) or "ok")
    assert (ran, value) == (True, "ok") and seen == [request.id]
    again = guard(tmp_path)
    ran, value = again.run_once(again.settle(request.id, thread="t1").request, lambda: 1 / 0)
    assert (ran, value) == (False, "ok") and len(seen) == 1  # the stored result
    assert idempotency_key() is None


def test_a_grant_turns_an_ask_into_an_allow_and_never_a_deny(tmp_path: Path) -> None:
    from signoff.models import Grant

    g = guard(tmp_path)
    asked = ToolCall("wire", {"to": "bob"}, "c1")
    denied = ToolCall("wire", {"to": "evil corp"}, "c2")
    assert g.judge(asked, thread="t1").effect == "ask"
    g.store.add_grant(Grant(rule="wire", scope="project", id="g1"))
    assert g.judge(asked, thread="t1").effect == "allow"
    assert g.judge(denied, thread="t1").effect == "deny"  # a deny still wins


def test_an_approved_call_denied_since_is_refused_whatever_the_grants(tmp_path: Path) -> None:
    from signoff.models import Grant

    lenient = Guard(
        "testfw",
        store=str(tmp_path / "s.db"),
        policy=Policy(workspace=tmp_path),
        tools=[ToolSpec(name="wire", tier="external")],
    )
    call = ToolCall("wire", {"to": "evil corp"}, "c1")
    request = lenient.ask(call, lenient.judge(call, thread="t1"), thread="t1")
    decide(lenient.store, request.id, Decision("approve"), actor="alice")
    lenient.store.add_grant(Grant(rule="wire", scope="project", id="g1"))
    settled = guard(tmp_path).settle(request.id, thread="t1")  # the deny rule came meanwhile
    assert settled.action == "refused"
    assert settled.content is not None and "wire(to=evil*)" in settled.content


def test_a_finish_written_later_is_on_the_record_once_awaited(tmp_path: Path) -> None:
    import asyncio

    g = guard(tmp_path)
    call = ToolCall("wire", {"to": "bob"}, "c1")
    request = g.ask(call, g.judge(call, thread="t1"), thread="t1")
    decide(g.store, request.id, Decision("approve"), actor="alice")
    settled = g.settle(request.id, thread="t1")

    async def wire() -> str:
        return f"wired, key {idempotency_key()}"

    async def go() -> tuple[bool, object]:
        later: list[asyncio.Future[None]] = []
        ran, value = await g.arun_once(settled.request, wire, later=later)
        assert len(later) == 1
        await asyncio.gather(*later)
        return ran, value

    ran, value = asyncio.run(go())
    assert (ran, value) == (True, f"wired, key {request.id}")
    assert g.store.get_request(request.id).state == "finished"
    outcome = g.store.get_outcome(request.id)
    assert outcome is not None and outcome.get("result") == f"wired, key {request.id}"


def test_finishes_are_written_by_one_thread_for_every_run_of_the_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import asyncio
    import threading

    from signoff.adapters import finisher

    g = guard(tmp_path)
    writers: set[threading.Thread] = set()
    finish = g._finish

    def noted(*args: object) -> None:
        writers.add(threading.current_thread())
        finish(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(g, "_finish", noted)

    async def wire() -> str:
        return "wired"

    async def one(call_id: str) -> None:  # a run of its own: asyncio.run makes a new loop
        call = ToolCall("wire", {"to": "bob"}, call_id)
        request = g.ask(call, g.judge(call, thread="t1"), thread="t1")
        decide(g.store, request.id, Decision("approve"), actor="alice")
        later: list[asyncio.Future[None]] = []
        await g.arun_once(g.settle(request.id, thread="t1").request, wire, later=later)
        await asyncio.gather(*later)
        assert g.store.get_request(request.id).state == "finished"

    for call_id in ("c1", "c2"):
        asyncio.run(one(call_id))
    assert len(writers) == 1 and next(iter(writers)).name.startswith("signoff-finish")
    pool = finisher.finisher()
    assert finisher.finisher() is pool
    monkeypatch.setattr(finisher.os, "getpid", lambda: -1)  # as a child of fork() sees it
    assert finisher.finisher() is not pool


def test_messages_are_stored_with_lone_surrogates_replaced(tmp_path: Path) -> None:
    g = guard(tmp_path)
    g.begin("t1")
    said = {"kind": "request", "parts": [{"content": "ok \ud800 then", "n": (1, 2)}]}
    plain = {"kind": "response", "parts": [{"content": "caf\u00e9", "n": [3]}]}
    g.save("t1", status="paused", messages=[said, plain])
    assert g.load_messages("t1") == [
        {"kind": "request", "parts": [{"content": "ok \ufffd then", "n": [1, 2]}]},
        plain,
    ]


_JUDGE_THEN_DIE = """
import os, signal, sys
from signoff import Settings
from signoff.adapters.frameworks import Guard
from signoff.models import ToolCall
from signoff.policy import Policy
from signoff.tools import ToolSpec

root = sys.argv[1]
policy = Policy(Settings.from_rules(allow=["wire(to=bob)"]), workspace=root)
g = Guard("testfw", store=os.path.join(root, "s.db"), policy=policy,
          tools=[ToolSpec(name="wire", tier="external")])
for n in range(3):
    assert g.judge(ToolCall("wire", {"to": "bob", "n": n}, f"c{n}"), thread="t1").effect == "allow"
    # the call would run here; the process dies before the run is ever saved
os.kill(os.getpid(), signal.SIGKILL)
"""


@pytest.mark.slow  # a process killed with SIGKILL
def test_a_verdict_is_on_the_record_before_its_call_runs_even_if_the_process_dies(
    tmp_path: Path,
) -> None:
    import subprocess
    import sys

    from signoff.kinds import VERDICT
    from signoff.store import open_store

    done = subprocess.run([sys.executable, "-c", _JUDGE_THEN_DIE, str(tmp_path)], timeout=60)
    assert done.returncode == -9
    store = open_store(str(tmp_path / "s.db"))
    verdicts = [e for e in store.events_after(0, 100) if e.kind == VERDICT]
    assert [v.data["call"]["arguments"]["n"] for v in verdicts] == [0, 1, 2]
    assert {v.data["verdict"]["effect"] for v in verdicts} == {"allow"}
    assert {v.run_id for v in verdicts} == {guard(tmp_path).run_id("t1")}
