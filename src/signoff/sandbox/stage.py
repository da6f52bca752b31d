"""A run's stage: the folder that holds the overlay's layers while the command runs
(`upper` receives every change, `work` is the overlay's own, `merged` is the workspace as
the command sees it, `empty` and `empty-file` are mounted over what is hidden), under
signoff's state folder, locked while in use and removed after.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import tempfile
import time

from . import bwrap, profile

TYPE_CHECKING = False  # not typing's: see signoff/__init__.py

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Mapping
    from typing import Any

_STALE_SECONDS = 60.0


def stage_root(env: Mapping[str, str] | None = None) -> str:
    """`~/.local/state/signoff/sandbox` (or under `$XDG_STATE_HOME`); where that cannot be
    made (no home folder, a read-only one), a folder of this user's own in the system's
    temporary folder."""
    preferred = os.path.join(profile.state_root(os.environ if env is None else env), "sandbox")
    try:
        os.makedirs(preferred, mode=0o700, exist_ok=True)
        return preferred
    except OSError:
        pass
    mine = os.path.join(tempfile.gettempdir(), f"signoff-{os.getuid()}")
    fallback = os.path.join(mine, "sandbox")
    os.makedirs(mine, mode=0o700, exist_ok=True)
    os.makedirs(fallback, mode=0o700, exist_ok=True)
    for folder in (fallback, os.path.dirname(fallback)):
        st = os.lstat(folder)
        if st.st_uid != os.getuid() or st.st_mode & 0o077 or not os.path.isdir(folder):
            raise PermissionError(f"{folder} is not this user's own folder (mode 700)")
    return fallback


@contextlib.contextmanager
def staged(root: str) -> Iterator[str]:
    """A new stage folder under `root`, locked while in use. After, it is renamed to
    `trash-*`, which the next run's `sweep` removes while its command runs (removing
    folders is slow on some file systems, and the command's caller waits for this one)."""
    os.makedirs(root, mode=0o700, exist_ok=True)
    stage = tempfile.mkdtemp(prefix="run-", dir=root)
    lock = os.open(os.path.join(stage, "lock"), os.O_CREAT | os.O_RDWR | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)
        for name in bwrap.stage_dirs(stage).values():
            os.mkdir(name, 0o700)
        os.close(os.open(bwrap.empty_file(stage), os.O_CREAT | os.O_WRONLY, 0o400))
        os.chmod(bwrap.stage_dirs(stage)["empty"], 0o555)
        yield stage
    finally:
        trash = stage.replace(os.sep + "run-", os.sep + "trash-")
        try:
            os.rename(stage, trash)
        except OSError:
            remove_tree(stage)
        os.close(lock)


def sweep(root: str) -> None:
    """Remove the stages of earlier runs: each `trash-*`, and each `run-*` whose launcher
    is gone (killed: its lock is free) and that is older than a minute."""
    now = time.time()
    for entry in os.scandir(root):
        if entry.name.startswith("trash-"):
            remove_tree(entry.path)
            continue
        if not entry.name.startswith("run-") or now - entry.stat().st_mtime < _STALE_SECONDS:
            continue
        try:
            lock = os.open(os.path.join(entry.path, "lock"), os.O_RDWR | os.O_CLOEXEC)
        except OSError:
            remove_tree(entry.path)
            continue
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            continue  # in use
        finally:
            os.close(lock)
        remove_tree(entry.path)


def remove_tree(path: str) -> None:
    """rmtree that also removes what the command made unreadable (and the overlay's
    work folder, which is mode 000)."""
    tried: set[str] = set()

    def unlock(_function: Callable[..., Any], name: str, _info: Any) -> None:
        if name in tried:
            return  # could not be opened up: leave it
        tried.add(name)
        for folder in (os.path.dirname(name), name):
            if os.path.isdir(folder) and not os.path.islink(folder):
                with contextlib.suppress(OSError):
                    os.chmod(folder, 0o700)
        with contextlib.suppress(FileNotFoundError):
            if os.path.isdir(name) and not os.path.islink(name):
                shutil.rmtree(name, onerror=unlock)
            else:
                os.unlink(name)

    with contextlib.suppress(FileNotFoundError):
        shutil.rmtree(path, onerror=unlock)


@contextlib.contextmanager
def landing_lock(workspace: str) -> Iterator[None]:
    """One landing at a time per workspace (a lock on the folder itself: no file)."""
    fd = os.open(workspace, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


__all__ = ["landing_lock", "remove_tree", "stage_root", "staged", "sweep"]
