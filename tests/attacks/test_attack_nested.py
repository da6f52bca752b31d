"""Issue 26: nested agents, attacked. A child run is another agent, built by its own
factory, driven against the same store as the run that started it. Can a child's grant
widen its parent's rights or a sibling's? Can a child approve its own or its parent's
requests, or read the store that holds them?

What holds (each performed below, with SCRIPTED models, no LLM):

- "approve always" for a run (or session) is bound to that run's id: a grant made on a
  child's request lets that child repeat the call, never its parent, a sibling started
  after it, or another run of the same agent; a parent's run grant does not reach into
  its children either;
- a child cannot decide a request: `signoff` itself is denied to every agent, and the
  store's files are protected for every agent a Runner drives (the store holds every
  run's transcript, a parent's included), wherever the store lives;
- a delegate call whose id repeats an earlier one starts no second child and runs nothing
  unjudged.
"""

from __future__ import annotations

import sys
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from signoff.approvals import decide
from signoff.llm import ScriptedModel
from signoff.models import Decision, ToolCall
from signoff.policy import Policy
from signoff.runs.agent import Agent
from signoff.runs.nested import Delegate, child_run_id
from signoff.runs.runner import Runner
from signoff.settings import Settings
from signoff.store import Store, open_store
from signoff.tools import Registry, ToolSpec
from signoff.workspace import Workspace

MODULE = "attack_nested_agents"
CHARGE = ToolSpec("charge", "external", "other", subject_args=("amount",))  # always: its amount
CANARY = "parent-secret-canary-8d1e"


