"""Resources and prompts through the proxy: how they are named, and how a read is judged.

Names, as the client sees them (one rule for everything behind the proxy):

    tool       SERVER__NAME        files__read_file
    prompt     SERVER__NAME        everything__simple-prompt
    resource   SERVER__URI         everything__demo://resource/static/document/a.md
    template   SERVER__TEMPLATE    everything__demo://resource/dynamic/text/{id}

A server's name has no `__`, so the text before the first `__` is always the server,
and the rest is the URI exactly as that server wrote it: a URI routes to one upstream,
whatever the other upstreams offer, and one the client builds from a template routes too.

A `resources/read` is judged as a read, and recorded like a tool call, under the name
that says what it reads:

    file:///PATH         mcp_resource_file   a read of PATH (the workspace, sensitive
                                             files, signoff's own state, as in the hooks)
    http(s)://HOST/...   mcp_resource_url    a fetch from HOST (its domain is judged)
    any other scheme     mcp_resource        a read with no path or host to judge

Each takes `server` and `uri` (and `path` or `url`), so rules name them like any tool:
`mcp_resource_file(secrets/**)`, `mcp_resource_url(domain:example.com)`,
`mcp_resource(uri=demo://*)`. A `prompts/get` is recorded as `mcp_prompt` (`server`,
`prompt`, `arguments`); it is allowed unless a rule says otherwise.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any
from urllib.parse import unquote, urlsplit

from ..exceptions import InvalidInput
from ..tools import ToolSpec
from .config import SEPARATOR

RESOURCE_FILE = "mcp_resource_file"
RESOURCE_URL = "mcp_resource_url"
RESOURCE = "mcp_resource"
PROMPT = "mcp_prompt"

SPECS: Mapping[str, ToolSpec] = {
    RESOURCE_FILE: ToolSpec(
        name=RESOURCE_FILE,
        tier="read",
        kind="file_read",
        description="read an MCP resource that is a file",
        path_arg="path",
        default_path=None,
        subject_args=(),
    ),
    RESOURCE_URL: ToolSpec(
        name=RESOURCE_URL,
        tier="read",
        kind="network",
        description="read an MCP resource that is a web address",
        url_arg="url",
        subject_args=(),
    ),
    RESOURCE: ToolSpec(
        name=RESOURCE,
        tier="read",
        kind="other",
        description="read an MCP resource",
        subject_args=(),
    ),
    PROMPT: ToolSpec(
        name=PROMPT, tier="read", kind="other", description="get an MCP prompt", subject_args=()
    ),
}


def shown(server: str, name: str) -> str:
    """A prompt's name, a resource's URI or a template as the client sees it."""
    return f"{server}{SEPARATOR}{name}"


def route(shown_name: str, servers: Collection[str], what: str) -> tuple[str, str]:
    """(server, its own name or URI) for what the client asked; a clear error otherwise."""
    server, sep, original = shown_name.partition(SEPARATOR)
    if not sep or server not in servers or not original:
        known = ", ".join(sorted(servers)) or "none"
        raise InvalidInput(
            f"signoff: no {what} {shown_name!r} behind this proxy ({what}s are "
            f"SERVER{SEPARATOR}..., with SERVER one of: {known})"
        )
    return server, original


def read_call(server: str, uri: str) -> tuple[str, dict[str, Any]]:
    """The call a `resources/read` of `uri` is judged and recorded as."""
    parts = urlsplit(uri)
    scheme = parts.scheme.lower()
    arguments: dict[str, Any] = {"server": server, "uri": uri}
    if scheme == "file":
        # the path alone: a host in a file URI names no other place this server can read
        return RESOURCE_FILE, {**arguments, "path": unquote(parts.path) or "/"}
    if scheme in ("http", "https"):
        return RESOURCE_URL, {**arguments, "url": uri}
    return RESOURCE, arguments


def prompt_call(server: str, prompt: str, arguments: Mapping[str, str] | None) -> dict[str, Any]:
    return {"server": server, "prompt": prompt, "arguments": dict(arguments or {})}


__all__ = [
    "PROMPT",
    "RESOURCE",
    "RESOURCE_FILE",
    "RESOURCE_URL",
    "SPECS",
    "prompt_call",
    "read_call",
    "route",
    "shown",
]
