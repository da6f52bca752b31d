"""The proxy killed (kill -9) in the middle of an approved call: the call is in doubt, and
a retry through a new proxy does not run it again; only a tool declared idempotent is
retried once its claim lapsed."""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

pytest.importorskip("mcp")

from mcp import Client, StdioServerParameters

from mcp_servers import proxy_params, request_id_of, signoff, text_of, write_config
from signoff.store import open_store

pytestmark = pytest.mark.slow
HERE = Path(__file__).resolve().parent


@pytest.fixture
def setup(tmp_path: Path) -> Iterator[tuple[Path, Path, Path]]:
    ws = tmp_path / "project"
    ws.mkdir()
    spec, log = tmp_path / "tools.json", tmp_path / "log.txt"
    spec.write_text(json.dumps({"sleep": 60}))
    yield ws, spec, log
    # the upstreams a killed proxy left behind: this test started them, it stops them
    pids = log.with_suffix(".pids")
    for line in pids.read_text().split() if pids.exists() else []:
        try:  # only if that id is still our upstream (an id is reused once it exited)
            if b"mcp_upstream.py" in Path(f"/proc/{line}/cmdline").read_bytes():
                os.kill(int(line), signal.SIGKILL)
        except (FileNotFoundError, ProcessLookupError):
            continue


def config(ws: Path, spec: Path, log: Path, **tool: object) -> Path:
    server = {
        "command": sys.executable,
        "args": [str(HERE / "mcp_upstream.py"), str(spec), str(log)],
    }
    return write_config(ws, {"up": server}, tools={"up__slow": {"tier": "destructive", **tool}})


def killable(config_path: Path, pidfile: Path) -> StdioServerParameters:
    """The proxy through `sh -c 'echo $$ > PIDFILE; exec ...'`: the same process, whose id
    the test knows."""
    params = proxy_params(config_path)
    command = " ".join([params.command, *params.args])
    return StdioServerParameters(
        command="/bin/sh",
        args=["-c", f'echo $$ > "{pidfile}"; exec {command}'],
        env=params.env,
        cwd=params.cwd,
    )


def lines(log: Path) -> list[str]:
    return log.read_text().splitlines() if log.exists() else []


async def approve_then_kill_mid_call(ws: Path, path: Path, log: Path, tmp: Path) -> str:
    args = {"text": "once"}
    async with Client(proxy_params(path)) as client:
        pending = await client.call_tool("up__slow", args)
    rid = request_id_of(text_of(pending))
    assert signoff(ws, "approve", rid).returncode == 0

    pidfile = tmp / "proxy.pid"

    async def call() -> None:
        async with Client(killable(path, pidfile)) as client:
            await client.call_tool("up__slow", args)

    async def kill_when_started() -> None:
        deadline = time.time() + 60
        while "slow started once" not in lines(log):
            assert time.time() < deadline, "the upstream never started the call"
            await anyio.sleep(0.1)
        os.kill(int(pidfile.read_text()), signal.SIGKILL)

    with pytest.raises(BaseException):  # noqa: B017 - the connection is gone, however said
        async with anyio.create_task_group() as tg:
            tg.start_soon(kill_when_started)
            await call()
    return rid


async def test_killed_mid_call_the_call_is_in_doubt_and_not_repeated(
    setup: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    ws, spec, log = setup
    path = config(ws, spec, log)
    rid = await approve_then_kill_mid_call(ws, path, log, tmp_path)
    spec.write_text(json.dumps({"sleep": 0}))

    async with Client(proxy_params(path)) as client:
        retry = await client.call_tool("up__slow", {"text": "once"})
    assert retry.is_error and "is claimed" in text_of(retry) and "not run again" in text_of(retry)

    store = open_store(workspace=ws)
    try:
        assert store.sweep_leases(now=time.time() + 7200) == [rid]  # the claim lapses
        assert store.get_request(rid).state == "in_doubt"
    finally:
        store.close()
    async with Client(proxy_params(path)) as client:
        later = await client.call_tool("up__slow", {"text": "once"})
    assert later.is_error and "in_doubt" in text_of(later)
    assert lines(log).count("slow started once") == 1
    assert "slow once" not in lines(log)  # never finished, never run again


async def test_an_idempotent_tool_in_doubt_is_retried(
    setup: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    ws, spec, log = setup
    path = config(ws, spec, log, idempotent=True)
    rid = await approve_then_kill_mid_call(ws, path, log, tmp_path)
    spec.write_text(json.dumps({"sleep": 0}))
    store = open_store(workspace=ws)
    try:
        store.sweep_leases(now=time.time() + 7200)
    finally:
        store.close()
    async with Client(proxy_params(path)) as client:
        retry = await client.call_tool("up__slow", {"text": "once"})
    assert not retry.is_error, text_of(retry)
    assert lines(log).count("slow started once") == 2
    assert lines(log).count("slow once") == 1
    shown = json.loads(signoff(ws, "show", rid, "--json").stdout)
    assert shown["state"] == "finished"


async def test_upstream_dying_mid_call_is_in_doubt_not_retried(
    setup: tuple[Path, Path, Path],
) -> None:
    """The upstream server is killed while it runs an allowed call: the client is told the
    call may or may not have run, the record says in doubt, and nothing runs it again."""
    import mcp.types as types

    from signoff.mcp.config import load_config
    from signoff.mcp.proxy import Proxy

    ws, spec, log = setup
    server = {
        "command": sys.executable,
        "args": [str(HERE / "mcp_upstream.py"), str(spec), str(log)],
    }
    path = write_config(ws, {"up": server})
    results: list[types.CallToolResult | types.InputRequiredResult] = []
    async with Proxy(load_config(path)) as proxy:

        async def call() -> None:
            params = types.CallToolRequestParams(name="up__slow", arguments={"text": "t"})
            results.append(await proxy.call_tool(None, params))

        async with anyio.create_task_group() as tg:
            tg.start_soon(call)
            deadline = time.time() + 60
            while "slow started t" not in lines(log):
                assert time.time() < deadline
                await anyio.sleep(0.1)
            pid = int(log.with_suffix(".pids").read_text().split()[0])
            os.kill(pid, signal.SIGKILL)
    (result,) = results
    assert isinstance(result, types.CallToolResult) and result.is_error
    assert "whether it ran is unknown, and it is not retried" in text_of(result)
    store = open_store(workspace=ws)
    try:
        outcomes = [e.data for e in store.events_after(0, limit=100) if e.kind == "session.outcome"]
    finally:
        store.close()
    assert [o["outcome"] for o in outcomes] == ["in_doubt"]
    assert lines(log) == ["slow started t"]
