"""`mcp-server-fetch` from PyPI behind the proxy, against a local HTTP server: its `url`
argument is judged as a URL (allowed domains, deny rules by domain), and a refused fetch
never reaches the HTTP server. The server is installed into its own virtual environment in
the ignored cache (`.cache/clients/mcp-fetch`); without the registry the tests skip, unless
SIGNOFF_REQUIRE_CLIENTS is set."""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar

import pytest

pytest.importorskip("mcp")

from mcp import Client

from mcp_servers import REPO, proxy_params, text_of, write_config

pytestmark = pytest.mark.slow
PACKAGE = "mcp-server-fetch==2026.10.24"
VENV = REPO / ".cache" / "clients" / "mcp-fetch"
MARKER = "signoff-fetch-marker-7f3a"


def _unavailable(reason: str) -> None:
    if os.environ.get("SIGNOFF_REQUIRE_CLIENTS"):
        pytest.fail(f"SIGNOFF_REQUIRE_CLIENTS is set but {PACKAGE} is unavailable: {reason}")
    pytest.skip(f"{PACKAGE} unavailable (set SIGNOFF_REQUIRE_CLIENTS to fail instead): {reason}")


@pytest.fixture(scope="module")
def fetch_server() -> Path:
    binary = VENV / "bin" / "mcp-server-fetch"
    VENV.parent.mkdir(parents=True, exist_ok=True)
    with (VENV.parent / "mcp-fetch.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if binary.exists():
            return binary
        made = subprocess.run(
            [sys.executable, "-m", "venv", str(VENV)], capture_output=True, text=True, check=False
        )
        if made.returncode != 0:
            pytest.fail(f"python -m venv {VENV} failed: {made.stderr[-2000:]}")
        done = subprocess.run(
            [str(VENV / "bin" / "pip"), "install", "-q", PACKAGE],
            capture_output=True,
            text=True,
            timeout=900,
            stdin=subprocess.DEVNULL,
            check=False,
        )
        if done.returncode != 0:
            if "No matching distribution" in done.stderr or "Could not fetch" in done.stderr:
                _unavailable(done.stderr.strip().splitlines()[-1])
            pytest.fail(f"pip install {PACKAGE} failed:\n{done.stderr[-3000:]}")
    return binary


class _Page(BaseHTTPRequestHandler):
    hits: ClassVar[list[str]] = []

    def do_GET(self) -> None:
        _Page.hits.append(self.path)
        body = f"<html><body><p>{MARKER}</p></body></html>".encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        return


@pytest.fixture
def site() -> Iterator[int]:
    _Page.hits = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Page)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield int(server.server_address[1])
    finally:
        server.shutdown()
        server.server_close()


def project(tmp_path: Path, binary: Path, settings: str) -> Path:
    ws = tmp_path / "project"
    (ws / ".signoff").mkdir(parents=True)
    (ws / ".signoff" / "settings.toml").write_text(settings)
    server = {"command": str(binary), "args": ["--ignore-robots-txt", "--allow-private-ips"]}
    return write_config(ws, {"web": server})


async def test_an_allowed_domain_is_fetched_another_asks(
    tmp_path: Path, fetch_server: Path, site: int
) -> None:
    config = project(tmp_path, fetch_server, '[boundaries]\nallowed_domains = ["127.0.0.1"]\n')
    async with Client(proxy_params(config)) as client:
        names = {t.name for t in (await client.list_tools()).tools}
        fetched = await client.call_tool("web__fetch", {"url": f"http://127.0.0.1:{site}/a"})
        other = await client.call_tool("web__fetch", {"url": f"http://localhost:{site}/b"})
        local = await client.call_tool("web__fetch", {"url": "file:///etc/passwd"})
    assert "web__fetch" in names
    assert not fetched.is_error and MARKER in text_of(fetched)
    assert other.is_error and "localhost is not an allowed domain" in text_of(other)
    assert local.is_error and "is not an http(s) URL" in text_of(local)
    assert _Page.hits == ["/a"]  # what was refused never reached the site


async def test_a_deny_rule_by_domain(tmp_path: Path, fetch_server: Path, site: int) -> None:
    config = project(
        tmp_path, fetch_server, '[permissions]\ndeny = ["web__fetch(domain:127.0.0.1)"]\n'
    )
    async with Client(proxy_params(config)) as client:
        denied = await client.call_tool("web__fetch", {"url": f"http://127.0.0.1:{site}/x"})
    assert denied.is_error and "signoff denied this call" in text_of(denied)
    assert _Page.hits == []
