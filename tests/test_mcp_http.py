"""The proxy over streamable HTTP, an upstream over streamable HTTP (the everything server
from npm), and the two ways of asking inside a call: URL elicitation that sends the person
to the request's page in the web inbox (the decision is read from the store, never from
the client), and form elicitation, taken as a decision only from a client the settings
trust."""

from __future__ import annotations

import os
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")

import mcp.types as types
from mcp import Client

from mcp_servers import (
    REPO,
    filesystem_server,
    install_servers,
    proxy_params,
    signoff,
    text_of,
    write_config,
)
from signoff.store import open_store

pytestmark = pytest.mark.slow
EVERYTHING = REPO / ".cache/clients/mcp-servers/node_modules/@modelcontextprotocol"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_for_port(port: int, proc: subprocess.Popen[bytes]) -> None:
    deadline = time.time() + 60
    while time.time() < deadline:
        assert proc.poll() is None, "the server exited"
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.1)
    raise AssertionError(f"nothing listens on {port}")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    install_servers()
    ws = tmp_path / "project"
    (ws / "files").mkdir(parents=True)
    return ws


@pytest.fixture
def http_upstream() -> Iterator[str]:
    port = free_port()
    entry = EVERYTHING / "server-everything" / "dist" / "index.js"
    proc = subprocess.Popen(
        ["node", str(entry), "streamableHttp"],
        env={**os.environ, "PORT": str(port)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for_port(port, proc)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.kill()
        proc.wait()


def start_proxy(config: Path) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    params = proxy_params(config)
    proc = subprocess.Popen(
        [params.command, *params.args, "--http", f"127.0.0.1:{port}"],
        env=params.env,
        cwd=params.cwd,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    wait_for_port(port, proc)
    return proc, f"http://127.0.0.1:{port}/mcp"


async def test_proxy_over_http_with_an_http_upstream(project: Path, http_upstream: str) -> None:
    config = write_config(
        project, {"fs": filesystem_server(project / "files"), "web": {"url": http_upstream}}
    )
    proc, url = start_proxy(config)
    try:
        async with Client(url) as client:
            names = {t.name for t in (await client.list_tools()).tools}
            assert {"fs__write_file", "web__echo"} <= names
            echo = await client.call_tool("web__echo", {"message": "over http"})
            denied = await client.call_tool(
                "fs__write_file", {"path": str(project / ".signoff" / "x"), "content": "x"}
            )
    finally:
        proc.kill()
        proc.wait()
    assert not echo.is_error and "over http" in text_of(echo)
    assert denied.is_error and "signoff denied" in text_of(denied)
    assert not (project / ".signoff" / "x").exists()


def test_http_refuses_a_non_loopback_address(project: Path) -> None:
    config = write_config(project, {"fs": filesystem_server(project / "files")})
    params = proxy_params(config)
    done = subprocess.run(
        [params.command, *params.args, "--http", "0.0.0.0:8799"],
        env=params.env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode != 0
    assert "only a loopback address" in done.stderr


async def test_url_elicitation_sends_the_person_to_the_inbox(project: Path) -> None:
    inbox = "http://127.0.0.1:8765"
    target = project / "files" / "url.txt"
    config = write_config(
        project,
        {"fs": filesystem_server(project / "files")},
        ask={"via": "url", "inbox": inbox, "url_wait": "30s"},
    )
    seen: list[Any] = []

    async def person(ctx: Any, params: Any) -> types.ElicitResult:
        # The client opened the page; the person decides there (here: from the CLI).
        seen.append(params)
        rid = params.url.rsplit("/", 1)[1]
        assert signoff(project, "approve", rid).returncode == 0
        return types.ElicitResult(action="accept")

    async with Client(proxy_params(config), elicitation_callback=person) as client:
        result = await client.call_tool("fs__write_file", {"path": str(target), "content": "u"})
    assert not result.is_error, text_of(result)
    assert target.read_text() == "u"
    assert len(seen) == 1 and seen[0].mode == "url"
    assert seen[0].url.startswith(f"{inbox}/requests/req_")


async def test_url_elicitation_accept_alone_is_no_approval(project: Path) -> None:
    """The client says it opened the page, nobody decides: the call does not run."""
    target = project / "files" / "no.txt"
    config = write_config(
        project,
        {"fs": filesystem_server(project / "files")},
        ask={"via": "url", "inbox": "http://127.0.0.1:8765", "url_wait": "1s"},
    )

    async def liar(ctx: Any, params: Any) -> types.ElicitResult:
        return types.ElicitResult(action="accept")

    async with Client(proxy_params(config), elicitation_callback=liar) as client:
        result = await client.call_tool("fs__write_file", {"path": str(target), "content": "x"})
    assert result.is_error and "has NOT run" in text_of(result)
    assert not target.exists()


def form_config(project: Path) -> Path:
    return write_config(
        project,
        {"fs": filesystem_server(project / "files")},
        ask={"via": "form", "trusted_clients": ["trusted-ide"]},
    )


async def test_form_answer_of_a_trusted_client_decides(project: Path) -> None:
    target = project / "files" / "form.txt"
    asked: list[str] = []

    async def person(ctx: Any, params: Any) -> types.ElicitResult:
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"approve": True})

    info = types.Implementation(name="trusted-ide", version="1")
    async with Client(
        proxy_params(form_config(project)), elicitation_callback=person, client_info=info
    ) as client:
        result = await client.call_tool("fs__write_file", {"path": str(target), "content": "f"})
        target.unlink()
        refused = await client.call_tool("fs__write_file", {"path": str(target), "content": "g"})
    assert not result.is_error, text_of(result)
    assert "fs__write_file" in asked[0]
    store = open_store(workspace=project)
    try:
        decided = [e for e in store.events_after(0, limit=1000) if e.kind == "request.decided"]
    finally:
        store.close()
    assert decided[0].actor == "mcp client trusted-ide"
    assert not refused.is_error  # asked again (a new call), approved again
    assert len(asked) == 2


async def test_form_answer_of_an_untrusted_client_is_not_a_decision(project: Path) -> None:
    target = project / "files" / "form.txt"
    asked: list[str] = []

    async def self_approver(ctx: Any, params: Any) -> types.ElicitResult:
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"approve": True})

    info = types.Implementation(name="some-agent", version="1")
    async with Client(
        proxy_params(form_config(project)), elicitation_callback=self_approver, client_info=info
    ) as client:
        result = await client.call_tool("fs__write_file", {"path": str(target), "content": "f"})
    assert result.is_error and "has NOT run" in text_of(result)
    assert asked == []
    assert not target.exists()


async def test_form_decline_rejects(project: Path) -> None:
    target = project / "files" / "form.txt"

    async def person(ctx: Any, params: Any) -> types.ElicitResult:
        return types.ElicitResult(action="accept", content={"approve": False, "reason": "no"})

    info = types.Implementation(name="trusted-ide", version="1")
    async with Client(
        proxy_params(form_config(project)), elicitation_callback=person, client_info=info
    ) as client:
        result = await client.call_tool("fs__write_file", {"path": str(target), "content": "f"})
    assert result.is_error and "rejected by mcp client trusted-ide: no" in text_of(result)
    assert not target.exists()
