"""`signoff mcp install CLIENT` / `uninstall CLIENT`: a client's MCP configuration rewritten
to go through the proxy, and exactly undone.

Install moves the servers the client talked to directly (`mcpServers`) into
`.signoff/mcp.toml` as `[servers.NAME]` and leaves one server in their place, `signoff`,
which runs the proxy. Everything else in the client's file is kept as it was. What install
changed is written down in `.signoff/mcp/installed/CLIENT.json`: uninstall puts back the
client's file (and `mcp.toml`) byte for byte when nobody touched them since, and otherwise
takes out only what install put in (the `signoff` entry; the servers it moved go back).

    claude-code      PROJECT/.mcp.json
    cursor           PROJECT/.cursor/mcp.json   (--user: ~/.cursor/mcp.json)
    claude-desktop   ~/.config/Claude/claude_desktop_config.json
                     (macOS: ~/Library/Application Support/Claude/claude_desktop_config.json)
"""

from __future__ import annotations

import json
import os
import re
import sys
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..exceptions import ConfigurationError, InvalidInput

CLIENTS = ("claude-code", "cursor", "claude-desktop")
ENTRY = "signoff"
RECORDS = Path(".signoff") / "mcp" / "installed"
CONFIG = Path(".signoff") / "mcp.toml"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]*$")


@dataclass
class Report:
    lines: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def client_file(client: str, workspace: Path, home: Path, *, user: bool = False) -> Path:
    if client == "claude-code":
        if user:
            raise InvalidInput(
                "claude-code: only the project's .mcp.json is supported (not ~/.claude.json)"
            )
        return workspace / ".mcp.json"
    if client == "cursor":
        return (home if user else workspace) / ".cursor" / "mcp.json"
    if client == "claude-desktop":
        mac = home / "Library" / "Application Support" / "Claude"
        folder = mac if sys.platform == "darwin" else home / ".config" / "Claude"
        return folder / "claude_desktop_config.json"
    raise InvalidInput(f"unknown client {client!r} (known: {', '.join(CLIENTS)})")


def _read(path: Path) -> str | None:
    try:
        return path.read_text("utf-8")
    except FileNotFoundError:
        return None


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text, "utf-8")
    if path.exists():
        os.chmod(tmp, path.stat().st_mode & 0o777)
    os.replace(tmp, path)


def _json_doc(path: Path, text: str | None) -> dict[str, Any]:
    if text is None or not text.strip():
        return {}
    try:
        doc = json.loads(text)
    except ValueError as exc:
        raise ConfigurationError(f"{path}: not JSON ({exc}); fix it, then install") from None
    if not isinstance(doc, dict):
        raise ConfigurationError(f"{path}: not a JSON object")
    servers = doc.get("mcpServers", {})
    if not isinstance(servers, dict) or not all(isinstance(v, dict) for v in servers.values()):
        raise ConfigurationError(f"{path}: mcpServers must be an object of server objects")
    return doc


def _toml(value: Any) -> str:
    if isinstance(value, Mapping):
        return "{ " + ", ".join(f"{json.dumps(k)} = {_toml(v)}" for k, v in value.items()) + " }"
    return json.dumps(value, ensure_ascii=False)  # strings and lists read the same in TOML


def _as_table(path: Path, name: str, entry: Mapping[str, Any]) -> dict[str, Any] | None:
    """A client's server entry as `[servers.NAME]`; None if the proxy cannot reach it."""
    if not _NAME.match(name) or "__" in name:
        raise ConfigurationError(
            f"{path}: server {name!r}: rename it to letters, digits, - and _ (no '__') to "
            "put it behind signoff"
        )
    if "command" in entry:
        table: dict[str, Any] = {"command": entry["command"]}
        if entry.get("args"):
            table["args"] = list(entry["args"])
        if entry.get("env"):
            table["env"] = dict(entry["env"])
        if entry.get("cwd"):
            table["cwd"] = entry["cwd"]
        return table
    if "url" in entry and entry.get("type", "http") in (
        "http",
        "streamable-http",
        "streamableHttp",
    ):
        table = {"url": entry["url"]}
        if entry.get("headers"):
            table["headers"] = dict(entry["headers"])
        return table
    return None


def proxy_entry(config: Path) -> dict[str, Any]:
    # -P: the proxy never imports modules planted in the directory the client starts it in
    return {
        "command": sys.executable,
        "args": ["-P", "-m", "signoff", "mcp", "proxy", "--config", str(config)],
    }


