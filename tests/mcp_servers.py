"""Real upstream MCP servers for the proxy's tests, installed from npm into an ignored cache
(`.cache/clients/mcp-servers` at the top of the checkout) once per machine, under a file
lock so parallel workers do not race. When npm or its registry cannot be reached the tests
skip with the reason, unless `SIGNOFF_REQUIRE_CLIENTS` is set: then they fail."""

from __future__ import annotations

import fcntl
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

PACKAGES = {
    "@modelcontextprotocol/server-filesystem": "2026.8.31",
    "@modelcontextprotocol/server-everything": "2026.8.31",
}
REPO = Path(__file__).resolve().parents[1]
CACHE = REPO / ".cache" / "clients" / "mcp-servers"
MODULES = CACHE / "node_modules" / "@modelcontextprotocol"
VENV_BIN = Path(sys.executable).parent


def _unavailable(reason: str) -> None:
    if os.environ.get("SIGNOFF_REQUIRE_CLIENTS"):
        pytest.fail(f"SIGNOFF_REQUIRE_CLIENTS is set but the MCP servers are unavailable: {reason}")
    pytest.skip(f"MCP servers from npm unavailable (set SIGNOFF_REQUIRE_CLIENTS to fail): {reason}")


def _entry(package: str) -> Path:
    return MODULES / package.split("/")[1] / "dist" / "index.js"


def _installed() -> bool:
    for package, version in PACKAGES.items():
        manifest = MODULES / package.split("/")[1] / "package.json"
        try:
            if json.loads(manifest.read_text())["version"] != version:
                return False
        except (OSError, ValueError, KeyError):
            return False
    return all(_entry(p).is_file() for p in PACKAGES)


def install_servers() -> None:
    """The pinned servers, installed if need be."""
    npm, node = shutil.which("npm"), shutil.which("node")
    if npm is None or node is None:
        _unavailable("node/npm is not installed")
    assert npm is not None
    CACHE.mkdir(parents=True, exist_ok=True)
    with (CACHE.parent / "mcp-servers.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if _installed():
            return
        wanted = [f"{p}@{v}" for p, v in PACKAGES.items()]
        command = [npm, "install", "--prefix", str(CACHE), "--no-save", "--no-audit", "--no-fund"]
        try:
            done = subprocess.run(
                [*command, *wanted],
                capture_output=True,
                text=True,
                timeout=900,
                stdin=subprocess.DEVNULL,
                check=False,
            )
        except subprocess.TimeoutExpired:
            _unavailable("npm install took longer than 15 minutes")
            return
        if done.returncode != 0:
            ping = subprocess.run(
                [npm, "ping"],
                capture_output=True,
                timeout=120,
                stdin=subprocess.DEVNULL,
                check=False,
            )
            if ping.returncode != 0:
                _unavailable(f"the npm registry is unreachable (npm ping exit {ping.returncode})")
            pytest.fail(f"npm install {' '.join(wanted)} failed:\n{done.stderr[-3000:]}")
        if not _installed():
            pytest.fail(f"{' '.join(wanted)} installed into {CACHE} but an entry point is missing")


def filesystem_server(root: Path) -> dict[str, Any]:
    """`[servers.NAME]` for the filesystem server, allowed to touch `root` only."""
    return {
        "command": "node",
        "args": [str(_entry("@modelcontextprotocol/server-filesystem")), str(root)],
    }


def everything_server() -> dict[str, Any]:
    return {
        "command": "node",
        "args": [str(_entry("@modelcontextprotocol/server-everything")), "stdio"],
    }


def _toml_value(value: Any) -> str:
    if isinstance(value, Mapping):
        return (
            "{ " + ", ".join(f"{json.dumps(k)} = {_toml_value(v)}" for k, v in value.items()) + " }"
        )
    return json.dumps(value)  # strings, lists of strings, numbers and booleans read the same


def write_config(
    workspace: Path,
    servers: Mapping[str, Mapping[str, Any]],
    *,
    tools: Mapping[str, Mapping[str, Any]] | None = None,
    ask: Mapping[str, Any] | None = None,
    record: Mapping[str, Any] | None = None,
) -> Path:
    """`.signoff/mcp.toml` in the workspace."""
    lines: list[str] = []
    for name, table in servers.items():
        lines.append(f"[servers.{name}]")
        lines += [f"{k} = {_toml_value(v)}" for k, v in table.items()]
    for name, table in (tools or {}).items():
        lines.append(f"[tools.{json.dumps(name)}]")
        lines += [f"{k} = {_toml_value(v)}" for k, v in table.items()]
    if ask:
        lines.append("[ask]")
        lines += [f"{k} = {_toml_value(v)}" for k, v in ask.items()]
    if record:
        lines.append("[record]")
        lines += [f"{k} = {_toml_value(v)}" for k, v in record.items()]
    path = workspace / ".signoff" / "mcp.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")
    return path


def proxy_params(config: Path, *, env: Mapping[str, str] | None = None) -> Any:
    """How a client launches `signoff mcp proxy` (this checkout's signoff) over stdio."""
    from mcp import StdioServerParameters

    src = str(REPO / "src")
    return StdioServerParameters(
        command=str(VENV_BIN / "python"),
        args=["-m", "signoff", "mcp", "proxy", "--config", str(config)],
        env={**os.environ, "PYTHONPATH": src, **(env or {})},
        cwd=str(config.parent.parent),
    )


def signoff(workspace: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The signoff CLI as a separate process (a person deciding elsewhere)."""
    return subprocess.run(
        [str(VENV_BIN / "python"), "-m", "signoff", *args, "--workspace", str(workspace)],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO / "src")},
        timeout=120,
        check=False,
        input="",
    )


def request_id_of(text: str) -> str:
    """The request a pending result names."""
    found = re.search(r"req_[0-9a-f]+", text)
    assert found, f"no request id in {text!r}"
    return found.group()


def text_of(result: Any) -> str:
    return "\n".join(getattr(c, "text", "") for c in result.content)


__all__ = [
    "everything_server",
    "filesystem_server",
    "install_servers",
    "proxy_params",
    "request_id_of",
    "signoff",
    "text_of",
    "write_config",
]
