"""`.signoff/mcp.toml`: the upstream servers the proxy stands in front of, how it declares
their tools, and how it asks. Every error names the file, the key and what is wrong.

    [servers.files]                      # an upstream over stdio
    command = "npx"
    args = ["-y", "@modelcontextprotocol/server-filesystem", "."]
    env = { DEBUG = "0" }                # added to the proxy's environment
    [servers.crm]                        # an upstream over streamable HTTP
    url = "https://crm.internal/mcp"
    trusted = true                       # its annotations may relax a declaration

    [tools."files__write_file"]          # a declaration wins over annotations
    tier = "write"                       # read | write | destructive | external | privileged
    idempotent = true                    # retried after a crash instead of in doubt

    [ask]
    via = "pending"                      # pending | url | form
    expiry = "1d"                        # how long a request waits for a decision
    url_wait = "60s"                     # after the client opened the page: wait this long
    inbox = "http://127.0.0.1:8765"      # the web inbox (url elicitation, the pending text)
    trusted_clients = ["my-ide"]         # whose form answers count as a person's decision
    principal = "alice"                  # who the calls are made for (default: the OS user)

    [record]
    allowed = "before"                   # before | beside: when an allowed call is recorded
"""

from __future__ import annotations

import getpass
import os
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, cast, get_args

from ..exceptions import ConfigurationError
from ..models import Tier
from ..settings import parse_duration
from ..tools import TIERS

AskVia = Literal["pending", "url", "form"]
ASK_VIA: tuple[AskVia, ...] = get_args(AskVia)
SEPARATOR = "__"  # server__tool: the names the client sees
DEFAULT_EXPIRY = 86400.0
DEFAULT_URL_WAIT = 60.0
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]*$")
_SERVER_KEYS = frozenset({"command", "args", "env", "cwd", "url", "headers", "trusted"})
_TOOL_KEYS = frozenset({"tier", "idempotent"})
_ASK_KEYS = frozenset({"via", "expiry", "url_wait", "inbox", "trusted_clients", "principal"})
_TOP_KEYS = frozenset({"servers", "tools", "ask", "record"})
RecordAllowed = Literal["before", "beside"]
RECORD_ALLOWED: tuple[RecordAllowed, ...] = get_args(RecordAllowed)


@dataclass(frozen=True, slots=True)
class Upstream:
    """One upstream MCP server: a command (stdio) or a URL (streamable HTTP)."""

    name: str
    command: str | None = None
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: str | None = None
    url: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    trusted: bool = False  # its annotations may relax a declaration in [tools]


@dataclass(frozen=True, slots=True)
class ToolSetting:
    tier: Tier | None = None
    idempotent: bool | None = None


@dataclass(frozen=True, slots=True)
class ProxyConfig:
    path: str
    workspace: str  # the project: the folder holding .signoff/
    servers: Mapping[str, Upstream]
    tools: Mapping[str, ToolSetting] = field(default_factory=dict)
    via: AskVia = "pending"
    expiry: float = DEFAULT_EXPIRY
    inbox: str | None = None
    url_wait: float = DEFAULT_URL_WAIT
    trusted_clients: tuple[str, ...] = ()
    principal: str = ""
    # "before": an allowed call's verdict is durable before the call goes upstream, like
    # every other record. "beside": written by one writer thread while the call runs
    # (~2 ms less per call; a crash can lose the records of allowed calls in flight).
    record_allowed: RecordAllowed = "before"


def _fail(path: str, key: str, problem: str) -> ConfigurationError:
    return ConfigurationError(f"{path}: {key}: {problem}")


