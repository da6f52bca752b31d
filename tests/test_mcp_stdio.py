"""The proxy's stdio wire (`signoff.mcp.stdio`): messages in and out through the event
loop, nothing but messages on stdout (a stray print goes to stderr), a bad line answered
as an error, a large message whole; and the SDK's own transport where stdin is a file."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("mcp")

pytestmark = pytest.mark.slow  # a process per test, talked to over its pipes

REPO = Path(__file__).resolve().parents[1]
ECHO = """
import anyio, sys
import mcp.types as types
from mcp.shared.message import SessionMessage
from signoff.mcp.stdio import stdio_wire

async def main() -> None:
    async with stdio_wire() as (read, write), write:  # as the SDK's server: closed at the end
        print("stray output")  # must not reach the wire
        async for item in read:
            if isinstance(item, Exception):
                sys.stderr.write(f"bad line: {type(item).__name__}\\n")
                continue
            message = item.message
            size = len(message.params["text"]) if message.params else 0
            reply = types.JSONRPCResponse(jsonrpc="2.0", id=message.id, result={"size": size})
            await write.send(SessionMessage(reply))

anyio.run(main)
"""


def request(n: int, text: str) -> str:
    return json.dumps({"jsonrpc": "2.0", "id": n, "method": "echo", "params": {"text": text}})


def run(stdin: str | Path) -> subprocess.CompletedProcess[str]:
    env = {"PYTHONPATH": str(REPO / "src"), "PATH": "/usr/bin:/bin"}
    command = [sys.executable, "-c", ECHO]
    if isinstance(stdin, Path):
        with stdin.open() as handle:
            return subprocess.run(
                command, stdin=handle, capture_output=True, text=True, env=env, timeout=60
            )
    return subprocess.run(command, input=stdin, capture_output=True, text=True, env=env, timeout=60)


def replies(stdout: str) -> list[dict[str, object]]:
    return [json.loads(line) for line in stdout.splitlines()]


def test_messages_in_and_out_and_nothing_else_on_the_wire() -> None:
    big = "x" * 300_000  # larger than a pipe's buffer and asyncio's default line limit
    lines = [request(1, "a"), "not json", "", request(2, big), request(3, "é")]
    done = run("\n".join(lines) + "\n")
    assert done.returncode == 0, done.stderr
    assert replies(done.stdout) == [
        {"jsonrpc": "2.0", "id": 1, "result": {"size": 1}},
        {"jsonrpc": "2.0", "id": 2, "result": {"size": 300_000}},
        {"jsonrpc": "2.0", "id": 3, "result": {"size": 1}},
    ]
    assert "stray output" in done.stderr
    assert "bad line: ValidationError" in done.stderr


def test_stdin_from_a_file_is_served_by_the_sdks_transport(tmp_path: Path) -> None:
    messages = tmp_path / "in.jsonl"
    messages.write_text(request(7, "abc") + "\n")
    done = run(messages)
    assert done.returncode == 0, done.stderr
    assert replies(done.stdout) == [{"jsonrpc": "2.0", "id": 7, "result": {"size": 3}}]
    assert "stray output" in done.stderr
