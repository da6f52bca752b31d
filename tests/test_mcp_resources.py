"""Resources and prompts through `signoff mcp proxy`: listed under SERVER__..., a read
judged as a read (a file by its path, a web address by its domain, any other by the
rules) and recorded like a tool call, a prompt passed through and recorded. End to end
with the real `mcp` client, the proxy as a process, and behind it the real everything
server from npm and a small upstream of our own that logs every read."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")

from mcp import Client
from mcp.shared.exceptions import MCPError

from mcp_servers import (
    everything_server,
    install_servers,
    proxy_params,
    request_id_of,
    signoff,
    write_config,
)
from signoff.exceptions import InvalidInput
from signoff.mcp.resources import RESOURCE, RESOURCE_FILE, RESOURCE_URL, read_call, route
from signoff.store import open_store

HERE = Path(__file__).resolve().parent
DOC = "demo://resource/static/document/architecture.md"
DENIED_DOC = "demo://resource/static/document/features.md"


@pytest.mark.parametrize(
    ("uri", "name", "judged"),
    [
        ("file:///srv/a.txt", RESOURCE_FILE, {"path": "/srv/a.txt"}),
        # the other paths a server may read it as: undecoded, the host as a folder, the
        # query and fragment as part of the path
        ("file:///srv/%2Eenv", RESOURCE_FILE, {"path": "/srv/.env", "also": ["/srv/%2Eenv"]}),
        (
            "file://host/etc/passwd",
            RESOURCE_FILE,
            {"path": "/etc/passwd", "also": ["host/etc/passwd"]},
        ),
        ("file:///w/x?/../k#f", RESOURCE_FILE, {"path": "/w/x", "also": ["/w/x?/../k#f"]}),
        ("file:", RESOURCE_FILE, {"path": "/"}),
        ("file:a.txt", RESOURCE_FILE, {"path": "a.txt"}),
        ("https://example.com/a?b=1", RESOURCE_URL, {"url": "https://example.com/a?b=1"}),
        ("HTTP://example.com", RESOURCE_URL, {"url": "HTTP://example.com"}),
        ("demo://resource/1", RESOURCE, {"paths": ["resource/1"]}),
        ("fs:///w/%2Esignoff", RESOURCE, {"paths": ["/w/%2Esignoff", "/w/.signoff"]}),
        ("urn:isbn:0451450523", RESOURCE, {"paths": ["isbn:0451450523"]}),
    ],
)
def test_a_read_is_judged_by_what_its_uri_names(
    uri: str, name: str, judged: dict[str, str]
) -> None:
    assert read_call("srv", uri) == (name, {"server": "srv", "uri": uri, **judged})


def test_a_relative_reading_is_the_servers_folders() -> None:
    assert read_call("srv", "fs://a/b", "/srv/cwd")[1]["paths"] == ["/srv/cwd/a/b"]
    _name, judged = read_call("srv", "file:a%20b", "/srv/cwd")
    assert judged["path"] == "/srv/cwd/a b" and judged["also"] == ["/srv/cwd/a%20b"]


@pytest.mark.parametrize(
    ("shown", "routed"),
    [
        ("files__file:///a__b.txt", ("files", "file:///a__b.txt")),  # the first __ only
        ("every__demo://x/{id}", ("every", "demo://x/{id}")),
    ],
)
def test_a_name_routes_to_the_server_before_the_first_separator(
    shown: str, routed: tuple[str, str]
) -> None:
    assert route(shown, {"files", "every"}, "resource") == routed


@pytest.mark.parametrize("shown", ["file:///a.txt", "other__file:///a", "files__", "__x"])
def test_a_name_that_routes_nowhere_is_refused_by_name(shown: str) -> None:
    with pytest.raises(InvalidInput, match=r"no resource .* \(resources are SERVER__\.\.\."):
        route(shown, {"files"}, "resource")


# ---------------------------------------------------------------------- end to end


def events(ws: Path) -> list[dict[str, Any]]:
    store = open_store(workspace=ws)
    try:
        return [{"kind": e.kind, **e.data} for e in store.events_after(0, limit=10000)]
    finally:
        store.close()


def judged(ws: Path, name: str) -> list[tuple[str, str]]:
    """(effect, uri or prompt) of each verdict on `name`, in order."""
    return [
        (
            e["verdict"]["effect"],
            e["call"]["arguments"].get("uri") or e["call"]["arguments"].get("prompt"),
        )
        for e in events(ws)
        if e["kind"] == "verdict" and e["call"]["name"] == name
    ]


@pytest.mark.slow  # the proxy and the everything server as processes
async def test_everything_servers_resources_and_prompts_through_the_proxy(
    tmp_path: Path,
) -> None:
    install_servers()
    ws = tmp_path / "project"
    (ws / ".signoff").mkdir(parents=True)
    (ws / ".signoff" / "settings.toml").write_text(
        "[permissions]\n"
        f'deny = ["mcp_resource(uri={DENIED_DOC})", "mcp_prompt(prompt=args-prompt)"]\n'
    )
    path = write_config(ws, {"every": everything_server()})
    async with Client(proxy_params(path)) as client:
        resources = [r.uri for r in (await client.list_resources()).resources]
        templates = [
            t.uri_template for t in (await client.list_resource_templates()).resource_templates
        ]
        prompts = [p.name for p in (await client.list_prompts()).prompts]
        read = await client.read_resource(f"every__{DOC}")
        with pytest.raises(MCPError, match=r"signoff denied this call \(rule mcp_resource"):
            await client.read_resource(f"every__{DENIED_DOC}")
        with pytest.raises(MCPError, match="no resource 'nowhere__demo://x'"):
            await client.read_resource("nowhere__demo://x")
        prompt = await client.get_prompt("every__simple-prompt")
        with pytest.raises(MCPError, match=r"signoff denied this call \(rule mcp_prompt"):
            await client.get_prompt("every__args-prompt", {"city": "Paris"})
    assert f"every__{DOC}" in resources and f"every__{DENIED_DOC}" in resources
    assert all(uri.startswith("every__demo://") for uri in resources)
    assert "every__demo://resource/dynamic/text/{resourceId}" in templates
    assert {"every__simple-prompt", "every__args-prompt"} <= set(prompts)
    assert read.contents[0].uri == f"every__{DOC}"  # read again through the proxy
    assert "Architecture" in getattr(read.contents[0], "text", "")
    assert "simple prompt" in getattr(prompt.messages[0].content, "text", "")
    assert judged(ws, RESOURCE) == [("allow", DOC), ("deny", DENIED_DOC)]
    assert judged(ws, "mcp_prompt") == [("allow", "simple-prompt"), ("deny", "args-prompt")]
    outcomes = [e for e in events(ws) if e["kind"] == "session.outcome"]
    assert [(o["call"]["name"], o["outcome"]) for o in outcomes] == [
        (RESOURCE, "ran"),
        ("mcp_prompt", "ran"),
    ]  # the denied ones never went upstream


@pytest.mark.slow  # the proxy and an upstream as processes
async def test_a_file_resource_is_judged_as_a_read_of_its_path(tmp_path: Path) -> None:
    ws = tmp_path / "project"
    ws.mkdir()
    (ws / "notes.txt").write_text("hello\n")
    (ws / ".env").write_text("TOKEN=secret\n")
    outside = tmp_path / "outside.txt"
    outside.write_text("far\n")
    spec, log = tmp_path / "tools.json", tmp_path / "log.txt"
    notes, env, own = (ws / "notes.txt").as_uri(), (ws / ".env").as_uri(), outside.as_uri()
    mine = (ws / ".signoff" / "mcp.toml").as_uri()  # signoff's own state
    spec.write_text(json.dumps({"resources": [notes, env, own, mine]}))
    server = {
        "command": sys.executable,
        "args": [str(HERE / "mcp_upstream.py"), str(spec), str(log)],
    }
    path = write_config(ws, {"up": server})
    async with Client(proxy_params(path)) as client:
        listed = [r.uri for r in (await client.list_resources()).resources]
        read = await client.read_resource(f"up__{notes}")
        with pytest.raises(MCPError, match=r"(?s)sensitive path.*signoff approve req_") as asked:
            await client.read_resource(f"up__{env}")
        with pytest.raises(MCPError, match=r"(?s)outside the workspace.*signoff approve req_"):
            await client.read_resource(f"up__{own}")
        with pytest.raises(MCPError, match="signoff denied this call"):
            await client.read_resource(f"up__{mine}")
    assert listed == [f"up__{u}" for u in (notes, env, own, mine)]
    assert getattr(read.contents[0], "text", "") == "hello\n"
    assert log.read_text().splitlines() == [f"read {notes}"]  # nothing else was read
    assert [effect for effect, _ in judged(ws, RESOURCE_FILE)] == ["allow", "ask", "ask", "deny"]
    # a person approves the read of .env elsewhere; the same read again runs, once
    rid = request_id_of(str(asked.value))
    approved = signoff(ws, "approve", rid)
    assert approved.returncode == 0, approved.stderr
    async with Client(proxy_params(path)) as client:
        secret = await client.read_resource(f"up__{env}")
    assert getattr(secret.contents[0], "text", "") == "TOKEN=secret\n"
    assert log.read_text().splitlines() == [f"read {notes}", f"read {env}"]
    store = open_store(workspace=ws)
    try:
        assert store.get_request(rid).state == "finished"
    finally:
        store.close()
