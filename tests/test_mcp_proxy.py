"""`signoff mcp proxy` end to end: the real `mcp` client library talks to the proxy as a
subprocess over stdio; behind it, the real filesystem and everything servers from npm.
A person decides from another process (the `signoff` CLI)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("mcp")

from mcp import Client

from mcp_servers import (
    everything_server,
    filesystem_server,
    install_servers,
    proxy_params,
    request_id_of,
    signoff,
    text_of,
    write_config,
)
from signoff.store import open_store

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def servers() -> None:
    install_servers()


@pytest.fixture
def project(tmp_path: Path, servers: None) -> Path:
    ws = tmp_path / "project"
    (ws / "files").mkdir(parents=True)
    (ws / "files" / "notes.txt").write_text("hello\n")
    return ws


def config(ws: Path, **extra: object) -> Path:
    return write_config(
        ws,
        {"fs": filesystem_server(ws / "files"), "every": everything_server()},
        **extra,  # type: ignore[arg-type]
    )


def events(ws: Path) -> list[dict[str, object]]:
    store = open_store(workspace=ws)
    try:
        return [{"kind": e.kind, **e.data} for e in store.events_after(0, limit=10000)]
    finally:
        store.close()


async def test_lists_both_servers_tools_namespaced(project: Path) -> None:
    async with Client(proxy_params(config(project))) as client:
        names = {t.name for t in (await client.list_tools()).tools}
    assert {"fs__read_text_file", "fs__write_file", "every__echo"} <= names
    assert not any("__" not in n for n in names)


async def test_read_is_allowed_and_runs(project: Path) -> None:
    async with Client(proxy_params(config(project))) as client:
        result = await client.call_tool(
            "fs__read_text_file", {"path": str(project / "files" / "notes.txt")}
        )
    assert not result.is_error, text_of(result)
    assert "hello" in text_of(result)


async def test_denied_call_never_reaches_the_upstream(project: Path) -> None:
    """A write into signoff's own state is denied, even through a symlink the upstream
    server may follow: nothing is there afterwards."""
    (project / ".signoff").mkdir()
    (project / "files" / "state").symlink_to(project / ".signoff")
    target = project / "files" / "state" / "planted.txt"
    async with Client(proxy_params(config(project))) as client:
        result = await client.call_tool("fs__write_file", {"path": str(target), "content": "x"})
    assert result.is_error
    assert "signoff denied" in text_of(result)
    assert not (project / ".signoff" / "planted.txt").exists()


async def test_deny_rule_stops_a_call_the_upstream_would_run(project: Path) -> None:
    (project / ".signoff").mkdir()
    (project / ".signoff" / "settings.toml").write_text(
        '[permissions]\ndeny = ["fs__create_directory"]\n'
    )
    target = project / "files" / "made"
    async with Client(proxy_params(config(project))) as client:
        result = await client.call_tool("fs__create_directory", {"path": str(target)})
    assert result.is_error
    assert "signoff denied this call (rule fs__create_directory)" in text_of(result)
    assert not target.exists()


async def test_asked_call_is_pending_then_approved_elsewhere_and_runs_once(project: Path) -> None:
    target = project / "files" / "out.txt"
    args = {"path": str(target), "content": "approved\n"}
    async with Client(proxy_params(config(project))) as client:
        first = await client.call_tool("fs__write_file", args)
        text = text_of(first)
        assert first.is_error and "has NOT run" in text
        rid = request_id_of(text)
        assert f"signoff approve {rid} --workspace {project}" in text
        assert not target.exists()
        again = await client.call_tool("fs__write_file", args)  # still pending: same request
        assert request_id_of(text_of(again)) == rid

        decided = signoff(project, "approve", rid)
        assert decided.returncode == 0, decided.stderr

        ran = await client.call_tool("fs__write_file", args)
        assert not ran.is_error, text_of(ran)
        assert target.read_text() == "approved\n"
        target.write_text("changed by someone\n")
        # the same call now is a new call: it asks again, the approval is spent
        later = await client.call_tool("fs__write_file", args)
    assert later.is_error and request_id_of(text_of(later)) != rid
    assert target.read_text() == "changed by someone\n"
    kinds = [(e["kind"], e.get("outcome")) for e in events(project)]
    assert ("session.outcome", "ran") in kinds
    shown = signoff(project, "show", rid, "--json")
    assert json.loads(shown.stdout)["state"] == "finished"


async def test_rejected_call_returns_the_reason_and_never_runs(project: Path) -> None:
    target = project / "files" / "nope.txt"
    args = {"path": str(target), "content": "x"}
    async with Client(proxy_params(config(project))) as client:
        rid = request_id_of(text_of(await client.call_tool("fs__write_file", args)))
        done = signoff(project, "reject", rid, "--reason", "not today")
        assert done.returncode == 0, done.stderr
        result = await client.call_tool("fs__write_file", args)
    assert result.is_error
    assert "not today" in text_of(result)
    assert not target.exists()


async def test_edit_runs_the_persons_arguments_judged_again(project: Path) -> None:
    asked = project / "files" / "asked.txt"
    edited = project / "files" / "edited.txt"
    args = {"path": str(asked), "content": "agent\n"}
    async with Client(proxy_params(config(project))) as client:
        rid = request_id_of(text_of(await client.call_tool("fs__write_file", args)))
        new = json.dumps({"path": str(edited), "content": "person\n"})
        done = signoff(project, "edit", rid, "--args", new)
        assert done.returncode == 0, done.stderr
        result = await client.call_tool("fs__write_file", args)
    assert not result.is_error, text_of(result)
    assert edited.read_text() == "person\n"
    assert not asked.exists()


async def test_edit_into_signoffs_state_is_denied(project: Path) -> None:
    args = {"path": str(project / "files" / "a.txt"), "content": "x"}
    async with Client(proxy_params(config(project))) as client:
        rid = request_id_of(text_of(await client.call_tool("fs__write_file", args)))
        new = json.dumps({"path": str(project / ".signoff" / "evil.txt"), "content": "x"})
        signoff(project, "edit", rid, "--args", new)  # the CLI may refuse it already
        result = await client.call_tool("fs__write_file", args)
    assert result.is_error
    assert not (project / ".signoff" / "evil.txt").exists()
    assert not (project / "files" / "a.txt").exists()


async def test_expired_request_does_not_run(project: Path) -> None:
    target = project / "files" / "late.txt"
    args = {"path": str(target), "content": "x"}
    path = config(project, ask={"expiry": "1s"})
    async with Client(proxy_params(path)) as client:
        rid = request_id_of(text_of(await client.call_tool("fs__write_file", args)))
        import time

        deadline = time.time() + 30
        while json.loads(signoff(project, "show", rid, "--json").stdout)["state"] == "pending":
            assert time.time() < deadline
            signoff(project, "inbox")  # any command sweeps expired requests
            time.sleep(0.5)
        result = await client.call_tool("fs__write_file", args)
    assert result.is_error and "expired" in text_of(result)
    assert not target.exists()


async def test_settings_declaration_wins_over_annotations(project: Path) -> None:
    """write_file says it is destructive; declared `write`, it runs (notify) at once."""
    target = project / "files" / "w.txt"
    path = config(project, tools={"fs__write_file": {"tier": "write"}})
    async with Client(proxy_params(path)) as client:
        result = await client.call_tool("fs__write_file", {"path": str(target), "content": "x"})
    assert result.is_error, "annotations say destructive: an untrusted server's tool asks"
    trusted = config(project, tools={"fs__write_file": {"tier": "write"}})
    text = trusted.read_text().replace("[servers.every]", "trusted = true\n[servers.every]")
    trusted.write_text(text)
    async with Client(proxy_params(trusted)) as client:
        result = await client.call_tool("fs__write_file", {"path": str(target), "content": "x"})
    assert not result.is_error, text_of(result)
    assert target.read_text() == "x"


async def test_annotations_paths_and_urls_are_judged(project: Path) -> None:
    """echo says read-only: it runs. A path outside the workspace asks. A URL argument
    (found by its schema's format) is judged as a URL: a file: URL is no http(s) URL."""
    async with Client(proxy_params(config(project))) as client:
        echo = await client.call_tool("every__echo", {"message": "hi"})
        outside = await client.call_tool("fs__read_text_file", {"path": "/etc/hostname"})
        url = await client.call_tool(
            "every__gzip-file-as-resource", {"name": "x.gz", "data": "file:///etc/passwd"}
        )
    assert not echo.is_error and "hi" in text_of(echo)
    assert outside.is_error and "outside the workspace" in text_of(outside)
    assert "has NOT run" in text_of(outside)
    assert url.is_error and "is not an http(s) URL" in text_of(url)
