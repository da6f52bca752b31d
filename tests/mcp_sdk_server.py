"""An ordinary MCP Python SDK server (`MCPServer`, called FastMCP before mcp 2) for the
proxy's tests, written the way people write one: a path argument named `file_name`, an
`Optional[str]` path, a pydantic model with a path in it. Its annotations say the writing
tools are reversible and stay on this machine (notify by tier) and the reading tools are
read-only (allowed by tier). Each tool does what it says, in its working directory, and
writes a line to LOG.

    python mcp_sdk_server.py LOG
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

from mcp.server import MCPServer
from mcp.types import ToolAnnotations
from pydantic import BaseModel

LOG = Path(sys.argv[1])
WRITES = ToolAnnotations(readOnlyHint=False, destructiveHint=False, openWorldHint=False)
READS = ToolAnnotations(readOnlyHint=True)

app = MCPServer("notes")


class Target(BaseModel):
    path: str
    encoding: Optional[str] = None  # noqa: UP045 (as people write it)


def _log(line: str) -> None:
    with LOG.open("a") as handle:
        handle.write(line + "\n")


def _write(name: str, content: str) -> str:
    path = Path(name)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content)
    _log(f"wrote {name}")
    return f"saved {name}"


@app.tool(annotations=WRITES)
def save(file_name: str, content: str) -> str:
    """Saves a note."""
    return _write(file_name, content)


@app.tool(annotations=WRITES)
def save_to(content: str, path: Optional[str] = None) -> str:  # noqa: UP045
    """Saves a note, by default in notes/inbox.md."""
    return _write(path or "notes/inbox.md", content)


@app.tool(annotations=WRITES)
def save_as(target: Target, content: str) -> str:
    """Saves a note where the target says."""
    return _write(target.path, content)


@app.tool(annotations=READS)
def peek(file_name: str) -> str:
    """Reads a note."""
    _log(f"read {file_name}")
    return Path(file_name).read_text(errors="replace")


@app.tool(annotations=READS)
def lookup(query: str) -> str:
    """Looks something up."""
    _log(f"lookup {query}")
    return f"nothing found for {query!r}"


if __name__ == "__main__":
    app.run()
