"""The proxy killed (kill -9) after it let a call run, before the call's outcome was on the
record: `signoff audit`, `signoff stats` and the web API show that call as "outcome unknown
(in doubt)", never as fine; while the proxy still runs it, the call is shown as running."""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import pytest

pytest.importorskip("mcp")

from mcp import Client

from mcp_servers import signoff, text_of, write_config
from signoff.kinds import SESSION_OUTCOME, VERDICT
from signoff.store import open_store
from test_mcp_crash import killable, lines, setup

pytestmark = pytest.mark.slow
HERE = Path(__file__).resolve().parent
__all__ = ["setup"]  # the fixture, shared with test_mcp_crash


def config(ws: Path, spec: Path, log: Path) -> Path:
    server = {
        "command": sys.executable,
        "args": [str(HERE / "mcp_upstream.py"), str(spec), str(log)],
    }
    # runs without asking: the verdict is committed first, the outcome after the call
    return write_config(ws, {"up": server}, tools={"up__slow": {"tier": "read"}})


def audit(ws: Path) -> list[dict[str, Any]]:
    done = signoff(ws, "audit", "--json")
    assert done.returncode == 0, done.stderr
    entries: list[dict[str, Any]] = json.loads(done.stdout)
    return entries


def allowed(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Verdicts that let the call run (the upstream's annotations make it notify: it
    writes, reversibly)."""
    return [
        e
        for e in entries
        if e["kind"] == VERDICT and e["data"]["verdict"]["effect"] in ("allow", "notify")
    ]


def stats(ws: Path) -> dict[str, Any]:
    done = signoff(ws, "stats", "--json")
    assert done.returncode == 0, done.stderr
    figures: dict[str, Any] = json.loads(done.stdout)
    return figures


async def wait_for(log: Path, line: str) -> None:
    deadline = time.time() + 60
    while line not in lines(log):
        assert time.time() < deadline, f"the upstream never logged {line!r}"
        await anyio.sleep(0.05)


async def test_killed_mid_call_the_allowed_call_is_running_then_in_doubt(
    setup: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    ws, spec, log = setup
    path = config(ws, spec, log)
    pidfile = tmp_path / "proxy.pid"
    args = {"text": "gone"}
    seen_running: list[dict[str, Any]] = []

    async def call() -> None:
        async with Client(killable(path, pidfile)) as client:
            await client.call_tool("up__slow", args)

    async def look_then_kill() -> None:
        await wait_for(log, "slow started gone")
        # the proxy runs the call: not in doubt (yet), not fine either
        seen_running.extend(allowed(audit(ws)))
        assert stats(ws)["outcome_unknown"] == 0
        os.kill(int(pidfile.read_text()), signal.SIGKILL)

    with pytest.raises(BaseException):  # noqa: B017 - the connection is gone, however said
        async with anyio.create_task_group() as tg:
            tg.start_soon(look_then_kill)
            await call()

    assert [e.get("outcome") for e in seen_running] == ["running"]
    (verdict,) = allowed(audit(ws))
    assert verdict["outcome"] == "in_doubt"
    assert "outcome_by" in verdict["data"]
    assert stats(ws)["outcome_unknown"] == 1
    text = "".join(signoff(ws, "audit", "--kind", "verdict").stdout.split())  # cells wrap
    assert 'notify:up__slow{"text":"gone"};outcomeunknown(indoubt)' in text
    shown = signoff(ws, "stats").stdout
    assert "outcome unknown (in doubt) 1 allowed call" in shown


async def test_killed_right_after_an_allowed_call_its_outcome_is_in_doubt(
    setup: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    """The window the held outcome waits in (up to 50 ms): the proxy is killed as soon as
    the client has the result. A kill that comes after the outcome was written finds it
    on the record (fine, and shown so); a few tries catch the window."""
    ws, spec, log = setup
    spec.write_text(json.dumps({"sleep": 0}))
    path = config(ws, spec, log)
    pidfile = tmp_path / "proxy.pid"
    lost = 0
    for attempt in range(8):
        with pytest.raises(BaseException):  # noqa: B017 - killed under the client
            async with Client(killable(path, pidfile)) as client:
                result = await client.call_tool("up__slow", {"text": f"t{attempt}"})
                assert not result.is_error, text_of(result)
                os.kill(int(pidfile.read_text()), signal.SIGKILL)
                await client.list_tools()  # the proxy is gone: this fails
        entries = audit(ws)
        verdicts = allowed(entries)
        outcomes = {e["data"]["call"]["id"] for e in entries if e["kind"] == SESSION_OUTCOME}
        last = verdicts[-1]
        ran = last["data"]["call"]["id"] in outcomes
        # whichever way the race went, what is shown is true
        assert last.get("outcome") == (None if ran else "in_doubt"), last
        lost += not ran
        assert stats(ws)["outcome_unknown"] == lost
        if lost:
            break
    assert lost, "the proxy was never killed before it wrote an outcome"
    assert f"slow t{attempt}" in lines(log)  # it did run: only its record was lost


async def test_a_clean_stop_leaves_nothing_in_doubt_and_a_new_proxy_does_not_clear_it(
    setup: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    """A proxy stopped cleanly writes what it held and says it ended; a proxy started after
    one that was killed settles nothing of the killed one's calls."""
    ws, spec, log = setup
    path = config(ws, spec, log)
    pidfile = tmp_path / "proxy.pid"

    async def killed_mid_call() -> None:
        async with Client(killable(path, pidfile)) as client:
            await client.call_tool("up__slow", {"text": "one"})

    async def kill() -> None:
        await wait_for(log, "slow started one")
        os.kill(int(pidfile.read_text()), signal.SIGKILL)

    with pytest.raises(BaseException):  # noqa: B017
        async with anyio.create_task_group() as tg:
            tg.start_soon(kill)
            await killed_mid_call()

    spec.write_text(json.dumps({"sleep": 0}))
    async with Client(killable(path, pidfile)) as client:
        for text in ("two", "three"):
            assert not (await client.call_tool("up__slow", {"text": text})).is_error
    entries = audit(ws)
    states = [(e["data"]["call"]["arguments"]["text"], e.get("outcome")) for e in allowed(entries)]
    assert states == [("one", "in_doubt"), ("two", None), ("three", None)]
    assert [e["kind"] for e in entries].count("writer.ended") == 1  # the clean stop
    assert stats(ws)["outcome_unknown"] == 1


def test_the_web_api_lists_the_lost_outcome(setup: tuple[Path, Path, Path], tmp_path: Path) -> None:
    """`/api/audit` and the audit page say the same as `signoff audit`."""
    from starlette.testclient import TestClient

    from signoff.audit.outcomes import Writer
    from signoff.web import create_app

    ws, _, _ = setup
    gone = Writer("elsewhere", "b00t", 4242, "1")  # another machine: only the log can tell
    store = open_store(workspace=ws)
    try:
        call = {"name": "up__slow", "arguments": {"text": "x"}, "id": "c.1"}
        verdict = {"effect": "allow", "risk": "none", "rule": None, "reasons": ["read"]}
        store.record(
            VERDICT,
            {"call": call, "verdict": verdict, "outcome_by": gone.token},
            run_id="mcp-alice",
        )
        store.record("writer.ended", {"writer": gone.token, "client": "mcp"})
    finally:
        store.close()
    app = create_app(workspace=str(ws))
    with TestClient(app, base_url="http://127.0.0.1") as web:
        found = web.get("/api/audit").json()
        page = web.get("/audit").text
    (entry,) = [e for e in found if e["kind"] == VERDICT]
    assert entry["outcome"] == "in_doubt"
    assert "outcome unknown (in doubt)" in page
