"""What the proxy shows of an upstream tool and how a call of it is presented: the
routing (`Routed`), the text a person reads (`preview`), the files a call rewrites, the
arguments its schema names, and the client configurations no call may touch."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import mcp.types as types

from ..models import ToolCall, canonical_json
from ..tools import ToolSpec
from .pins import Seen
from .resources import SPECS

CLIENT = "mcp"


@dataclass(frozen=True, slots=True)
class Routed:
    """A tool the client sees: which upstream has it, under which name there."""

    upstream: str
    original: str
    tool: types.Tool  # as the client sees it (namespaced name)
    spec: ToolSpec
    seen: Seen
    changed: str | None = None  # the diff from the pinned tool: calls ask
    new: bool = False  # no pin at all (`changed` is all it says): calls ask


def text_result(text: str, *, error: bool) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=error)


def preview(routed: Mapping[str, Routed]) -> Any:
    def preview(call: ToolCall, workspace: str) -> str:
        r = routed.get(call.name)
        about = f"{r.upstream} MCP server, tool {r.original}" if r else "an MCP tool"
        if call.name in SPECS:
            about = f"{call.arguments.get('server')} MCP server: {SPECS[call.name].description}"
        words = f"\n{r.tool.description}" if r and r.tool.description else ""
        args = canonical_json(dict(call.arguments), where="arguments")
        changed = ""
        if r and r.changed and r.new:
            changed = (
                "\nTHIS TOOL IS NEW since its server's tools were pinned (or renamed); "
                f"approving runs it and pins it:\n{r.changed}"
            )
        elif r and r.changed:
            changed = (
                "\nTHIS TOOL CHANGED since it was pinned; approving runs the changed tool "
                f"and pins it:\n{r.changed}"
            )
        return f"{call.name} ({about}){words}\narguments: {args}{changed}"

    return preview


def client_config_paths(workspace: str, home: str) -> tuple[str, ...]:
    """The files that decide whether a client goes through the proxy: out of reach."""
    return (
        os.path.join(workspace, ".mcp.json"),
        os.path.join(workspace, ".cursor", "mcp.json"),
        os.path.join(home, ".cursor", "mcp.json"),
        os.path.join(home, ".claude.json"),
        os.path.join(home, ".config", "Claude", "claude_desktop_config.json"),
        os.path.join(
            home, "Library", "Application Support", "Claude", "claude_desktop_config.json"
        ),
    )


def changed_files(routed: Mapping[str, Routed]) -> Any:
    def changed(call: ToolCall) -> tuple[str, ...]:
        r = routed.get(call.name)
        if r is None or r.spec.kind != "file_write":
            return ()
        found: list[str] = []
        for key in r.spec.path_arguments():
            value = call.arguments.get(key)
            if isinstance(value, str):
                found.append(value)
            elif isinstance(value, list):
                found.extend(v for v in value if isinstance(v, str))
        return tuple(found)

    return changed


def properties(routed: Routed) -> list[str]:
    props = routed.tool.input_schema.get("properties")
    return sorted(props) if isinstance(props, Mapping) else []


def unknown_arguments(schema: Mapping[str, Any], arguments: Mapping[str, Any]) -> list[str]:
    """Arguments the schema does not name (a schema naming none takes none; one that
    allows any makes the tool ask instead, see `declare`)."""
    if schema.get("additionalProperties"):
        return []
    props = schema.get("properties")
    named = props if isinstance(props, Mapping) else {}
    return sorted(k for k in arguments if k not in named)


__all__ = [
    "CLIENT",
    "Routed",
    "changed_files",
    "client_config_paths",
    "preview",
    "properties",
    "text_result",
    "unknown_arguments",
]
