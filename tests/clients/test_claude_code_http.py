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
    audit,
    bash,
    echo_last_result,
    install,
    make_build,
    only_result,
    signoff,
    verdicts,
)

from signoff.llm.fake_anthropic import FakeAnthropicServer, ToolUse

TOKEN = "hook-token-for-tests-0123456789abcdef"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def own_credential() -> bool:
    """Whether the server takes only the hook's credential install made (a test says so
    with `@pytest.mark.parametrize("own_credential", [True])`), not `$SIGNOFF_HOOK_TOKEN`."""
    return False


@pytest.fixture
def served(
    claude: Claude, tmp_path: Path, own_credential: bool
) -> Iterator[tuple[int, subprocess.Popen[bytes]]]:
    """signoff's HTTP hooks installed, and `signoff serve` on a free port in the project
    (with `$SIGNOFF_HOOK_TOKEN` set to TOKEN, see `own_credential`)."""
    port = free_port()
    make_build(claude.project)
    url = f"http://127.0.0.1:{port}/hooks/claude-code"
    install(claude, "--http", "--url", url, permissions={"deny": ["Bash(rm -rf:*)"]})
    log = (tmp_path / "serve.log").open("wb")
    env = {**os.environ, "HOME": str(claude.home), "SIGNOFF_HOOK_TOKEN": TOKEN}
    if own_credential:
        del env["SIGNOFF_HOOK_TOKEN"]
    server = subprocess.Popen(
        [str(VENV_BIN / "signoff"), "serve", "--port", str(port), "--log-level", "warning"],
        cwd=claude.project,
        env=env,
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


def hook_token() -> str:
    """The hook's token, as `signoff install claude-code --http` kept it."""
    return (Path(os.environ["SIGNOFF_CONFIG_DIR"]) / "hook-token").read_text().strip()


@pytest.mark.parametrize("own_credential", [True])
def test_with_the_credential_install_made_every_outcome_matches_its_call(
    claude: Claude, served: tuple[int, subprocess.Popen[bytes]], own_credential: bool
) -> None:
    """The real client's PostToolUse carries the call its PreToolUse was judged on: each
    outcome is on the record as the outcome of a judged call, naming the hook that sent
    it, and none is unmatched (a read, a command, a file written for review after)."""
    notes = claude.project / "notes.txt"
    script = [
        ToolUse("Read", {"file_path": str(claude.project / "build" / "out.txt")}),
        ToolUse("Bash", {"command": "ls build", "description": "scripted"}),
        ToolUse("Write", {"file_path": str(notes), "content": "kept for review\n"}),
        echo_last_result,
    ]
    env = {"SIGNOFF_HOOK_TOKEN": hook_token()}
    with FakeAnthropicServer(script) as api:
        run = claude.run(api, "look around", "--allowedTools", "Bash,Read,Write", env=env)
    assert_ok(run)
    assert notes.read_text() == "kept for review\n"
    entries = audit(claude)
    assert [e for e in entries if e["kind"] == "session.unmatched"] == []
    outcomes = [e for e in entries if e["kind"] == "session.outcome"]
    assert [e["data"]["call"]["name"] for e in outcomes] == ["Read", "Bash", "Write"]
    assert {e["data"]["outcome"] for e in outcomes} == {"ran"}
    name = signoff(claude, "users", "list").stdout.split("\t")[0]
    assert {e["actor"] for e in outcomes} == {f"hook:{name}"}
    assert [e["kind"] for e in entries].count("review") == 1


@pytest.mark.parametrize("own_credential", [True])
def test_a_persons_token_in_the_hooks_place_blocks_every_call(
    claude: Claude, served: tuple[int, subprocess.Popen[bytes]], own_credential: bool
) -> None:
    token = signoff(claude, "users", "add", "vera", "--role", "viewer").stdout.splitlines()[1]
    with FakeAnthropicServer(bash("touch made-by-claude")) as api:
        run = claude.run(api, "make", "--allowedTools", "Bash", env={"SIGNOFF_HOOK_TOKEN": token})
    assert_ok(run)
    assert not (claude.project / "made-by-claude").exists()
    assert 'blocking because onFailure is "block"' in only_result(api).text
    assert verdicts(claude) == []  # nothing on the record from a person's token