def _strings(path: str, key: str, value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise _fail(path, key, "must be a list of strings")
    return tuple(value)


def _string_map(path: str, key: str, value: Any) -> dict[str, str]:
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise _fail(path, key, "must be a table of strings")
    return dict(value)


def _upstream(path: str, name: str, table: Any) -> Upstream:
    where = f"[servers.{name}]"
    if not _NAME.match(name) or SEPARATOR in name:
        raise _fail(path, where, f"a server name is letters, digits, - and _ (no {SEPARATOR!r})")
    if not isinstance(table, dict):
        raise _fail(path, where, "must be a table")
    unknown = sorted(set(table) - _SERVER_KEYS)
    if unknown:
        raise _fail(path, where, f"unknown key {unknown[0]!r} (known: {sorted(_SERVER_KEYS)})")
    command, url = table.get("command"), table.get("url")
    if (command is None) == (url is None):
        raise _fail(path, where, "give exactly one of command (stdio) or url (streamable HTTP)")
    if command is not None and (not isinstance(command, str) or not command):
        raise _fail(path, f"{where} command", "must be a non-empty string")
    if url is not None and (
        not isinstance(url, str) or not url.startswith(("http://", "https://"))
    ):
        raise _fail(path, f"{where} url", f"{url!r} is not an http(s) URL")
    trusted = table.get("trusted", False)
    if not isinstance(trusted, bool):
        raise _fail(path, f"{where} trusted", "must be true or false")
    cwd = table.get("cwd")
    if cwd is not None and not isinstance(cwd, str):
        raise _fail(path, f"{where} cwd", "must be a string")
    return Upstream(
        name=name,
        command=command,
        args=_strings(path, f"{where} args", table.get("args", [])),
        env=_string_map(path, f"{where} env", table.get("env", {})),
        cwd=cwd,
        url=url,
        headers=_string_map(path, f"{where} headers", table.get("headers", {})),
        trusted=trusted,
    )


def _tool(path: str, name: str, table: Any) -> ToolSetting:
    where = f"[tools.{name!r}]"
    if not isinstance(table, dict):
        raise _fail(path, where, "must be a table")
    unknown = sorted(set(table) - _TOOL_KEYS)
    if unknown:
        raise _fail(path, where, f"unknown key {unknown[0]!r} (known: {sorted(_TOOL_KEYS)})")
    tier = table.get("tier")
    if tier is not None and tier not in TIERS:
        raise _fail(path, f"{where} tier", f"{tier!r} is not one of {', '.join(TIERS)}")
    idempotent = table.get("idempotent")
    if idempotent is not None and not isinstance(idempotent, bool):
        raise _fail(path, f"{where} idempotent", "must be true or false")
    return ToolSetting(tier=cast(Tier | None, tier), idempotent=idempotent)


def _record_allowed(where: str, record: Any) -> RecordAllowed:
    if not isinstance(record, dict):
        raise _fail(where, "[record]", "must be a table")
    unknown = sorted(set(record) - {"allowed"})
    if unknown:
        raise _fail(where, "[record]", f"unknown key {unknown[0]!r} (known: ['allowed'])")
    allowed = record.get("allowed", "before")
    if allowed not in RECORD_ALLOWED:
        raise _fail(
            where, "[record] allowed", f"{allowed!r} is not one of {', '.join(RECORD_ALLOWED)}"
        )
    return cast(RecordAllowed, allowed)


def load_config(path: str | os.PathLike[str], *, workspace: str | None = None) -> ProxyConfig:
    """Read the proxy's configuration. The workspace is the folder holding `.signoff/`
    (the config's grandparent when it lives there), unless given."""
    where = os.path.abspath(os.fspath(path))
    try:
        doc = tomllib.loads(Path(where).read_text("utf-8"))
    except FileNotFoundError:
        raise ConfigurationError(f"{where}: no such file (the proxy's configuration)") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigurationError(f"{where}: not valid TOML: {exc}") from None
    unknown = sorted(set(doc) - _TOP_KEYS)
    if unknown:
        raise _fail(where, f"[{unknown[0]}]", f"unknown table (known: {sorted(_TOP_KEYS)})")
    servers_table = doc.get("servers", {})
    if not isinstance(servers_table, dict) or not servers_table:
        raise _fail(where, "[servers]", "name at least one upstream server ([servers.NAME])")
    servers = {name: _upstream(where, name, t) for name, t in servers_table.items()}
    tools_table = doc.get("tools", {})
    if not isinstance(tools_table, dict):
        raise _fail(where, "[tools]", "must be a table of tool tables")
    tools = {name: _tool(where, name, t) for name, t in tools_table.items()}
    for name in tools:
        if name.split(SEPARATOR, 1)[0] not in servers:
            raise _fail(
                where, f"[tools.{name!r}]", f"names no server (tools are SERVER{SEPARATOR}TOOL)"
            )
    ask = doc.get("ask", {})
    if not isinstance(ask, dict):
        raise _fail(where, "[ask]", "must be a table")
    unknown = sorted(set(ask) - _ASK_KEYS)
    if unknown:
        raise _fail(where, "[ask]", f"unknown key {unknown[0]!r} (known: {sorted(_ASK_KEYS)})")
    via = ask.get("via", "pending")
    if via not in ASK_VIA:
        raise _fail(where, "[ask] via", f"{via!r} is not one of {', '.join(ASK_VIA)}")
    inbox = ask.get("inbox")
    if inbox is not None and (
        not isinstance(inbox, str) or not inbox.startswith(("http://", "https://"))
    ):
        raise _fail(where, "[ask] inbox", f"{inbox!r} is not an http(s) URL")
    if via == "url" and inbox is None:
        raise _fail(where, "[ask] via", "url elicitation needs inbox = the web inbox's URL")
    principal = ask.get("principal") or getpass.getuser()
    if not isinstance(principal, str):
        raise _fail(where, "[ask] principal", "must be a string")
    allowed = _record_allowed(where, doc.get("record", {}))
    if workspace is None:
        parent = os.path.dirname(where)
        workspace = os.path.dirname(parent) if os.path.basename(parent) == ".signoff" else parent
    return ProxyConfig(
        path=where,
        workspace=os.path.realpath(workspace),
        servers=servers,
        tools=tools,
        via=cast(AskVia, via),
        expiry=parse_duration(ask.get("expiry", DEFAULT_EXPIRY), f"{where}: [ask] expiry"),
        inbox=inbox.rstrip("/") if isinstance(inbox, str) else None,
        url_wait=parse_duration(ask.get("url_wait", DEFAULT_URL_WAIT), f"{where}: [ask] url_wait"),
        trusted_clients=_strings(where, "[ask] trusted_clients", ask.get("trusted_clients", [])),
        principal=principal,
        record_allowed=allowed,
    )


__all__ = [
    "ASK_VIA",
    "RECORD_ALLOWED",
    "SEPARATOR",
    "AskVia",
    "ProxyConfig",
    "RecordAllowed",
    "ToolSetting",
    "Upstream",
    "load_config",
]
