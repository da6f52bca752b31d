"""The gate: every decision kind, sync and async, grants, limits, concurrent prompts."""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from signoff.exceptions import CallDenied, RunStopped
from signoff.gate import Gate
from signoff.models import Decision, ToolCall
from signoff.policy import Policy
from signoff.settings import LOCAL_FILE, Settings, load_settings
from signoff.testing import ScriptedChannel
from signoff.tools import Registry, tool


@tool(tier="external", kind="other", subject_args=("to",))
def send(to: str, body: str = "") -> str:
    """Send a message."""
    return f"sent to {to}"


@tool(tier="read", kind="other")
def lookup(key: str) -> str:
    return key.upper()


@tool(tier="external", kind="other")
async def asend(to: str) -> str:
    await asyncio.sleep(0)
    return f"async sent to {to}"


def make_gate(tmp_path: Path, answers: Any = (), **settings: Any) -> tuple[Gate, ScriptedChannel]:
    channel = ScriptedChannel(answers)
    policy = Policy(Settings.from_rules(**settings), workspace=tmp_path, registry=Registry())
    return Gate(policy, channel), channel


def test_allow_runs_without_asking(tmp_path: Path) -> None:
    gate, channel = make_gate(tmp_path)
    assert gate.wrap(lookup)(key="abc") == "ABC"
    assert channel.prompts == []


def test_notify_runs_and_is_recorded(tmp_path: Path) -> None:
    gate, channel = make_gate(tmp_path)
    target = tmp_path / "a.txt"
    result = gate.execute(
        ToolCall("write_file", {"path": "a.txt", "content": "hi"}),
        lambda path, content: target.write_text(content),
    )
    assert result.ran and target.read_text() == "hi"
    assert [item.call.arguments["path"] for item in gate.review] == ["a.txt"]
    assert channel.prompts == []


def test_deny_never_runs_and_explains(tmp_path: Path) -> None:
    gate, channel = make_gate(tmp_path, deny=["send(to=*@evil.com)"])
    ran: list[str] = []
    result = gate.execute(ToolCall("send", {"to": "x@evil.com"}), lambda **kw: ran.append("x"))
    assert result.outcome == "denied" and not ran and channel.prompts == []
    assert "send(to=*@evil.com)" in result.content
    with pytest.raises(CallDenied) as info:
        gate.wrap(send)(to="y@evil.com")
    assert info.value.rule == "send(to=*@evil.com)"


@pytest.mark.parametrize(
    ("decision", "outcome", "in_content"),
    [
        (Decision("approve"), "ran", "sent to bob"),
        (Decision("reject", reason="not today"), "rejected", "not today"),
        (Decision("skip"), "skipped", "skipped"),
        (Decision("skip", reason="later"), "skipped", "later"),
        (Decision("respond", result={"status": "done by hand"}), "answered", "done by hand"),
        (Decision("edit", arguments={"to": "alice", "body": "hi"}), "ran", "sent to alice"),
    ],
)
def test_each_decision_kind(
    tmp_path: Path, decision: Decision, outcome: str, in_content: str
) -> None:
    gate, channel = make_gate(tmp_path, [decision])
    gate.wrap(send)  # registers the spec
    result = gate.execute(ToolCall("send", {"to": "bob"}), send)
    assert result.outcome == outcome
    assert in_content in result.content
    assert len(channel.prompts) == 1
    prompt = channel.prompts[0]
    assert prompt.request.call.arguments == {"to": "bob"}
    assert prompt.request.digest == ToolCall("send", {"to": "bob"}).digest()


def test_edit_is_validated_against_the_schema(tmp_path: Path) -> None:
    gate, _ = make_gate(tmp_path, [Decision("edit", arguments={"to": 5, "extra": 1})])
    gate.wrap(send)
    ran: list[Any] = []
    result = gate.execute(ToolCall("send", {"to": "bob"}), lambda **kw: ran.append(kw))
    assert result.outcome == "denied" and not ran
    assert "extra" in result.content and "not valid" in result.content


def test_edit_is_judged_again_and_deny_wins(tmp_path: Path) -> None:
    gate, channel = make_gate(
        tmp_path, [Decision("edit", arguments={"to": "x@evil.com"})], deny=["send(to=*@evil.com)"]
    )
    gate.wrap(send)
    ran: list[Any] = []
    result = gate.execute(ToolCall("send", {"to": "bob"}), lambda **kw: ran.append(kw))
    assert not ran and result.outcome == "denied"
    assert "denied" in result.content
    # The channel's validator says the same before the person commits to the edit.
    assert "denied" in (channel.prompts[0].validate_edit({"to": "x@evil.com"}) or "")
    assert channel.prompts[0].validate_edit({"to": "ok"}) is None


def test_approve_always_session_grant_and_clear(tmp_path: Path) -> None:
    gate, channel = make_gate(
        tmp_path, [Decision("approve_always", scope="session"), Decision("reject", reason="no")]
    )
    guarded = gate.wrap(send)
    assert guarded(to="bob") == "sent to bob"
    assert channel.prompts[0].always_rule == "send(to=bob)"
    assert guarded(to="bob", body="again") == "sent to bob"  # granted: no prompt
    assert len(channel.prompts) == 1
    with pytest.raises(CallDenied):
        guarded(to="carol")  # the grant is narrow: carol still asks (and is rejected)
    assert [g.rule for g in gate.grants] == ["send(to=bob)"]
    gate.clear()
    assert gate.grants == []


