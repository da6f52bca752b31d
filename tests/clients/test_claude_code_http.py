"""The real Claude Code client with signoff's HTTP hooks (`signoff install claude-code
--http`) posting to a running `signoff serve`: the same verdicts without a process per call,
and every way the server can fail to answer blocks the call."""

from __future__ import annotations

import os
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from claude_code_harness import VENV_BIN, Claude
from test_claude_code_e2e import (
    RM_RF_BUILD,
    assert_ok,
    bash,
    install,
    make_build,
    only_result,
    verdicts,
)

from signoff.llm.fake_anthropic import FakeAnthropicServer

TOKEN = "hook-token-for-tests-0123456789abcdef"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def served(claude: Claude, tmp_path: Path) -> Iterator[tuple[int, subprocess.Popen[bytes]]]:
    """signoff's HTTP hooks installed, and `signoff serve` on a free port in the project."""
    port = free_port()
    make_build(claude.project)
    url = f"http://127.0.0.1:{port}/hooks/claude-code"
    install(claude, "--http", "--url", url, permissions={"deny": ["Bash(rm -rf:*)"]})
    log = (tmp_path / "serve.log").open("wb")
    server = subprocess.Popen(
        [str(VENV_BIN / "signoff"), "serve", "--port", str(port), "--log-level", "warning"],
        cwd=claude.project,
        env={**os.environ, "HOME": str(claude.home), "SIGNOFF_HOOK_TOKEN": TOKEN},
        stdin=subprocess.DEVNULL,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        end = time.monotonic() + 60
        while True:
            assert server.poll() is None, (tmp_path / "serve.log").read_text()
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert time.monotonic() < end, "signoff serve did not listen within 60 s"
                time.sleep(0.1)
        yield port, server
    finally:
        server.terminate()
        server.wait(timeout=30)
        log.close()


def test_the_http_hook_denies_and_the_model_reads_why(
    claude: Claude, served: tuple[int, subprocess.Popen[bytes]]
) -> None:
    with FakeAnthropicServer(bash(RM_RF_BUILD)) as api:
        run = claude.run(
            api, "clean up", "--allowedTools", "Bash", env={"SIGNOFF_HOOK_TOKEN": TOKEN}
        )
    assert_ok(run)
    assert (claude.project / "build" / "out.txt").exists()
    result = only_result(api)
    assert result.is_error is True
    assert "signoff denied this call (rule Bash(rm -rf:*))" in result.text
    assert verdicts(claude) == [(RM_RF_BUILD, "deny")]


def test_the_http_hook_lets_an_allowed_call_run(
    claude: Claude, served: tuple[int, subprocess.Popen[bytes]]
) -> None:
    with FakeAnthropicServer(bash("touch made-by-claude")) as api:
        run = claude.run(api, "make", "--allowedTools", "Bash", env={"SIGNOFF_HOOK_TOKEN": TOKEN})
    assert_ok(run)
    assert (claude.project / "made-by-claude").exists()
    assert only_result(api).is_error is False


@pytest.mark.parametrize("how", ["wrong token", "no token", "server gone"])
def test_when_the_server_cannot_answer_the_call_is_blocked(
    claude: Claude, served: tuple[int, subprocess.Popen[bytes]], how: str
) -> None:
    _, server = served
    env = {"SIGNOFF_HOOK_TOKEN": "not-the-token" if how == "wrong token" else ""}
    if how == "server gone":
        env["SIGNOFF_HOOK_TOKEN"] = TOKEN
        server.terminate()
        server.wait(timeout=30)
    with FakeAnthropicServer(bash("touch made-by-claude")) as api:
        run = claude.run(api, "make", "--allowedTools", "Bash", env=env)
    assert_ok(run)
    assert not (claude.project / "made-by-claude").exists()
    result = only_result(api)
    assert result.is_error is True
    assert 'blocking because onFailure is "block"' in result.text, result.text
