"""Opening workspace files without following a link nobody judged, and only regular files.

The built-in tools resolve a path first (symlinks followed, the result checked against the
workspace and against the target the call was judged on, see `targets`). Between that
resolution and the open, a component could be swapped for a symlink; so the resolved path,
which holds no link, is opened one directory at a time from `/` with `O_NOFOLLOW`: a link
that appears anywhere on the way makes the open fail instead of being followed. The final
file is opened with `O_NONBLOCK` and must be a regular file: a FIFO would block a read for
ever, a device or socket is not a file to read or write.

A write replaces the file through a temporary file and a rename inside the directory that
was opened: a link put at the target meanwhile is replaced, never written through.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import threading
from collections.abc import Iterator

from .exceptions import InvalidInput
from .targets import TargetChanged, mode_kind

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_LINK_ERRORS = (errno.ELOOP, errno.ENOTDIR)


def _moved(path: str, tool: str) -> TargetChanged:
    return TargetChanged(
        f"{tool}: a directory or file on the way to {path} became a symlink after the path "
        "was resolved; not followed, nothing was done"
    )


@contextlib.contextmanager
def parent_dir(path: str, *, tool: str, create: bool = False) -> Iterator[tuple[int, str]]:
    """(fd of the directory holding `path`, its last name), every step opened without
    following a link; missing directories are made when `create` is set."""
    parts = [p for p in path.split(os.sep) if p]
    if not os.path.isabs(path) or not parts or any(p in (".", "..") for p in parts):
        raise InvalidInput(f"{tool}: {path!r} is not a resolved absolute path")
    fd = os.open(os.sep, _DIR_FLAGS)
    try:
        for name in parts[:-1]:
            try:
                try:
                    step = os.open(name, _DIR_FLAGS, dir_fd=fd)
                except FileNotFoundError:
                    if not create:
                        raise
                    with contextlib.suppress(FileExistsError):
                        os.mkdir(name, 0o777, dir_fd=fd)
                    step = os.open(name, _DIR_FLAGS, dir_fd=fd)
            except OSError as exc:
                if exc.errno in _LINK_ERRORS:
                    raise _moved(path, tool) from None
                raise
            os.close(fd)
            fd = step
        yield fd, parts[-1]
    finally:
        os.close(fd)


_SPELLED = {"dir": "directory", "link": "symlink"}


def file_kind(mode: int) -> str:
    """`mode_kind` in the words of messages (directory, symlink)."""
    kind = mode_kind(mode)
    return _SPELLED.get(kind, kind)


def _refuse_kind(mode: int, raw: str, tool: str, path: str) -> None:
    if stat.S_ISREG(mode):
        return
    if stat.S_ISLNK(mode):
        raise _moved(path, tool)
    raise InvalidInput(
        f"{tool}: {raw} is a {file_kind(mode)}, not a regular file; refused (only regular "
        "files are read or written)"
    )


def read_regular(path: str, *, raw: str, tool: str, limit: int | None = None) -> tuple[bytes, int]:
    """Up to `limit` bytes of the regular file at the resolved `path`, and its size."""
    with parent_dir(path, tool=tool) as (folder, name):
        try:
            _refuse_kind(
                os.stat(name, dir_fd=folder, follow_symlinks=False).st_mode, raw, tool, path
            )
            fd = os.open(
                name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=folder
            )
        except FileNotFoundError:
            raise InvalidInput(f"{raw}: no such file in the workspace") from None
        except OSError as exc:
            if exc.errno in _LINK_ERRORS:
                raise _moved(path, tool) from None
            raise
    try:
        info = os.fstat(fd)
        _refuse_kind(info.st_mode, raw, tool, path)  # swapped between the stat and the open
        with os.fdopen(fd, "rb", closefd=False) as handle:
            data = handle.read() if limit is None else handle.read(limit)
        return data, info.st_size
    finally:
        os.close(fd)


def write_regular(
    path: str, data: bytes, *, raw: str, tool: str, exclusive: bool = False, mode: int | None = None
) -> bool:
    """Write `data` as the whole file at the resolved `path`; True if it existed before.

    A new file is created with O_EXCL; an existing one (a regular file, nothing else) is
    replaced by a temporary file renamed over it, keeping its mode, so a crash never
    leaves half a file and a link put there meanwhile is replaced, not followed.
    `exclusive` refuses an existing file (create_project); `mode` sets a new file's mode.
    """
    with parent_dir(path, tool=tool, create=True) as (folder, name):
        try:
            existing = os.stat(name, dir_fd=folder, follow_symlinks=False).st_mode
        except FileNotFoundError:
            existing = None
        if existing is None or exclusive:
            try:
                fd = os.open(
                    name,
                    os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                    0o666,
                    dir_fd=folder,
                )
            except FileExistsError:
                raise TargetChanged(
                    f"{tool}: {raw} appeared after the path was checked; nothing was written"
                ) from None
            if mode is not None:
                os.fchmod(fd, mode)
            _write_all(fd, data)
            return False
        _refuse_kind(existing, raw, tool, path)
        # short, whatever the length of `name` (a name near NAME_MAX must still be writable)
        tmp = f".signoff-{os.getpid()}-{threading.get_ident()}.tmp"
        fd = os.open(
            tmp,
            os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
            0o600,
            dir_fd=folder,
        )
        try:
            os.fchmod(fd, stat.S_IMODE(existing))
            _write_all(fd, data)
            os.replace(tmp, name, src_dir_fd=folder, dst_dir_fd=folder)
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp, dir_fd=folder)
        return True


def _write_all(fd: int, data: bytes) -> None:
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)


def unlink_entry(path: str, *, tool: str) -> int:
    """Remove the directory entry at `path` (a link itself, not its target); its size."""
    with parent_dir(path, tool=tool) as (folder, name):
        info = os.stat(name, dir_fd=folder, follow_symlinks=False)
        if stat.S_ISDIR(info.st_mode):
            raise InvalidInput(f"{tool}: {path} is a directory; refused")
        os.unlink(name, dir_fd=folder)
        return info.st_size


def regular_or_none(path: str) -> str | None:
    """None for a regular file; else what it is (search skips the rest, unopened)."""
    try:
        mode = os.lstat(path).st_mode
    except OSError:
        return "unreadable"
    if stat.S_ISLNK(mode):
        try:
            mode = os.stat(path).st_mode
        except OSError:
            return "broken symlink"
    return None if stat.S_ISREG(mode) else file_kind(mode)


__all__ = [
    "file_kind",
    "parent_dir",
    "read_regular",
    "regular_or_none",
    "unlink_entry",
    "write_regular",
]
