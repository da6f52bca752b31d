"""The driver keeps its leases while it works, and stops once one was taken (in process, a
lease of one second; `test_worker_leases` does it with `signoff worker`
processes). And `signoff.outage`: one line per outage, capped, jittered waits."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest

from signoff.exceptions import LeaseLost, StoreUnavailable
from signoff.llm import ScriptedModel
from signoff.outage import Outage
from signoff.policy import Policy
from signoff.runs.agent import Agent
from signoff.runs.runner import Runner
from signoff.settings import Settings
from signoff.store import Store, open_store
from signoff.tools import Registry, ToolSpec

LEASE = 1.0  # seconds: renewed every third of it


@pytest.fixture(params=["memory", "sqlite"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    opened = open_store("memory:" if request.param == "memory" else str(tmp_path / "s.db"))
    yield opened
    opened.close()


def agent(tmp_path: Path, tools: dict[str, Any], calls: list[str]) -> Agent:
    def reply(messages: list[dict[str, Any]]) -> dict[str, Any]:
        if any(m.get("role") == "tool" for m in messages):
            return {"content": "done"}
        return {
            "content": "looking",
            "tool_calls": [
                {"id": f"c{i}", "function": {"name": name, "arguments": {}}}
                for i, name in enumerate(calls)
            ],
        }

    registry = Registry(builtins=False)
    for name in tools:
        registry.add(ToolSpec(name, "read"))  # allowed: they run at once
    return Agent(
        model=ScriptedModel.history_driven(reply),
        tools=tools,
        policy=Policy(Settings(), workspace=tmp_path, registry=registry),
    )


@pytest.mark.slow  # a tool three leases long, on each backend
def test_a_tool_longer_than_the_lease_keeps_the_run(store: Store, tmp_path: Path) -> None:
    taken: list[object] = []
    running = threading.Event()
    done = threading.Event()

    def slow() -> str:
        running.set()
        time.sleep(3 * LEASE)
        return "slow result"

    def other_worker() -> None:  # looks for ready runs all along
        running.wait(10)
        while not done.is_set():
            found = store.claim_run("other", lease_seconds=LEASE)
            if found is not None:
                taken.append(found)
            time.sleep(0.02)

    thread = threading.Thread(target=other_worker)
    thread.start()
    try:
        runner = Runner(store, agent(tmp_path, {"slow": slow}, ["slow"]), lease_seconds=LEASE)
        run = runner.start([{"role": "user", "content": "go"}])
    finally:
        done.set()
        thread.join()
    assert run.status == "finished" and taken == []


@pytest.mark.slow  # waits for a renewal to find the run taken
def test_a_driver_whose_run_was_taken_runs_nothing_more(store: Store, tmp_path: Path) -> None:
    ran: list[str] = []
    holder: dict[str, str] = {}

    def first() -> str:
        ran.append("first")
        # another worker takes the run as if its lease had lapsed (a stopped process)
        store.claim_run("other", run_id=holder["run"], now=time.time() + 3600)
        time.sleep(LEASE)  # the driver's next renewal (a third of it) finds the run gone
        return "one"

    def second() -> str:
        ran.append("second")
        return "two"

    tools = {"first": first, "second": second}
    runner = Runner(store, agent(tmp_path, tools, ["first", "second"]), lease_seconds=LEASE)
    real_create = store.create_run

    def create_run(run: Any, *args: Any, **kwargs: Any) -> Any:
        holder["run"] = run.id
        return real_create(run, *args, **kwargs)

    store.create_run = create_run  # type: ignore[method-assign]
    with pytest.raises(LeaseLost, match="no longer leased to"):
        runner.start([{"role": "user", "content": "go"}])
    assert ran == ["first"]  # the second call was not run for a run that is another's


def test_an_outage_is_said_once_and_its_end_once() -> None:
    said: list[str] = []
    clock = iter(float(t) for t in range(100))
    outage = Outage("worker w", said.append, clock=lambda: next(clock), jitter=lambda: 1.0)
    waits = [outage.failed(StoreUnavailable("gone\nfor now")) for _ in range(8)]
    assert waits == [0.5, 1.0, 2.0, 4.0, 8.0, 15.0, 15.0, 15.0]  # doubling, capped
    outage.recovered()
    outage.recovered()  # no outage under way: nothing to say
    assert len(said) == 2
    assert said[0].startswith("worker w: the store is unreachable (gone for now)")
    assert said[1] == "worker w: the store is back after 1.0 s (8 failed attempts); carrying on"
    low = Outage("w", said.append, jitter=lambda: 0.0)
    assert low.failed(StoreUnavailable("x")) == 0.25  # jitter: half to all of the step
    assert low.outages == 1 and low.ongoing
