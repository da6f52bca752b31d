"""The proxy's own stdio connection to an upstream (`signoff.mcp.stdio.upstream_stdio`):
messages both ways through the event loop (a large one whole, a bad line as an error), the
SDK's default environment and not the proxy's, and an upstream that will not stop stopped
with its children when the connection ends."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import anyio
import pytest

pytest.importorskip("mcp")

import mcp.types as types
from mcp import StdioServerParameters
from mcp.shared.message import SessionMessage

from signoff.mcp import stdio

pytestmark = pytest.mark.slow  # a process per test

# a JSON-RPC upstream: answers each request with the size of its text and whether it sees
# the variables PASSED and LEAKED; a line "bad" from it first
ECHO = """
import json, os, sys
print("bad", flush=True)
for line in sys.stdin:
    message = json.loads(line)
    text = message["params"]["text"]
    seen = {key.lower(): os.environ.get(key) for key in ("PASSED", "LEAKED")}
    result = {"size": len(text), **seen}
    print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}), flush=True)
"""

# an upstream that ignores stdin closing and SIGTERM, with a child that does too
STUBBORN = """
import os, signal, subprocess, sys, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
child = subprocess.Popen([sys.executable, "-c",
    "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(600)"])
with open(sys.argv[1], "w") as out:
    out.write(f"{os.getpid()} {child.pid}")
time.sleep(600)
"""


def request(n: int, text: str) -> SessionMessage:
    return SessionMessage(
        types.JSONRPCRequest(jsonrpc="2.0", id=n, method="echo", params={"text": text})
    )


def alive(pid: int) -> bool:
    """Running, not merely a zombie waiting for a parent that may never reap it."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_messages_both_ways_in_the_sdks_default_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LEAKED", "the proxy's own variable")
    params = StdioServerParameters(
        command=sys.executable, args=["-c", ECHO], env={"PASSED": "yes"}, cwd=str(tmp_path)
    )
    big = "x" * 300_000  # larger than a pipe's buffer and asyncio's default line limit

    async def main() -> list[SessionMessage | Exception]:
        got: list[SessionMessage | Exception] = []
        async with stdio.upstream_stdio(params) as (read, write):
            got.append(await read.receive())  # the bad line
            for n, text in ((1, "abc"), (2, big)):
                await write.send(request(n, text))
                got.append(await read.receive())
        return got

    bad, first, second = anyio.run(main)
    assert isinstance(bad, Exception)
    results = []
    for item in (first, second):
        assert isinstance(item, SessionMessage)
        assert isinstance(item.message, types.JSONRPCResponse)
        results.append(item.message.result)
    assert results == [
        {"size": 3, "passed": "yes", "leaked": None},
        {"size": 300_000, "passed": "yes", "leaked": None},
    ]


def test_an_upstream_that_will_not_stop_is_killed_with_its_children(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(stdio, "EXIT_WAIT", 0.3)
    monkeypatch.setattr(stdio, "KILL_WAIT", 0.3)
    pids_file = tmp_path / "pids"
    params = StdioServerParameters(command=sys.executable, args=["-c", STUBBORN, str(pids_file)])

    async def main() -> None:
        async with stdio.upstream_stdio(params):
            with anyio.fail_after(30):
                while not pids_file.exists() or " " not in pids_file.read_text():
                    await anyio.sleep(0.05)

    anyio.run(main)
    pids = [int(p) for p in pids_file.read_text().split()]
    deadline = time.monotonic() + 10
    while any(alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    left = [p for p in pids if alive(p)]
    for pid in left:  # not expected: whatever this test started, it stops
        os.kill(pid, 9)
    assert left == []


def test_without_a_running_asyncio_loop_the_sdks_transport_is_used() -> None:
    params = StdioServerParameters(command=sys.executable)
    assert stdio.upstream_transport(params) is params
