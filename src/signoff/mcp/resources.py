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
    any other scheme     mcp_resource        a read the rules name by its URI, and the
                                             paths its text reads as, judged as reads

Each takes `server` and `uri` (and `path` or `url`), so rules name them like any tool:
`mcp_resource_file(secrets/**)`, `mcp_resource_url(domain:example.com)`,
`mcp_resource(uri=demo://*)`. A `prompts/get` is recorded as `mcp_prompt` (`server`,
`prompt`, `arguments`); it is allowed unless a rule says otherwise.

Servers read URIs their own way, and the agent picks the URI: what the proxy judges is
every path a server may take it to name (`path_readings`), not only the standard one. A
file URI is judged as its path and, in `also`, as the text after `file://` (host, query
and fragment included: `file:///w/x?/../secrets/k` is `/w/secrets/k` to a server that
slices) and as that text decoded or not; a URI of any other scheme is judged by the rules
on its URI and, as `mcp_resource_file` would be, as the text after `SCHEME://` (`paths`):
`fs://.signoff/mcp.toml` is signoff's own state to a server that reads it as a file. A
relative reading is the server's working folder's. Whichever reading is strictest decides.
"""

from __future__ import annotations

import os
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
        path_args=("also",),  # the other paths a server may read the URI as
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


def read_call(server: str, uri: str, cwd: str | None = None) -> tuple[str, dict[str, Any]]:
    """The call a `resources/read` of `uri` is judged and recorded as (`cwd`: the folder
    the server reads relative paths from)."""
    parts = urlsplit(uri)
    scheme = parts.scheme.lower()
    arguments: dict[str, Any] = {"server": server, "uri": uri}
    if scheme in ("http", "https"):
        return RESOURCE_URL, {**arguments, "url": uri}
    readings = [_rooted(p, cwd) for p in path_readings(uri)]
    if scheme == "file":
        # the path alone, as the standard reads it; a host names no other place
        path = _rooted(unquote(parts.path) or "/", cwd)
        also = [p for p in dict.fromkeys(readings) if p != path]
        return RESOURCE_FILE, {**arguments, "path": path, **({"also": also} if also else {})}
    return RESOURCE, {**arguments, **({"paths": readings} if readings else {})}


def path_readings(uri: str) -> list[str]:
    """The paths a server may read `uri` as, besides the standard reading of a file URI:
    the text after `SCHEME://` (or `SCHEME:`), as it is and decoded; for a file URI, also
    that text after the host. Those that differ, in that order."""
    scheme, _, rest = uri.partition(":")
    after = rest[2:] if rest.startswith("//") else rest
    found = [after, unquote(after)]
    if scheme.lower() == "file" and rest.startswith("//"):
        host = urlsplit(uri).netloc
        found += [after[len(host) :], unquote(after[len(host) :])]
    return [p for p in dict.fromkeys(found) if p]


def _rooted(path: str, cwd: str | None) -> str:
    return os.path.join(cwd, path) if cwd and not os.path.isabs(path) else path


def as_file_read(arguments: Mapping[str, Any]) -> dict[str, Any] | None:
    """An `mcp_resource` read's paths as the `mcp_resource_file` call that reads them, to
    be judged beside it; None when its URI reads as no path."""
    paths = arguments.get("paths")
    if not isinstance(paths, list) or not paths:
        return None
    first, *rest = paths
    file_read = {"server": arguments.get("server"), "uri": arguments.get("uri"), "path": first}
    return {**file_read, **({"also": rest} if rest else {})}


def prompt_call(server: str, prompt: str, arguments: Mapping[str, str] | None) -> dict[str, Any]:
    return {"server": server, "prompt": prompt, "arguments": dict(arguments or {})}


__all__ = [
    "PROMPT",
    "RESOURCE",
    "RESOURCE_FILE",
    "RESOURCE_URL",
    "SPECS",
    "as_file_read",
    "path_readings",
    "prompt_call",
    "read_call",
    "route",
    "shown",
]
