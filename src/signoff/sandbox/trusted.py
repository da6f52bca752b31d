"""The sandbox's own programs, found only where the agent cannot have put them."""

from __future__ import annotations

import os


def which(name: str, path: str | None = None, *, workspace: str | None = None) -> str | None:
    """A program the sandbox may trust, found on PATH: resolved, and it and every folder
    above it owned by root and writable by no one else; never inside the workspace (nor
    the current folder, where a hook runs). The sandbox's own programs run outside it: one
    planted where the agent can write (a virtualenv's `bin` in the workspace, on PATH)
    would run the command uncontained."""
    try:
        here: str | None = os.getcwd()
    except OSError:
        here = None
    avoid = [p for p in (workspace, here) if p and p != "/"]
    for folder in (os.environ.get("PATH", os.defpath) if path is None else path).split(":"):
        if not folder.startswith("/"):
            continue  # relative: where the agent's shell stands
        candidate = os.path.join(folder, name)
        if not os.path.isfile(candidate):
            continue  # one stat for each folder without it
        real = os.path.realpath(candidate)
        if any((real + "/").startswith(p.rstrip("/") + "/") for p in avoid):
            continue
        if _root_owned(real) and os.access(real, os.X_OK):
            return real
    return None


def _root_owned(path: str) -> bool:
    """`path` and each folder above it: owned by root, writable by no one else."""
    while True:
        try:
            st = os.stat(path)
        except OSError:
            return False
        if st.st_uid != 0 or st.st_mode & 0o022:
            return False
        if path == "/":
            return True
        path = os.path.dirname(path)


__all__ = ["which"]