def test_approve_always_project_writes_local_settings(tmp_path: Path) -> None:
    local = tmp_path / LOCAL_FILE
    local.parent.mkdir()
    local.write_text('# my grants\n[permissions]\n# keep me\nallow = [\n  "lookup",\n]\n')
    gate, _ = make_gate(tmp_path, [Decision("approve_always", scope="project")])
    gate.wrap(send)(to="bob")
    text = local.read_text()
    assert "# my grants" in text and "# keep me" in text
    assert [r.text for r in load_settings(tmp_path, user=False).allow] == ["lookup", "send(to=bob)"]


def test_grant_never_allows_a_denied_call(tmp_path: Path) -> None:
    gate, _ = make_gate(
        tmp_path,
        [Decision("approve_always", scope="session", rule="send")],
        deny=["send(to=*@evil.com)"],
    )
    guarded = gate.wrap(send)
    guarded(to="bob")
    with pytest.raises(CallDenied):
        guarded(to="a@evil.com")


def test_disabled_gate_allows_asks_but_keeps_denies(tmp_path: Path) -> None:
    gate, channel = make_gate(tmp_path, deny=["send(to=*@evil.com)"])
    gate.set_enabled(False)
    guarded = gate.wrap(send)
    assert guarded(to="bob") == "sent to bob"
    with pytest.raises(CallDenied):
        guarded(to="x@evil.com")
    assert channel.prompts == []
    # A tool that can never be denied skips evaluation entirely.
    assert gate._bypass("lookup") and not gate._bypass("send")


def test_mode_switch_at_run_time(tmp_path: Path) -> None:
    gate, _ = make_gate(tmp_path)
    gate.set_mode("plan")
    result = gate.execute(ToolCall("write_file", {"path": "a", "content": ""}), lambda **kw: 1)
    assert result.outcome == "denied" and "plan mode" in result.content


def test_denial_limit_three_in_a_row(tmp_path: Path) -> None:
    gate, _ = make_gate(tmp_path, deny=["send"])
    for _ in range(3):
        assert gate.execute(ToolCall("send", {"to": "x"}), send).outcome == "denied"
    assert gate.stopped and "3 refusals in a row" in gate.stopped
    with pytest.raises(RunStopped):
        gate.execute(ToolCall("lookup", {"key": "a"}), lookup)
    gate.clear()
    assert gate.execute(ToolCall("lookup", {"key": "a"}), lookup).ran


def test_denial_limit_twenty_in_all(tmp_path: Path) -> None:
    gate, _ = make_gate(tmp_path, deny=["send"])
    gate.wrap(lookup)
    for _ in range(9):
        gate.execute(ToolCall("send", {"to": "x"}), send)
        gate.execute(ToolCall("send", {"to": "x"}), send)
        gate.execute(ToolCall("lookup", {"key": "a"}), lookup)  # resets the streak
    assert gate.stopped is None
    gate.execute(ToolCall("send", {"to": "x"}), send)
    gate.execute(ToolCall("send", {"to": "x"}), send)
    assert gate.stopped and "20 in all" in gate.stopped


def test_broken_channel_fails_closed(tmp_path: Path) -> None:
    def explode(prompt: Any) -> Decision:
        raise OSError("terminal gone")

    gate, _ = make_gate(tmp_path, explode)
    result = gate.execute(ToolCall("send", {"to": "bob"}), send)
    assert result.outcome == "rejected" and "terminal gone" in result.content


def test_async_twin(tmp_path: Path) -> None:
    gate, channel = make_gate(tmp_path, [Decision("approve"), Decision("reject", reason="nope")])
    guarded = gate.wrap(asend)

    async def main() -> None:
        assert await guarded(to="bob") == "async sent to bob"
        with pytest.raises(CallDenied, match="nope"):
            await guarded(to="eve")

    asyncio.run(main())
    assert len(channel.prompts) == 2


def test_prompts_from_threads_never_interleave(tmp_path: Path) -> None:
    active = 0
    overlaps = 0
    lock = threading.Lock()

    def slow_answer(prompt: Any) -> Decision:
        nonlocal active, overlaps
        with lock:
            active += 1
            overlaps += active > 1
        time.sleep(0.01)
        with lock:
            active -= 1
        return Decision("approve")

    gate, channel = make_gate(tmp_path, slow_answer)
    guarded = gate.wrap(send)
    threads = [threading.Thread(target=guarded, kwargs={"to": f"p{i}"}) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert overlaps == 0 and len(channel.prompts) == 8


def test_prompts_from_tasks_never_interleave(tmp_path: Path) -> None:
    active = 0
    overlaps = 0

    def slow_answer(prompt: Any) -> Decision:
        nonlocal active, overlaps
        active += 1
        overlaps += active > 1
        time.sleep(0.01)
        active -= 1
        return Decision("approve")

    gate, channel = make_gate(tmp_path, slow_answer)
    guarded = gate.wrap(asend)

    async def main() -> list[Any]:
        return await asyncio.gather(*(guarded(to=f"t{i}") for i in range(6)))

    assert len(asyncio.run(main())) == 6
    assert overlaps == 0 and len(channel.prompts) == 6


def test_tool_exception_is_a_result_not_a_crash(tmp_path: Path) -> None:
    gate, _ = make_gate(tmp_path)
    gate.wrap(lookup)

    def boom(key: str) -> str:
        raise RuntimeError("disk full")

    result = gate.execute(ToolCall("lookup", {"key": "a"}), boom)
    assert result.outcome == "failed" and "disk full" in result.content
