"""What `signoff mcp proxy` adds to an allowed `tools/call`, and how many calls per second
it carries over streamable HTTP.

stdio: one client talks to an upstream MCP server directly and another talks to the same
server through the proxy (`signoff mcp proxy` as a process, the upstream behind it), in the
same run, calls alternating so a slow moment of the shared machine lands on both. The tool
is read-only (allowed): each call through the proxy is judged and recorded (a verdict and an
outcome in the project's SQLite store), as in use. Added = median(proxy) - median(direct).
Target (issue 16): `stdio_added_ms` <= 2. Beside it, what the proxy process spends per call
in CPU (`proxy_cpu_ms_per_call`: from /proc, whatever else the machine runs) and the disk's
median fsync where the store is (`disk_fsync_ms`): each allowed call waits for one commit
of its verdict, so on a busy disk that commit is most of `added`. TMPDIR=/dev/shm puts the
store in memory, to see the rest.

HTTP: the proxy served with `--http`, 8 clients at once, each with its own connection,
calling the same allowed tool; calls/s over the whole run, beside the same 8 clients
against the upstream served over HTTP directly (the client library's own cost).

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


def upstream(port: int | None = None) -> None:
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

    server = Server("bench-upstream", on_list_tools=list_tools, on_call_tool=call_tool)
    if port is not None:  # the same server over streamable HTTP: the baseline for HTTP
        import uvicorn

        app = server.streamable_http_app(host="127.0.0.1")
        uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")
        return

    async def main() -> None:
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
    servers = f"[servers.up]\ncommand = {command}\nargs = {args}\n"
    (ws / ".signoff" / "mcp.toml").write_text(servers)  # the default: recorded before
    (ws / ".signoff" / "mcp-beside.toml").write_text(servers + '[record]\nallowed = "beside"\n')
    return ws


def proxy_cpu_seconds(config: str) -> float:
    """CPU time (user and system) so far of this process's child `signoff mcp proxy`
    serving `config`: what the proxy costs whatever else the machine runs."""
    tick = os.sysconf("SC_CLK_TCK")
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        if int(fields[1]) == os.getpid() and b"proxy" in argv and config.encode() in argv:
            return (int(fields[11]) + int(fields[12])) / tick
    raise SystemExit(f"no signoff mcp proxy process serving {config} found")


async def stdio_bench(
    ws: Path, env: dict[str, str], calls: int, config: str = "mcp.toml"
) -> tuple[list[float], list[float], float]:
    """(direct ms, through the proxy ms, the proxy's CPU ms per call)."""
    from mcp import Client, StdioServerParameters

    direct_params = StdioServerParameters(
        command=sys.executable, args=[str(Path(__file__).resolve()), "--upstream"], env=env
    )
    proxy_params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "signoff", "mcp", "proxy", "--config", str(ws / ".signoff" / config)],
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
        config_path = str(ws / ".signoff" / config)
        cpu_before = proxy_cpu_seconds(config_path)
        for n in range(calls):
            for client, name, into in ((d, "echo", direct), (p, "up__echo", proxied)):
                start = time.perf_counter()
                result = await client.call_tool(name, {"text": f"call {n}"})
                into.append((time.perf_counter() - start) * 1000)
                assert not result.is_error
        cpu = (proxy_cpu_seconds(config_path) - cpu_before) * 1000 / calls
    return direct, proxied, cpu


