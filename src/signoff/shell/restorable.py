"""Whether a deletion inside the workspace can be undone once it ran contained: the
sandbox keeps what a contained command deletes or replaces, up to what the record keeps
of one change set (`signoff.sandbox.review.MAX_KEPT_BYTES`); build and cache outputs are
made again by the build, whatever their size."""

from __future__ import annotations

import os
import posixpath

KEPT_BYTES = 32 * 1024 * 1024  # what the record keeps of one change set's old bytes
MAX_ENTRIES = 2_000  # a larger tree is not measured (a hook judges it): it asks

# Outputs a build, a test run or a package manager makes again.
REBUILT = frozenset(
    {
        "__pycache__",
        ".pytest_cache",
        ".mypy_cache",
        ".ruff_cache",
        ".hypothesis",
        ".tox",
        ".nox",
        "_build",
        "build",
        "dist",
        "target",
        "node_modules",
        ".next",
        ".parcel-cache",
        ".turbo",
        "htmlcov",
        ".coverage",
        ".eggs",
    }
)


def rebuilt(path: str) -> bool:
    """A build or cache output (`build/`, `__pycache__`, `x.egg-info`, `*.pyc`)."""
    parts = path.split("/")
    return any(p in REBUILT or p.endswith(".egg-info") for p in parts) or path.endswith(
        (".pyc", ".pyo", ".o")
    )


def restorable(paths: list[str]) -> bool:
    """Whether deleting or replacing these (resolved) paths keeps within what a change
    set keeps: their bytes, build outputs aside, at most `KEPT_BYTES`."""
    total = entries = 0
    for path in paths:
        if rebuilt(path):
            continue
        for size in _sizes(path):
            total += size
            entries += 1
            if total > KEPT_BYTES or entries > MAX_ENTRIES:
                return False
    return True


def _sizes(path: str) -> list[int]:
    try:
        st = os.lstat(path)
    except OSError:
        return []  # nothing there (yet): nothing to keep
    if not os.path.isdir(path) or os.path.islink(path):
        return [st.st_size]
    sizes: list[int] = []
    for folder, dirs, files in os.walk(path):
        dirs[:] = [d for d in dirs if not rebuilt(posixpath.join(folder, d))]
        for name in files:
            try:
                sizes.append(os.lstat(posixpath.join(folder, name)).st_size)
            except OSError:
                continue
            if len(sizes) > MAX_ENTRIES:
                return [KEPT_BYTES + 1]
    return sizes


__all__ = ["KEPT_BYTES", "REBUILT", "rebuilt", "restorable"]
