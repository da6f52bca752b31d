"""The proxy's record of allowed calls: by default written before the call goes upstream,
so a failed write refuses that call; with `[record] allowed = "beside"` written beside the
call by one writer, and a failed write refuses every later call. Either way every verdict
and outcome is there once the proxy stops."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

pytest.importorskip("mcp")

import mcp.types as types

from mcp_servers import request_id_of, signoff, text_of, write_config
from signoff.kinds import VERDICT
from signoff.mcp.config import load_config
from signoff.mcp.proxy import Proxy
from signoff.mcp.recorder import RecordBroken, Recorder
from signoff.store import open_store

HERE = Path(__file__).resolve().parent
NOTE = {"read_only_hint": False, "destructive_hint": False, "open_world_hint": False}


def project(tmp_path: Path, record: str = "beside") -> tuple[Path, Path]:
    ws = tmp_path / "project"
    ws.mkdir()
    spec, log = tmp_path / "tools.json", tmp_path / "log.txt"
    spec.write_text(json.dumps({"annotations": {"read_only_hint": True}}))
    server = {
        "command": sys.executable,
        "args": [str(HERE / "mcp_upstream.py"), str(spec), str(log)],
    }
    return ws, write_config(ws, {"up": server}, record={"allowed": record})


def call(text: str) -> types.CallToolRequestParams:
    return types.CallToolRequestParams(name="up__note", arguments={"text": text})


def test_a_failed_write_stops_the_writer() -> None:
    recorder = Recorder()
    done: list[int] = []

    def fail() -> None:
        raise OSError("disk full")

    recorder.submit(lambda: done.append(1))
    recorder.submit(fail)
    recorder.submit(lambda: done.append(2))  # not written after a failure
    recorder.close()
    assert done == [1]
    with pytest.raises(RecordBroken, match="disk full"):
        recorder.check()


@pytest.mark.parametrize("record", ["before", "beside"])
async def test_every_allowed_call_is_on_the_record(tmp_path: Path, record: str) -> None:
    ws, path = project(tmp_path, record)
    async with Proxy(load_config(path)) as proxy:
        for n in range(20):
            result = await proxy.call_tool(None, call(f"n{n}"))
            assert not result.is_error
    store = open_store(workspace=ws)
    try:
        events = store.events_after(0, limit=10000)
    finally:
        store.close()
    verdicts = [e for e in events if e.kind == VERDICT]
    outcomes = [e for e in events if e.kind == "session.outcome"]
    assert len(verdicts) == 20 and len(outcomes) == 20
    assert all(e.data["verdict"]["effect"] == "allow" for e in verdicts)
    assert all(e.data["outcome"] == "ran" for e in outcomes)
    # each call's verdict comes before its outcome
    order = [(e.kind, e.data["call"]["arguments"]["text"]) for e in (*verdicts, *outcomes)]
    seqs = {
        (e.kind, e.data["call"]["arguments"]["text"]): e.seq for e in events if "call" in e.data
    }
    assert all(seqs[(VERDICT, t)] < seqs[("session.outcome", t)] for _, t in order)


async def test_a_failed_record_refuses_every_later_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _ws, path = project(tmp_path)
    async with Proxy(load_config(path)) as proxy:
        assert not (await proxy.call_tool(None, call("before"))).is_error
        store = proxy.adapter_store()
        real = store.record

        def broken(kind: str, data: Any, **extra: Any) -> Any:
            if kind == VERDICT:
                raise OSError("the disk is full")
            return real(kind, data, **extra)

        monkeypatch.setattr(store, "record", broken)
        await proxy.call_tool(None, call("lost"))  # ran; its verdict could not be written
        for _ in range(200):  # the writer gets to it beside the call
            if proxy.recorder.broken is not None:
                break
            await anyio.sleep(0.05)
        refused = await proxy.call_tool(None, call("after"))
    assert refused.is_error
    assert "cannot write its record" in refused.content[0].text  # type: ignore[union-attr]
    assert "disk is full" in refused.content[0].text  # type: ignore[union-attr]
    log = (tmp_path / "log.txt").read_text().splitlines()
    assert "note after" not in log


async def test_by_default_a_failed_record_refuses_the_call_itself(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Recorded before: a verdict that cannot be written never lets its call run."""
    _ws, path = project(tmp_path, "before")
    async with Proxy(load_config(path)) as proxy:
        assert proxy.config.record_allowed == "before"
        assert not (await proxy.call_tool(None, call("before"))).is_error
        store = proxy.adapter_store()
        real = store.record

        def broken(kind: str, data: Any, **extra: Any) -> Any:
            if kind == VERDICT:
                raise OSError("the disk is full")
            return real(kind, data, **extra)

        def broken_many(drafts: Any, **extra: Any) -> Any:
            if any(d.kind == VERDICT for d in drafts):
                raise OSError("the disk is full")
            return real_many(drafts, **extra)

        real_many = store.record_many
        monkeypatch.setattr(store, "record", broken)
        monkeypatch.setattr(store, "record_many", broken_many)
        refused = await proxy.call_tool(None, call("lost"))
    assert refused.is_error
    log = (tmp_path / "log.txt").read_text().splitlines()
    assert "note before" in log and "note lost" not in log


def test_record_allowed_must_be_before_or_beside(tmp_path: Path) -> None:
    _ws, path = project(tmp_path, "later")
    with pytest.raises(
        Exception, match=r"\[record\] allowed: 'later' is not one of before, beside"
    ):
        load_config(path)


