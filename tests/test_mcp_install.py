"""`signoff mcp install` / `uninstall`: a client's MCP configuration goes through the proxy,
everything else in it is kept, and uninstall undoes exactly what install did."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from signoff.exceptions import ConfigurationError
from signoff.mcp.config import load_config
from signoff.mcp.install import ENTRY, client_file, install, uninstall

REPO = Path(__file__).resolve().parents[1]

CLAUDE_DESKTOP = {
    "preferences": {"theme": "dark"},
    "mcpServers": {
        "files": {
            "command": "npx",
            "args": ["-y", "server-filesystem", "/tmp/x"],
            "env": {"A": "1"},
        },
        "crm": {"type": "http", "url": "https://crm.example/mcp", "headers": {"X-Key": "k"}},
        "old": {"type": "sse", "url": "https://old.example/sse"},
    },
}


@pytest.fixture
def dirs(tmp_path: Path) -> tuple[Path, Path]:
    ws, home = tmp_path / "project", tmp_path / "home"
    ws.mkdir()
    home.mkdir()
    return ws, home


@pytest.mark.parametrize("client", ["claude-code", "cursor", "claude-desktop"])
def test_install_moves_servers_behind_signoff_and_uninstall_restores_bytes(
    dirs: tuple[Path, Path], client: str
) -> None:
    ws, home = dirs
    target = client_file(client, ws, home)
    target.parent.mkdir(parents=True, exist_ok=True)
    original = json.dumps(CLAUDE_DESKTOP, indent=4) + "\n"  # not signoff's own formatting
    target.write_bytes(original.encode())

    report = install(client, ws, home=home)
    doc = json.loads(target.read_text())
    assert doc["preferences"] == {"theme": "dark"}
    assert set(doc["mcpServers"]) == {ENTRY, "old"}  # sse cannot be gated: left, warned
    assert any("old" in w for w in report.warnings)
    entry = doc["mcpServers"][ENTRY]
    assert entry["args"][:5] == ["-P", "-m", "signoff", "mcp", "proxy"]
    config = load_config(entry["args"][-1])
    assert config.workspace == str(ws.resolve())
    assert config.servers["files"].args == ("-y", "server-filesystem", "/tmp/x")
    assert config.servers["files"].env == {"A": "1"}
    assert config.servers["crm"].url == "https://crm.example/mcp"
    assert config.servers["crm"].headers == {"X-Key": "k"}

    with pytest.raises(ConfigurationError, match="already installed"):
        install(client, ws, home=home)

    uninstall(client, ws)
    assert target.read_bytes() == original.encode()
    assert not (ws / ".signoff" / "mcp.toml").exists()


def test_uninstall_after_the_user_edited_takes_out_only_signoff(dirs: tuple[Path, Path]) -> None:
    ws, home = dirs
    (ws / ".mcp.json").write_text(json.dumps({"mcpServers": {"files": {"command": "x"}}}))
    install("claude-code", ws, home=home)
    doc = json.loads((ws / ".mcp.json").read_text())
    doc["mcpServers"]["mine"] = {"command": "y"}
    doc["note"] = "added later"
    (ws / ".mcp.json").write_text(json.dumps(doc))
    uninstall("claude-code", ws)
    after = json.loads((ws / ".mcp.json").read_text())
    assert after == {
        "mcpServers": {"files": {"command": "x"}, "mine": {"command": "y"}},
        "note": "added later",
    }


def test_install_keeps_an_existing_config_and_adds_to_it(dirs: tuple[Path, Path]) -> None:
    ws, home = dirs
    existing = '# mine\n[servers.files]\ncommand = "node"\n\n[ask]\nvia = "pending"\n'
    (ws / ".signoff").mkdir()
    (ws / ".signoff" / "mcp.toml").write_text(existing)
    servers = {"files": {"command": "other"}, "web": {"command": "w", "args": ["a b"]}}
    (ws / ".mcp.json").write_text(json.dumps({"mcpServers": servers}))
    report = install("claude-code", ws, home=home)
    text = (ws / ".signoff" / "mcp.toml").read_text()
    assert text.startswith(existing)
    config = load_config(ws / ".signoff" / "mcp.toml")
    assert config.servers["files"].command == "node"  # the existing definition wins
    assert config.servers["web"].args == ("a b",)
    assert any("already in" in line for line in report.lines)
    uninstall("claude-code", ws)
    assert (ws / ".signoff" / "mcp.toml").read_text() == existing


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("{not json", "not JSON"),
        ('{"mcpServers": {"signoff": {"command": "x"}}}', "already there"),
        ('{"mcpServers": {"a__b": {"command": "x"}}}', "rename it"),
        ('{"mcpServers": {}}', "no MCP server"),
    ],
)
def test_install_refuses_what_it_cannot_undo(
    dirs: tuple[Path, Path], text: str, problem: str
) -> None:
    ws, home = dirs
    (ws / ".mcp.json").write_text(text)
    with pytest.raises(ConfigurationError, match=problem):
        install("claude-code", ws, home=home)
    assert (ws / ".mcp.json").read_text() == text
    assert not (ws / ".signoff" / "mcp" / "installed").exists()


def test_uninstall_without_install_says_so(dirs: tuple[Path, Path]) -> None:
    with pytest.raises(ConfigurationError, match="not installed"):
        uninstall("cursor", dirs[0])


@pytest.mark.slow
async def test_the_installed_entry_runs_the_proxy(dirs: tuple[Path, Path]) -> None:
    """The command written into .mcp.json, run as a client would, serves the moved server's
    tools through signoff (the CLI, in a subprocess)."""
    pytest.importorskip("mcp")
    from mcp import Client, StdioServerParameters

    ws, _ = dirs
    upstream = REPO / "tests" / "mcp_upstream.py"
    spec, log = ws / "tools.json", ws / "log.txt"
    spec.write_text("{}")
    server = {"command": sys.executable, "args": [str(upstream), str(spec), str(log)]}
    (ws / ".mcp.json").write_text(json.dumps({"mcpServers": {"up": server}}))
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    done = subprocess.run(
        [sys.executable, "-m", "signoff", "mcp", "install", "claude-code", "--workspace", str(ws)],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    entry = json.loads((ws / ".mcp.json").read_text())["mcpServers"][ENTRY]
    params = StdioServerParameters(command=entry["command"], args=entry["args"], env=env)
    async with Client(params) as client:
        names = {t.name for t in (await client.list_tools()).tools}
        asked = await client.call_tool("up__note", {"text": "x"})  # no annotations: asks
    assert "up__note" in names
    assert asked.is_error and "has NOT run" in asked.content[0].text  # type: ignore[union-attr]
    assert not log.exists()
