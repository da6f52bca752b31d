"""Every string a call carries, and the paths each could name to the tool that gets it.

A tool declared from a schema (an MCP upstream's) may use any string it is given as a
path: `save(file_name=...)`, a field of a model, an item of a list, a key of a map, even
JSON inside a string (the MCP Python SDK decodes a string given for a model or a list).
`argument_strings` finds them all without recursion (past `MAX_DEPTH` levels, JSON in
strings counted, or `MAX_STRINGS` strings, it says it could not: the call asks; an
argument that is only ever a string, a file's content, keeps its JSON as text), and
`path_spellings` says which paths one of them
could name once a tool has read it the ordinary ways: as it is, trimmed of blanks and
quotes, as a `file:` URL, percent-decoded, with backslashes as separators, with `$VAR`
and `~user` expanded. The policy judges each such path as one the call may read (and
write): see `effects.of_call`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

TYPE_CHECKING = False  # not typing's: see signoff/__init__.py

if TYPE_CHECKING:
    from collections.abc import Collection
    from typing import Any

MAX_DEPTH = 64  # objects and lists in objects and lists (a JSON string inside counts one)
MAX_STRINGS = 4096  # strings judged in one call: past this, the call cannot be judged
PATH_MAX = 4096  # the longest path the OS opens (Linux PATH_MAX): a longer string is none


def argument_strings(
    arguments: Mapping[str, Any], text_args: Collection[str] = ()
) -> tuple[list[str], str | None]:
    """Every string in the arguments (object keys below the top level too, and what JSON
    inside a string decodes to, except in the top-level `text_args`, which a tool only
    ever gets as strings); and why not all of them could be found (nesting too deep, too
    many), or None."""
    found: list[str] = []
    stack: list[tuple[Any, int]] = []
    for key, value in arguments.items():
        if key in text_args and isinstance(value, str):
            found.append(value)
        else:
            stack.append((value, 1))
    while stack:
        value, depth = stack.pop()
        if depth > MAX_DEPTH:
            return found, f"the arguments nest deeper than {MAX_DEPTH} levels"
        if isinstance(value, str):
            found.append(value)
            decoded = _json_inside(value)
            if decoded is not None:
                stack.append((decoded, depth + 1))
        elif isinstance(value, Mapping):
            for key, item in value.items():
                if isinstance(key, str):
                    found.append(key)
                stack.append((item, depth + 1))
        elif isinstance(value, list | tuple):
            stack.extend((item, depth + 1) for item in value)
        if len(found) > MAX_STRINGS:
            return found, f"the arguments hold more than {MAX_STRINGS} strings"
    return found, None


def _json_inside(text: str) -> Any:
    """What a string holding a JSON object, list or string decodes to, else None."""
    head = text.lstrip()[:1]
    if head not in ("{", "[", '"'):
        return None
    import json

    try:
        decoded = json.loads(text)
    except (ValueError, RecursionError):  # not JSON, or nested past the parser's limit
        return None
    return decoded if isinstance(decoded, dict | list | str) else None


def path_spellings(text: str) -> list[str]:
    """The paths a string could name to a tool that reads it as one (none when it cannot
    name a file at all: empty, a NUL in it, longer than PATH_MAX)."""
    if not text or "\x00" in text or len(text) > PATH_MAX:
        return []
    out = [text]
    trimmed = text.strip().strip("'\"`").strip()
    if trimmed and trimmed != text:
        out.append(trimmed)
    for word in tuple(out):
        if word[:5].lower() == "file:":
            from urllib.parse import unquote, urlsplit

            out.append(unquote(urlsplit(word).path))
        elif "%" in word:
            from urllib.parse import unquote

            out.append(unquote(word))
        if "\\" in word:
            out.append(word.replace("\\", "/"))
        if "$" in word:
            out.append(os.path.expandvars(word))
        if word.startswith("~") and word != "~" and not word.startswith("~/"):
            out.append(os.path.expanduser(word))  # ~user/...
    return [p for p in dict.fromkeys(out) if p and "\x00" not in p]


__all__ = ["MAX_DEPTH", "MAX_STRINGS", "PATH_MAX", "argument_strings", "path_spellings"]