async def test_an_argument_outside_the_schema_is_refused_and_recorded(tmp_path: Path) -> None:
    """An agent adding an argument the schema does not name (which a lenient upstream
    might read) gets a deny; nothing reaches the upstream."""
    ws, path = project(tmp_path)
    async with Proxy(load_config(path)) as proxy:
        params = types.CallToolRequestParams(
            name="up__note", arguments={"text": "x", "path": "/etc/shadow"}
        )
        refused = await proxy.call_tool(None, params)
    assert refused.is_error
    text = refused.content[0].text  # type: ignore[union-attr]
    assert "argument 'path' is not in the input schema of up__note" in text
    assert not (tmp_path / "log.txt").exists()
    store = open_store(workspace=ws)
    try:
        verdicts = [e for e in store.events_after(0, limit=100) if e.kind == VERDICT]
    finally:
        store.close()
    assert [v.data["verdict"]["effect"] for v in verdicts] == ["deny"]


async def test_a_retried_ask_is_one_call_in_stats(tmp_path: Path) -> None:
    """The agent retries an asked call until a person decides: every retry is judged and
    on the record, marked `retry`, and `signoff stats` counts the call and its question
    once. The same call made again after it ran is a new call."""
    ws = tmp_path / "project"
    ws.mkdir()
    spec, log = tmp_path / "tools.json", tmp_path / "log.txt"
    spec.write_text(json.dumps({"annotations": {**NOTE, "destructive_hint": True}}))
    server = {
        "command": sys.executable,
        "args": [str(HERE / "mcp_upstream.py"), str(spec), str(log)],
    }
    path = write_config(ws, {"up": server})
    async with Proxy(load_config(path)) as proxy:
        first = await proxy.call_tool(None, call("once"))
        rid = request_id_of(text_of(first))
        for _ in range(2):  # nobody decided yet: pending again, the same request
            again = await proxy.call_tool(None, call("once"))
            assert request_id_of(text_of(again)) == rid
        approved = signoff(ws, "approve", rid)
        assert approved.returncode == 0, approved.stderr
        ran = await proxy.call_tool(None, call("once"))
        assert not ran.is_error, text_of(ran)
        later = await proxy.call_tool(None, call("once"))  # a new call: asks anew
        assert request_id_of(text_of(later)) != rid
    assert log.read_text().splitlines() == ["note once"]
    store = open_store(workspace=ws)
    try:
        verdicts = [e.data for e in store.events_after(0, limit=1000) if e.kind == VERDICT]
    finally:
        store.close()
    assert [v.get("retry", False) for v in verdicts] == [False, True, True, True, False]
    stats = signoff(ws, "stats", "--json")
    assert stats.returncode == 0, stats.stderr
    figures = json.loads(stats.stdout)
    assert (figures["calls"], figures["asked"], figures["questions"]) == (2, 2, 2), figures


def recorded(ws: Path) -> list[Any]:
    store = open_store(workspace=ws)
    try:
        return [e for e in store.events_after(0, limit=1000) if "call" in e.data]
    finally:
        store.close()


async def test_an_outcome_is_committed_with_the_next_verdict(tmp_path: Path) -> None:
    """By default: each verdict before its call, each outcome in the next verdict's commit
    (one transaction, so one timestamp), the last one when the proxy stops."""
    ws, path = project(tmp_path, "before")
    async with Proxy(load_config(path)) as proxy:
        for n in range(3):
            assert not (await proxy.call_tool(None, call(f"n{n}"))).is_error
            await anyio.sleep(0)  # the loop's next turn: the outcome is held
    events = recorded(ws)
    order = [(e.kind, e.data["call"]["arguments"]["text"]) for e in events]
    assert order == [
        (VERDICT, "n0"),
        ("session.outcome", "n0"),
        (VERDICT, "n1"),
        ("session.outcome", "n1"),
        (VERDICT, "n2"),
        ("session.outcome", "n2"),
    ]
    assert events[1].ts == events[2].ts and events[3].ts == events[4].ts


async def test_a_held_outcome_is_written_soon_when_no_call_comes(tmp_path: Path) -> None:
    ws, path = project(tmp_path, "before")
    async with Proxy(load_config(path)) as proxy:
        assert not (await proxy.call_tool(None, call("alone"))).is_error
        for _ in range(100):  # LINGER, then the writer's turn
            if [e.kind for e in recorded(ws)] == [VERDICT, "session.outcome"]:
                break
            await anyio.sleep(0.05)
        assert [e.kind for e in recorded(ws)] == [VERDICT, "session.outcome"]


async def test_a_held_outcome_that_cannot_be_written_refuses_calls_until_it_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws, path = project(tmp_path, "before")
    async with Proxy(load_config(path)) as proxy:
        store = proxy.adapter_store()
        real = store.record_many

        def outcomes_fail(drafts: Any, **extra: Any) -> Any:
            if all(d.kind == "session.outcome" for d in drafts):
                raise OSError("the disk is full")
            return real(drafts, **extra)

        monkeypatch.setattr(store, "record_many", outcomes_fail)
        assert not (await proxy.call_tool(None, call("ran"))).is_error
        for _ in range(100):
            if proxy.recorder.problem is not None:
                break
            await anyio.sleep(0.05)
        refused = await proxy.call_tool(None, call("after"))
        assert refused.is_error
        assert "cannot write its record" in refused.content[0].text  # type: ignore[union-attr]
        monkeypatch.setattr(store, "record_many", real)  # the store takes writes again
        assert not (await proxy.call_tool(None, call("healed"))).is_error
    log = (tmp_path / "log.txt").read_text().splitlines()
    assert "note ran" in log and "note after" not in log and "note healed" in log
    outcomes = [
        e.data["call"]["arguments"]["text"] for e in recorded(ws) if e.kind == "session.outcome"
    ]
    assert outcomes == ["ran", "healed"]  # the held outcome was kept, and written first