async def http_bench(
    ws: Path, env: dict[str, str], calls: int, *, proxied: bool
) -> tuple[float, float]:
    """8 clients at once against the proxy (proxied) or the upstream served directly."""
    import anyio
    from mcp import Client

    port = free_port()
    config = str(ws / ".signoff" / "mcp.toml")
    argv = (
        ["-m", "signoff", "mcp", "proxy", "--config", config, "--http", f"127.0.0.1:{port}"]
        if proxied
        else [str(Path(__file__).resolve()), "--upstream-http", str(port)]
    )
    tool = "up__echo" if proxied else "echo"
    proc = subprocess.Popen(
        [sys.executable, *argv],
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
                await client.call_tool(tool, {"text": "warm"})
                for n in range(calls):
                    start = time.perf_counter()
                    result = await client.call_tool(tool, {"text": f"{k}:{n}"})
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


async def inprocess_bench(ws: Path, calls: int) -> tuple[list[float], list[float]]:
    """signoff's own work per call without the extra stdio hop: the proxy's handler in
    this process against its upstream connection called directly, alternating."""
    import mcp.types as types

    from signoff.mcp.config import load_config
    from signoff.mcp.proxy import Proxy

    direct: list[float] = []
    gated: list[float] = []
    params = types.CallToolRequestParams(name="up__echo", arguments={"text": "x"})
    async with Proxy(load_config(ws / ".signoff" / "mcp.toml")) as proxy:
        upstream = proxy.upstreams["up"]
        for _ in range(20):
            await proxy.call_tool(None, params)
        for _ in range(calls):
            start = time.perf_counter()
            await upstream.call_tool("echo", {"text": "x"})
            direct.append((time.perf_counter() - start) * 1000)
            start = time.perf_counter()
            result = await proxy.call_tool(None, params)
            gated.append((time.perf_counter() - start) * 1000)
            assert not result.is_error
    return direct, gated


def fsync_ms(folder: Path, times: int = 50) -> float:
    """The median time of one small fsync where the store lives: the default records an
    allowed call's verdict durably before the call, so a busy disk shows in `added`."""
    path = folder / "fsync.probe"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o600)
    taken: list[float] = []
    try:
        for _ in range(times):
            os.write(fd, b"x" * 100)
            start = time.perf_counter()
            os.fsync(fd)
            taken.append((time.perf_counter() - start) * 1000)
    finally:
        os.close(fd)
        path.unlink()
    return statistics.median(taken)


def main() -> None:
    import anyio

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--http-calls", type=int, default=50, help="per client")
    opts = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        ws = project(Path(tmp))
        # a keys file of its own: the user's grows with every store location it saw
        os.environ["SIGNOFF_CONFIG_DIR"] = str(Path(tmp) / "config")
        env = {
            **os.environ,
            "PYTHONPATH": SRC,
            "PYTHONPYCACHEPREFIX": str(Path(tmp) / "pycache"),
            "SIGNOFF_DB": "",
        }
        env.pop("SIGNOFF_DB")
        disk = [fsync_ms(ws)]
        direct, proxied, cpu = anyio.run(stdio_bench, ws, env, opts.calls)
        disk.append(fsync_ms(ws))
        direct_b, beside, _ = anyio.run(stdio_bench, ws, env, opts.calls, "mcp-beside.toml")
        sys.path.insert(0, SRC)
        in_direct, in_gated = anyio.run(inprocess_bench, ws, opts.calls)
        base_rate, base_median = anyio.run(
            lambda: http_bench(ws, env, opts.http_calls, proxied=False)
        )
        rate, http_median = anyio.run(lambda: http_bench(ws, env, opts.http_calls, proxied=True))
    d, p = statistics.median(direct), statistics.median(proxied)
    added = p - d
    print(f"{'stdio tools/call':<22} {'median ms':>10} {'p90 ms':>8}")
    for name, times in (("direct", direct), ("through the proxy", proxied)):
        p90 = statistics.quantiles(times, n=10)[-1]
        print(f"{name:<22} {statistics.median(times):>10.3f} {p90:>8.3f}")
    print(f"{'added':<22} {added:>10.3f}   (allowed calls recorded before they run)")
    added_beside = statistics.median(beside) - statistics.median(direct_b)
    print(f"{'added, record beside':<22} {added_beside:>10.3f}   ([record] allowed = beside)")
    own = statistics.median(in_gated) - statistics.median(in_direct)
    print(f"{'of which signoff':<22} {own:>10.3f}   (in process: judged and recorded, no hop)")
    print(f"{'proxy CPU per call':<22} {cpu:>10.3f}   (user+system, whatever else runs)")
    print(f"{'disk fsync':<22} {statistics.mean(disk):>10.3f}   (median of 50, before and after)")
    print(f"http, {CLIENTS} clients    calls/s  median ms")
    print(f"{'direct':<22} {base_rate:>7.0f} {base_median:>10.2f}")
    print(f"{'through the proxy':<22} {rate:>7.0f} {http_median:>10.2f}")
    print(
        json.dumps(
            {
                "stdio_direct_ms": round(d, 3),
                "stdio_proxy_ms": round(p, 3),
                "stdio_added_ms": round(added, 3),
                "stdio_added_ms_record_beside": round(added_beside, 3),
                "signoff_own_ms": round(own, 3),
                "proxy_cpu_ms_per_call": round(cpu, 3),
                "disk_fsync_ms": round(statistics.mean(disk), 3),
                "http_calls_per_s": round(rate, 1),
                "http_median_ms": round(http_median, 2),
                "http_direct_calls_per_s": round(base_rate, 1),
                "http_direct_median_ms": round(base_median, 2),
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
    elif sys.argv[1:2] == ["--upstream-http"]:
        upstream(int(sys.argv[2]))
    else:
        main()
