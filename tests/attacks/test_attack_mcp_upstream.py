"""An agent reads, through the MCP proxy, a resource whose URI names a denied folder or
signoff's own state in a spelling the proxy and the server read differently. Through the
real proxy process and a real upstream that logs what reached it."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")

from mcp import Client
from mcp.shared.exceptions import MCPError

from mcp_servers import proxy_params, write_config

pytestmark = pytest.mark.slow  # the proxy and its upstream as processes
TESTS = Path(__file__).resolve().parents[1]
NOTE = {"readOnlyHint": False, "destructiveHint": False, "openWorldHint": False}


def project(
    tmp_path: Path, spec: dict[str, Any], settings: str = "", **config: Any
) -> tuple[Path, Path, Path]:
    ws = tmp_path / "project"
    (ws / ".signoff").mkdir(parents=True)
    (ws / ".signoff" / "settings.toml").write_text(settings)
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps(spec))
    server = {
        "command": sys.executable,
        "args": [str(TESTS / "mcp_upstream.py"), str(tools), str(tmp_path / "log.txt")],
    }
    return ws, tools, write_config(ws, {"up": server}, **config)


def logged(tmp_path: Path) -> list[str]:
    log = tmp_path / "log.txt"
    return log.read_text().splitlines() if log.exists() else []


# ---------------------------------------------------------------------- resource URIs


def resources_project(tmp_path: Path, naive: bool) -> tuple[Path, Path]:
    """secrets/ denied to reads; a folder named `x?` and one named `x#` (an agent can make
    them) and a link to secrets/ in the workspace."""
    ws, _tools, config = project(
        tmp_path,
        {"annotations": NOTE, "naive_uris": naive},
        '[permissions]\ndeny = ["Read(secrets/**)"]\n',
    )
    (ws / "secrets").mkdir()
    (ws / "secrets" / "k").write_text("TOP SECRET\n")
    (ws / "notes").mkdir()
    (ws / "notes" / "a.txt").write_text("hello\n")
    for odd in ("x?", "x#", "x;"):
        (ws / odd).mkdir()
    (ws / "link").symlink_to(ws / "secrets")
    return ws, config


DENIED = [
    "file://{ws}/secrets/k",
    "file://localhost{ws}/secrets/k",
    "FILE://{ws}/secrets/k",
    "file:{ws}/secrets/k",
    "file:///{ws}/secrets/k",
    "file:secrets/k",
    "file://{ws}/notes/../secrets/k",
    "file://{ws}/%73ecrets/k",
    "file://{ws}/secrets%2Fk",
    "file://{ws}/./secrets//k",
    "file://{ws}/link/k",
    "file://{ws}/x%3F/../secrets/k",
    # what a server that reads the text after file:// as the path reads
    "file://{ws}/x?/../secrets/k",
    "file://{ws}/x#/../secrets/k",
    "file://{ws}/x;/../secrets/k",
    "file://{ws}/notes/a.txt?/../../secrets/k",
    # a scheme the proxy does not know, which the server reads as a file
    "fs://{ws}/secrets/k",
    "fs://secrets/k",
]
PROTECTED = [
    "file://{ws}/.signoff/signoff.db",
    "fs://{ws}/.signoff/settings.toml",
    "fs://.signoff/mcp.toml",
]


@pytest.mark.parametrize("naive", [False, True], ids=["standard", "naive"])
async def test_a_resource_uri_into_a_denied_or_protected_folder_is_denied(
    tmp_path: Path, naive: bool
) -> None:
    ws, config = resources_project(tmp_path, naive)
    leaked: list[str] = []
    async with Client(proxy_params(config)) as client:
        for template in DENIED + PROTECTED:
            uri = template.replace("{ws}", str(ws))
            try:
                read = await client.read_resource(f"up__{uri}")
            except MCPError as exc:
                if "signoff denied this call" not in str(exc):
                    leaked.append(f"{uri}: not denied: {exc}")
                continue
            leaked.append(f"{uri}: {[getattr(c, 'text', '') for c in read.contents]}")
        fine = await client.read_resource(f"up__file://{ws}/notes/a.txt")
    assert leaked == [], "\n".join(leaked)
    assert getattr(fine.contents[0], "text", "") == "hello\n"
    assert logged(tmp_path) == [f"read file://{ws}/notes/a.txt"]  # nothing else was read