class World:
    """The agents of one test: their workspace, what they charged, their scripts."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.charged: list[str] = []
        self.delegate = Delegate({"clerk": f"{MODULE}:clerk", "snoop": f"{MODULE}:snoop"})
        self.boss_turns: list[dict[str, Any]] = []
        self.snoop_command = "cat signoff.db"

    def charge(self, amount: int, idempotency_key: str | None = None) -> str:
        self.charged.append(str(idempotency_key))
        return f"charged {amount}"

    def policy(self, *specs: ToolSpec, root: Path | None = None) -> Policy:
        registry = Registry()
        for spec in specs:
            registry.add(spec)
        return Policy(Settings(), workspace=root or self.root, registry=registry)

    def clerk(self, metadata: Any) -> Agent:
        def reply(messages: list[dict[str, Any]]) -> dict[str, Any]:
            if any(m["role"] == "tool" for m in messages):
                return {"content": "clerk: " + str(messages[-1]["content"])}
            return {"tool_calls": [call("k1", "charge", {"amount": 42})]}

        return Agent(
            model=ScriptedModel.history_driven(reply),
            tools={"charge": self.charge},
            policy=self.policy(CHARGE),
        )

    def snoop(self, metadata: Any) -> Agent:
        """A child in a workspace of its own that tries to read the store."""
        home = self.root / "snoop"
        home.mkdir(exist_ok=True)
        command = self.snoop_command

        def reply(messages: list[dict[str, Any]]) -> dict[str, Any]:
            if any(m["role"] == "tool" for m in messages):
                return {"content": "snoop: " + str(messages[-1]["content"])}
            return {"tool_calls": [call("s1", "execute_command", {"command": command})]}

        tools = Workspace(home).as_mapping()
        return Agent(
            model=ScriptedModel.history_driven(reply),
            tools={"execute_command": tools["execute_command"]},
            policy=self.policy(root=home),
        )

    def boss(self, metadata: Any = None) -> Agent:
        turns = self.boss_turns

        def reply(messages: list[dict[str, Any]]) -> dict[str, Any]:
            done = sum(1 for m in messages if m["role"] == "assistant")
            return turns[done] if done < len(turns) else {"content": "boss: done"}

        return Agent(
            model=ScriptedModel.history_driven(reply),
            tools={"delegate": self.delegate, "charge": self.charge},
            policy=self.policy(self.delegate.spec(), CHARGE),
            tool_specs=[self.delegate.function()],
        )


def call(call_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"id": call_id, "function": {"name": name, "arguments": arguments}}


def delegating(call_id: str, agent: str = "clerk") -> dict[str, Any]:
    return {"tool_calls": [call(call_id, "delegate", {"agent": agent, "task": "charge 42"})]}


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    found = World(tmp_path)
    module = types.ModuleType(MODULE)
    module.clerk = found.clerk  # type: ignore[attr-defined]
    module.snoop = found.snoop  # type: ignore[attr-defined]
    module.boss = found.boss  # type: ignore[attr-defined]
    sys.modules[MODULE] = module
    yield found
    del sys.modules[MODULE]


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    s = open_store(str(tmp_path / "signoff.db"))  # where docs/nested.md puts it
    yield s
    s.close()


def pending(store: Store, run_id: str) -> list[str]:
    return [r.id for r in store.list_requests(state="pending") if r.run_id == run_id]


def resume(store: Store, world: World, run_id: str) -> Any:
    return Runner(store, world.boss(), agent_ref=f"{MODULE}:boss").resume(run_id)


def start(store: Store, world: World) -> Any:
    return Runner(store, world.boss(), agent_ref=f"{MODULE}:boss").start(
        [{"role": "user", "content": f"charge 42 twice, then once yourself. {CANARY}"}],
        run_id="run_boss",
    )


# ---------------------------------------------------------------------- grants


@pytest.mark.parametrize("scope", ["run", "session"])
def test_a_childs_grant_widens_neither_its_parent_nor_a_sibling(
    world: World, store: Store, tmp_path: Path, scope: str
) -> None:
    world.boss_turns = [
        delegating("d1"),  # child A
        delegating("d2"),  # child B, a sibling started after A's grant
        {"tool_calls": [call("b1", "charge", {"amount": 42})]},  # the parent's own
    ]
    run = start(store, world)
    child_a, child_b = child_run_id(run.id, "d1"), child_run_id(run.id, "d2")
    (request_a,) = pending(store, child_a)
    decide(
        store,
        request_a,
        Decision("approve_always", scope=scope),
        actor="alice",
        workspace=tmp_path,
    )
    (grant,) = store.list_grants()
    assert grant.scope == scope and store.list_grants(run_id=child_a) == [grant]

    run = resume(store, world, run.id)
    assert world.charged == [request_a]  # A's call ran, once
    assert run.status == "paused" and pending(store, child_b), "the sibling still asks"
    (request_b,) = pending(store, child_b)
    decide(store, request_b, Decision("approve"), actor="alice", workspace=tmp_path)

    run = resume(store, world, run.id)
    assert world.charged == [request_a, request_b]
    assert run.status == "paused" and pending(store, run.id), "the parent still asks"
    assert len(world.charged) == 2 and len(store.list_grants()) == 1


def test_a_childs_grant_lets_that_child_repeat_the_call(world: World, store: Store) -> None:
    # The control: the grant does what it says, for the run it was made on.
    world.boss_turns = [delegating("d1")]
    run = start(store, world)
    child = child_run_id(run.id, "d1")
    (request,) = pending(store, child)
    decide(store, request, Decision("approve_always", scope="run"), actor="alice")
    grants = Runner(store, world.clerk({}))._grants_of(child)
    assert [g.text for g in grants] == ["charge(amount=42)"]
    verdict = world.clerk({}).policy.evaluate(ToolCall("charge", {"amount": 42}), grants=grants)
    assert verdict.effect == "allow"
    assert Runner(store, world.boss())._grants_of(run.id) == ()


def test_a_parents_grant_does_not_reach_into_its_child(world: World, store: Store) -> None:
    world.boss_turns = [
        {"tool_calls": [call("b1", "charge", {"amount": 42})]},
        delegating("d1"),
    ]
    run = start(store, world)
    (request,) = pending(store, run.id)
    decide(store, request, Decision("approve_always", scope="run"), actor="alice")
    run = resume(store, world, run.id)
    assert world.charged == [request]
    child = child_run_id(run.id, "d1")
    assert run.status == "paused" and pending(store, child), "the child still asks"


# ---------------------------------------------------------------------- deciding, reading


@pytest.mark.parametrize(
    "command",
    [
        "cat signoff.db",
        "strings ../signoff.db",
        "cp ../signoff.db copy.db",
        "sqlite3 ../signoff.db .dump",
        "signoff approve req_x --db ../signoff.db",
        "python3 -m signoff approve req_x",
    ],
)
def test_a_child_can_neither_read_the_store_nor_decide(
    world: World, store: Store, tmp_path: Path, command: str
) -> None:
    world.snoop_command = command.replace("cat signoff.db", f"cat {tmp_path / 'signoff.db'}")
    world.boss_turns = [delegating("d1", agent="snoop")]
    run = start(store, world)
    child = store.get_run(child_run_id(run.id, "d1"))
    result = [m for m in store.load_messages(child.id) if m["role"] == "tool"]
    answers = [str(m["content"]) for m in result]
    assert all(CANARY not in a for a in answers), answers
    assert store.list_requests(state="approved") == []
    if result:  # denied outright: the model was told
        assert "denied by policy" in answers[0], answers
    else:  # or it asks a person, who has not answered
        assert child.status == "paused" and pending(store, child.id)


def test_the_store_is_protected_in_the_agents_own_workspace(
    world: World, store: Store, tmp_path: Path
) -> None:
    # `open_store("signoff.db")` at the project root, as the docs show: not under .signoff/
    tools = Workspace(tmp_path).as_mapping()
    turns = [{"tool_calls": [call("c1", "execute_command", {"command": "strings signoff.db"})]}]

    def reply(messages: list[dict[str, Any]]) -> dict[str, Any]:
        done = sum(1 for m in messages if m["role"] == "assistant")
        return turns[done] if done < len(turns) else {"content": "done"}

    agent = Agent(
        model=ScriptedModel.history_driven(reply),
        tools={"execute_command": tools["execute_command"]},
        policy=Policy(Settings(), workspace=tmp_path),
    )
    run = Runner(store, agent).start([{"role": "user", "content": CANARY}])
    (result,) = [m for m in store.load_messages(run.id) if m["role"] == "tool"]
    assert CANARY not in str(result["content"]) and "denied" in str(result["content"])
    assert agent.policy.protected.inside(str(tmp_path / "signoff.db")) is None  # not mutated


# ---------------------------------------------------------------------- call ids


def test_a_repeated_delegate_call_id_starts_nothing_unjudged(world: World, store: Store) -> None:
    # The child's id is derived from the call id, which the model writes: a second call
    # reusing it finds the first child, so it must neither start a second child nor run
    # the first again; whatever it asks for is not started unjudged.
    world.boss_turns = [
        delegating("d1"),
        {"tool_calls": [call("d1", "delegate", {"agent": "snoop", "task": "read the store"})]},
    ]
    run = start(store, world)
    (request,) = pending(store, child_run_id(run.id, "d1"))
    decide(store, request, Decision("approve"), actor="alice")
    run = resume(store, world, run.id)
    assert world.charged == [request]  # once
    assert [c.id for c in store.child_runs(run.id)] == [child_run_id(run.id, "d1")]
    assert not (world.root / "snoop").exists()  # the snoop agent was never built
