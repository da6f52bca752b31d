"""Issue 26, item 2, end to end: an ordinary MCP Python SDK server behind the real
`signoff mcp proxy` (a process, over stdio, driven by the real `mcp` client library).

The server (`tests/mcp_sdk_server.py`) names its paths the ordinary ways: `file_name`, an
`Optional[str]` path, a pydantic model with a path field (`$ref` into `$defs`), and says
its writing tools are reversible (notify) and its reading tools read-only (allow). The
project denies `Read(secrets/**)` and `Edit(config/**)`. Before the fix the agent wrote
`.signoff/settings.local.toml` (approvals off) and into `config/`, and read `secrets/k`
and the store, with no one asked. Now each of those is denied, nothing reaches the
server, no request waits for a person, and plain notes and look-ups still run at once.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

pytest.importorskip("mcp")

from mcp import Client

from mcp_servers import proxy_params, text_of, write_config
from signoff.store import open_store

pytestmark = pytest.mark.slow

SERVER = Path(__file__).resolve().parents[1] / "mcp_sdk_server.py"
STATE = ".signoff/settings.local.toml"
APPROVALS_OFF = 'default_mode = "auto"\n'


@pytest.fixture
def project(tmp_path: Path) -> Path:
    ws = tmp_path / "project"
    for folder in (".signoff", "secrets", "config", "notes"):
        (ws / folder).mkdir(parents=True)
    (ws / "secrets" / "k").write_text("the secret\n")
    (ws / ".signoff" / "settings.toml").write_text(
        '[permissions]\ndeny = ["Read(secrets/**)", "Edit(config/**)"]\n'
    )
    write_config(
        ws,
        {"notes": {"command": sys.executable, "args": [str(SERVER), str(tmp_path / "log")]}},
    )
    return ws


ATTACKS = [
    ("notes__save", {"file_name": STATE, "content": APPROVALS_OFF}),
    ("notes__save_to", {"path": STATE, "content": APPROVALS_OFF}),
    ("notes__save_as", {"target": {"path": STATE}, "content": APPROVALS_OFF}),
    ("notes__save_as", {"target": json.dumps({"path": STATE}), "content": APPROVALS_OFF}),
    ("notes__save", {"file_name": "config/prod.yml", "content": "x"}),
    ("notes__save_to", {"path": "config/prod.yml", "content": "x"}),
    ("notes__save_as", {"target": {"path": "config/prod.yml"}, "content": "x"}),
    ("notes__peek", {"file_name": "secrets/k"}),
    ("notes__peek", {"file_name": ".signoff/signoff.db"}),
]


async def test_paths_in_ordinary_schemas_cannot_reach_state_denied_folders_or_secrets(
    project: Path,
) -> None:
    async with Client(proxy_params(project / ".signoff" / "mcp.toml")) as client:
        refused = [(n, a, await client.call_tool(n, a)) for n, a in ATTACKS]
        saved = await client.call_tool(
            "notes__save", {"file_name": "notes/today.md", "content": "hello\n"}
        )
        found = await client.call_tool("notes__lookup", {"query": "where are the notes?"})
        read = await client.call_tool("notes__peek", {"file_name": "notes/today.md"})
    for name, arguments, result in refused:
        text = text_of(result)
        assert result.is_error and "signoff denied" in text, (name, arguments, text)
        assert "the secret" not in text
    assert not (project / STATE).exists()
    assert not (project / "config" / "prod.yml").exists()
    # plain work runs at once: no question
    assert not saved.is_error and not found.is_error and not read.is_error
    assert "hello" in text_of(read)
    log = (project.parent / "log").read_text().splitlines()
    assert log == ["wrote notes/today.md", "lookup where are the notes?", "read notes/today.md"]
    store = open_store(workspace=project)
    try:
        assert store.list_requests() == []  # nobody was asked anything
    finally:
        store.close()


async def test_an_upstream_started_in_its_own_folder_is_judged_from_there(
    tmp_path: Path, project: Path
) -> None:
    # Issue 26, item 1's class through MCP: the server runs in `secrets/` (its `cwd`), so
    # its relative `k` is secrets/k, which the project denies.
    write_config(
        project,
        {
            "notes": {
                "command": sys.executable,
                "args": [str(SERVER), str(tmp_path / "log")],
                "cwd": "secrets",
            }
        },
    )
    async with Client(proxy_params(project / ".signoff" / "mcp.toml")) as client:
        result = await client.call_tool("notes__peek", {"file_name": "k"})
    assert result.is_error and "signoff denied" in text_of(result), text_of(result)
    assert "the secret" not in text_of(result)
    assert not (tmp_path / "log").exists() or "read k" not in (tmp_path / "log").read_text()
