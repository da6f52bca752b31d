"""`str(pathlib.Path(...))` without pathlib, for the files a hook process touches.

pathlib imports urllib.parse and ipaddress (for `as_uri`), a twentieth of a coding-agent
hook's start-up; the hook only joins a few paths. `joined` spells a path exactly as
`str(PurePosixPath(*parts))` does (empty and "." parts dropped, a later absolute part
starts over, ".." kept as written: it is not resolved textually, since a symlink before it
decides where it leads); `tests/test_plainpath.py` holds the two equal.
"""

from __future__ import annotations

import os


def joined(*parts: str | os.PathLike[str]) -> str:
    """`str(pathlib.PurePosixPath(*parts))`."""
    root = ""
    names: list[str] = []
    for part in parts:
        text = os.fspath(part)
        if text.startswith("/"):  # POSIX keeps exactly two leading slashes, else one
            root = "//" if text.startswith("//") and not text.startswith("///") else "/"
            names = []
        names += [name for name in text.split("/") if name and name != "."]
    return root + "/".join(names) or "."


__all__ = ["joined"]
