"""What `signoff mcp proxy` adds to an allowed `tools/call`, and how many calls per second
it carries over streamable HTTP.

stdio: one client talks to an upstream MCP server directly and another talks to the same
server through the proxy (`signoff mcp proxy` as a process, the upstream behind it), in the
same run, calls alternating so a slow moment of the shared machine lands on both. The tool
is read-only (allowed): each call through the proxy is judged and recorded (a verdict and an
outcome in the project's SQLite store), as in use. Added = median(proxy) - median(direct).
Target (issue 16): `stdio_added_ms` <= 2.

HTTP: the proxy served with `--http`, 8 clients at once, each with its own connection,
calling the same allowed tool; calls/s over the whole run.

The upstream is this file run with `--upstream` (the real `mcp` package's low-level server),
so the figures do not depend on npm.

Usage: python bench/mcp_proxy.py [--calls 300] [--http-calls 50]
Last line: one JSON object (`stdio_added_ms`, `http_calls_per_s`, ...).
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

SRC = str(Path(__file__).resolve().parent.parent / "src")
CLIENTS = 8


# ---------------------------------------------------------------------- the upstream


def upstream() -> None:
    import anyio
    import mcp.types as types
    from mcp.server import Server, ServerRequestContext
    from mcp.server.stdio import stdio_server

    tool = types.Tool(
        name="echo",
        description="Echoes its text.",
        input_schema={"type": "object", "properties": {"text": {"type": "string"}}},
        annotations=types.ToolAnnotations(read_only_hint=True),
    )

    async def list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[tool])

    async def call_tool(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        text = str((params.arguments or {}).get("text", ""))
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)])

    async def main() -> None:
        server = Server("bench-upstream", on_list_tools=list_tools, on_call_tool=call_tool)
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    anyio.run(main)


# ---------------------------------------------------------------------- measuring


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def project(root: Path) -> Path:
    ws = root / "project"
    (ws / ".signoff").mkdir(parents=True)
    command = json.dumps(sys.executable)
    args = json.dumps([str(Path(__file__).resolve()), "--upstream"])
    (ws / ".signoff" / "mcp.toml").write_text(f"[servers.up]\ncommand = {command}\nargs = {args}\n")
    return ws


async def stdio_bench(ws: Path, env: dict[str, str], calls: int) -> tuple[list[float], list[float]]:
    from mcp import Client, StdioServerParameters

    direct_params = StdioServerParameters(
        command=sys.executable, args=[str(Path(__file__).resolve()), "--upstream"], env=env
    )
    proxy_params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "signoff", "mcp", "proxy", "--config", str(ws / ".signoff" / "mcp.toml")],
        env=env,
        cwd=str(ws),
    )
    direct: list[float] = []
    proxied: list[float] = []
    async with Client(direct_params) as d, Client(proxy_params) as p:
        for n in range(20):  # warm-up: imports, the store's migrations, caches
            await d.call_tool("echo", {"text": f"w{n}"})
            first = await p.call_tool("up__echo", {"text": f"w{n}"})
            if first.is_error:
                raise SystemExit(f"the proxied call was not allowed: {first.content}")
        for n in range(calls):
            for client, name, into in ((d, "echo", direct), (p, "up__echo", proxied)):
                start = time.perf_counter()
                result = await client.call_tool(name, {"text": f"call {n}"})
                into.append((time.perf_counter() - start) * 1000)
                assert not result.is_error
    return direct, proxied


async def http_bench(ws: Path, env: dict[str, str], calls: int) -> tuple[float, float]:
    import anyio
    from mcp import Client

    port = free_port()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "signoff",
            "mcp",
            "proxy",
            "--config",
            str(ws / ".signoff" / "mcp.toml"),
            "--http",
            f"127.0.0.1:{port}",
        ],
        env=env,
        cwd=str(ws),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.time() + 60
        while True:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                    break
            except OSError:
                if time.time() > deadline or proc.poll() is not None:
                    raise SystemExit("the HTTP proxy did not start") from None
                time.sleep(0.1)
        url = f"http://127.0.0.1:{port}/mcp"
        latencies: list[float] = []

        async def one(k: int) -> None:
            async with Client(url) as client:
                await client.call_tool("up__echo", {"text": "warm"})
                for n in range(calls):
                    start = time.perf_counter()
                    result = await client.call_tool("up__echo", {"text": f"{k}:{n}"})
                    latencies.append((time.perf_counter() - start) * 1000)
                    assert not result.is_error

        start = time.perf_counter()
        async with anyio.create_task_group() as tg:
            for k in range(CLIENTS):
                tg.start_soon(one, k)
        elapsed = time.perf_counter() - start
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    return CLIENTS * calls / elapsed, statistics.median(latencies)


def main() -> None:
    import anyio

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--http-calls", type=int, default=50, help="per client")
    opts = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        ws = project(Path(tmp))
        env = {
            **os.environ,
            "PYTHONPATH": SRC,
            "PYTHONPYCACHEPREFIX": str(Path(tmp) / "pycache"),
            "SIGNOFF_DB": "",
        }
        env.pop("SIGNOFF_DB")
        direct, proxied = anyio.run(stdio_bench, ws, env, opts.calls)
        rate, http_median = anyio.run(http_bench, ws, env, opts.http_calls)
    d, p = statistics.median(direct), statistics.median(proxied)
    added = p - d
    print(f"{'stdio tools/call':<22} {'median ms':>10} {'p90 ms':>8}")
    for name, times in (("direct", direct), ("through the proxy", proxied)):
        p90 = statistics.quantiles(times, n=10)[-1]
        print(f"{name:<22} {statistics.median(times):>10.3f} {p90:>8.3f}")
    print(f"{'added':<22} {added:>10.3f}")
    print(f"http, {CLIENTS} clients: {rate:.0f} calls/s, median {http_median:.2f} ms per call")
    print(
        json.dumps(
            {
                "stdio_direct_ms": round(d, 3),
                "stdio_proxy_ms": round(p, 3),
                "stdio_added_ms": round(added, 3),
                "http_calls_per_s": round(rate, 1),
                "http_median_ms": round(http_median, 2),
                "http_clients": CLIENTS,
                "targets_met": added <= 2.0,
                "calls": opts.calls,
                "http_calls_per_client": opts.http_calls,
                "cpus": os.cpu_count(),
            }
        )
    )


if __name__ == "__main__":
    if sys.argv[1:2] == ["--upstream"]:
        upstream()
    else:
        main()