def install(
    client: str,
    workspace: str | os.PathLike[str],
    *,
    home: str | os.PathLike[str] | None = None,
    user: bool = False,
) -> Report:
    ws = Path(os.path.realpath(os.fspath(workspace)))
    home_dir = Path(home) if home is not None else Path.home()
    target = client_file(client, ws, home_dir, user=user)
    record_path = ws / RECORDS / f"{client}{'-user' if user else ''}.json"
    if record_path.exists():
        raise ConfigurationError(
            f"signoff is already installed for {client} ({record_path}); uninstall first"
        )
    before = _read(target)
    doc = _json_doc(target, before)
    servers: dict[str, Any] = dict(doc.get("mcpServers", {}))
    if ENTRY in servers:
        raise ConfigurationError(
            f"{target}: a server named {ENTRY!r} is already there and signoff did not put it"
        )
    config = ws / CONFIG
    config_before = _read(config)
    known: dict[str, Any] = {}
    if config_before is not None:
        try:
            known = tomllib.loads(config_before).get("servers", {})
        except tomllib.TOMLDecodeError as exc:
            raise ConfigurationError(f"{config}: not valid TOML: {exc}") from None
    report = Report()
    moved: dict[str, Any] = {}
    kept: dict[str, Any] = {}
    added_text: list[str] = []
    for name, entry in servers.items():
        table = _as_table(target, name, entry)
        if table is None:
            kept[name] = entry
            report.warnings.append(
                f"{name}: not a stdio or streamable HTTP server; left as it was (not gated)"
            )
            continue
        moved[name] = entry
        if name in known:
            report.lines.append(f"{name}: already in {config}; that definition is used")
            continue
        added_text.append(
            f"\n[servers.{name}]\n" + "".join(f"{k} = {_toml(v)}\n" for k, v in table.items())
        )
        report.lines.append(f"{name}: moved behind signoff ({config})")
    if not known and not added_text:
        raise ConfigurationError(
            f"{target}: no MCP server to put behind signoff; add [servers.NAME] to {config} "
            "or the server to the client first"
        )
    config_after = (config_before or "") + "".join(added_text)
    new_doc = dict(doc)
    new_doc["mcpServers"] = {**kept, ENTRY: proxy_entry(config)}
    after = json.dumps(new_doc, indent=2, ensure_ascii=False) + "\n"
    record = {
        "client": client,
        "file": str(target),
        "before": before,
        "after": after,
        "moved": moved,
        "config": str(config),
        "config_before": config_before,
        "config_after": config_after,
    }
    _write(record_path, json.dumps(record, indent=1, ensure_ascii=False))
    if added_text:
        _write(config, config_after)
    _write(target, after)
    report.lines.append(f"{target}: {client} now reaches its MCP servers through signoff")
    return report


def uninstall(client: str, workspace: str | os.PathLike[str], *, user: bool = False) -> Report:
    ws = Path(os.path.realpath(os.fspath(workspace)))
    record_path = ws / RECORDS / f"{client}{'-user' if user else ''}.json"
    try:
        record = json.loads(record_path.read_text("utf-8"))
    except FileNotFoundError:
        raise ConfigurationError(
            f"signoff is not installed for {client} in {ws} (no {record_path})"
        ) from None
    report = Report()
    target = Path(record["file"])
    now = _read(target)
    if now == record["after"]:
        if record["before"] is None:
            target.unlink()
        else:
            _write(target, record["before"])
        report.lines.append(f"{target}: restored as it was before install")
    elif now is not None:  # changed since: take out only what install put in
        doc = _json_doc(target, now)
        servers = dict(doc.get("mcpServers", {}))
        servers.pop(ENTRY, None)
        for name, entry in record["moved"].items():
            servers.setdefault(name, entry)
        doc["mcpServers"] = servers
        _write(target, json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
        report.lines.append(f"{target}: changed since install; signoff's entry taken out")
    config = Path(record["config"])
    config_now = _read(config)
    if config_now == record["config_after"] and config_now != record["config_before"]:
        if record["config_before"] is None:
            config.unlink()
        else:
            _write(config, record["config_before"])
        report.lines.append(f"{config}: restored")
    elif config_now != record["config_after"]:
        report.warnings.append(f"{config}: changed since install; left as it is")
    record_path.unlink()
    return report


__all__ = ["CLIENTS", "Report", "client_file", "install", "proxy_entry", "uninstall"]
