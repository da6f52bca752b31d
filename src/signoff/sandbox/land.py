"""Landing a contained run's stage into the workspace: the overlay's upper directory is
exactly what the command changed, and it lands after the command has ended (every process
of the sandbox is gone, so nothing moves under our feet from inside).

The upper directory holds, relative to the workspace: whole files and links the command
created or changed (copied up), directories it created or changed, a *whiteout* (a
character device 0:0) for each name it deleted, and *opaque* directories (the xattr
`user.overlay.opaque`) for a directory it removed and made again. Each becomes a
`Change`. A change that must not land is refused and recorded instead: under a protected
name (`profile.refusal`), under a path a protected name leads to, over something the
workspace changed since the run began (a conflict: the workspace's version stays), or a
special file (a FIFO, a socket, a device).

The workspace is entered one directory at a time through file descriptors opened with
O_NOFOLLOW, so a link planted while the command ran (by anyone) cannot send a change
outside. What a change replaces or deletes can be kept (moved) in a backup folder, so a
change set can be reverted exactly. Set-user-id and set-group-id bits never land.
"""

from __future__ import annotations

import errno
import os
import stat

from ..records import record
from . import profile

TYPE_CHECKING = False  # not typing's: see signoff/__init__.py

if TYPE_CHECKING:
    from collections.abc import Iterator

OPAQUE = "user.overlay.opaque"
_OVERLAY_XATTR = "user.overlay."
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


@record(frozen=True)
class Change:
    """One change of a contained run, relative to the workspace. `action` is what
    happened: created, modified, deleted (landed), or refused, conflict, skipped (did not
    land). `kind`: file, dir, symlink or other."""

    path: str
    action: str
    kind: str
    detail: str = ""

    @property
    def landed(self) -> bool:
        return self.action in ("created", "modified", "deleted")


class Lander:
    def __init__(
        self,
        upper: str,
        workspace: str,
        *,
        since_ns: int,
        mountpoints: frozenset[str] = frozenset(),
        protected: frozenset[str] = frozenset(),
        backup: str | None = None,
    ) -> None:
        self.upper, self.workspace, self.since_ns = upper, workspace, since_ns
        self.mountpoints, self.protected, self.backup = mountpoints, protected, backup
        self.changes: list[Change] = []

    # ------------------------------------------------------------------ the walk

    def land(self) -> list[Change]:
        root = os.open(self.workspace, _DIR_FLAGS)
        try:
            self._merge(self.upper, "", root, opaque=_is_opaque(self.upper))
        finally:
            os.close(root)
        return self.changes

    def _merge(self, upper_dir: str, rel: str, ws_fd: int, *, opaque: bool) -> None:
        """Land the entries of `upper_dir` into the directory `ws_fd` (at `rel`); when
        opaque, what the workspace has there and the stage does not is deleted."""
        names = sorted(os.listdir(upper_dir))
        if opaque:
            for name in sorted(set(os.listdir(ws_fd)) - set(names)):
                self._remove(ws_fd, name, _join(rel, name))
        for name in names:
            self._entry(upper_dir, name, _join(rel, name), ws_fd, in_opaque=opaque)

    def _entry(
        self, upper_dir: str, name: str, rel: str, ws_fd: int, *, in_opaque: bool = False
    ) -> None:
        """Land one entry; `in_opaque`: its folder replaced the workspace's, so a folder
        here is new too, whatever the workspace has under its name."""
        source = os.path.join(upper_dir, name)
        st = os.lstat(source)
        kind = _kind(st.st_mode)
        if rel in self.mountpoints and _is_empty(source, st):
            return  # made by us to mount on: never the command's
        if stat.S_ISCHR(st.st_mode) and st.st_rdev == 0:  # a whiteout: deleted
            self._remove(ws_fd, name, rel)
            return
        why = self.refusal(rel) or _git_elsewhere(name, kind, rel, upper_dir, ws_fd)
        if why is not None:
            self.changes.append(Change(rel, "refused", kind, why))
            return
        if kind == "other":
            self.changes.append(Change(rel, "skipped", kind, "a special file never lands"))
            return
        current = _lstat(ws_fd, name)
        if kind == "dir":
            self._directory(source, st, name, rel, ws_fd, current, in_opaque=in_opaque)
            return
        if current is not None and self._conflict(current, rel, kind):
            return
        if current is not None and stat.S_ISDIR(current.st_mode):
            if not self._remove(ws_fd, name, rel, quiet=True):
                self.changes.append(Change(rel, "refused", kind, "it would replace a folder"))
                return
            current = None
        elif current is not None:
            self._keep(ws_fd, name, rel)
        _clean(source, st)
        _put(source, ws_fd, name)
        action = "modified" if current is not None else "created"
        self.changes.append(Change(rel, action, kind, _suid_note(st)))

    def _directory(
        self,
        source: str,
        st: os.stat_result,
        name: str,
        rel: str,
        ws_fd: int,
        current: os.stat_result | None,
        *,
        in_opaque: bool,
    ) -> None:
        opaque = in_opaque or _is_opaque(source)
        if current is not None and not stat.S_ISDIR(current.st_mode):
            if self._conflict(current, rel, "dir") or not self._remove(ws_fd, name, rel):
                return
            current = None
        entries = self._movable(source, rel) if current is None else None
        if entries is not None:
            for path, entry in entries:
                _clean(path, entry)
            try:
                os.rename(source, name, dst_dir_fd=ws_fd)
            except OSError as exc:
                if exc.errno != errno.EXDEV:
                    raise
            else:
                detail = f"{len(entries) - 1} entries" if len(entries) > 1 else ""
                if any(_suid_note(entry) for _path, entry in entries):
                    detail += "; set-user-id and set-group-id bits removed"
                self.changes.append(Change(rel, "created", "dir", detail))
                return
        if current is None:
            os.mkdir(name, stat.S_IMODE(st.st_mode) | stat.S_IRWXU, dir_fd=ws_fd)
            self.changes.append(Change(rel, "created", "dir"))
        try:
            inner = os.open(name, _DIR_FLAGS, dir_fd=ws_fd)
        except OSError as exc:  # ELOOP, ENOTDIR: a link or a file took its place
            self.changes.append(Change(rel, "conflict", "dir", f"not a folder now ({exc})"))
            return
        try:
            self._merge(source, rel, inner, opaque=opaque and current is not None)
            mode = stat.S_IMODE(st.st_mode) & ~(stat.S_ISUID | stat.S_ISGID)
            if current is not None and stat.S_IMODE(current.st_mode) != mode:
                os.chmod(inner, mode)
                self.changes.append(Change(rel, "modified", "dir", f"mode {mode:o}"))
            elif current is None:
                os.chmod(inner, mode)
        finally:
            os.close(inner)

    # ------------------------------------------------------------------ deleting

    def _remove(self, ws_fd: int, name: str, rel: str, *, quiet: bool = False) -> bool:
        """Delete `name` (kept in the backup when there is one), except what is protected
        or changed since the run began. Whether it is gone."""
        current = _lstat(ws_fd, name)
        if current is None:
            return True
        kind = _kind(current.st_mode)
        why = self.refusal(rel)
        if why is not None:
            self.changes.append(Change(rel, "refused", kind, f"deleting it: {why}"))
            return False
        held = self._holds_protected(ws_fd, name, rel) if kind == "dir" else None
        if held is not None:  # never half: a folder without its protected files
            self.changes.append(Change(rel, "refused", kind, f"deleting it would delete {held}"))
            return False
        if self._conflict(current, rel, kind):
            return False
        self._keep(ws_fd, name, rel, delete=True)
        if not quiet:
            self.changes.append(Change(rel, "deleted", kind))
        return True

    def _holds_protected(self, ws_fd: int, name: str, rel: str) -> str | None:
        for child_rel in _walk_names(ws_fd, name, rel):
            if self.refusal(child_rel) is not None:
                return child_rel
        return None

    def _keep(self, ws_fd: int, name: str, rel: str, *, delete: bool = False) -> None:
        """Move what is about to be replaced or deleted into the backup, or delete it."""
        if self.backup is None:
            if delete:
                _delete(ws_fd, name)
            return
        target = os.path.join(self.backup, rel)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        try:
            os.rename(name, target, src_dir_fd=ws_fd)
        except OSError as exc:
            if exc.errno != errno.EXDEV:
                raise
            _copy_out(ws_fd, name, target)
            _delete(ws_fd, name)

    # ------------------------------------------------------------------ checks

    def refusal(self, rel: str) -> str | None:
        why = profile.refusal(rel)
        if why is not None:
            return why
        for path in self.protected:
            if rel == path or rel.startswith(path + "/"):
                return f"a protected name leads to {path}"
        return None

    def _conflict(self, current: os.stat_result, rel: str, kind: str) -> bool:
        if current.st_ctime_ns <= self.since_ns:
            return False
        self.changes.append(
            Change(rel, "conflict", kind, "changed in the workspace while the command ran")
        )
        return True

    def _movable(self, source: str, rel: str) -> list[tuple[str, os.stat_result]] | None:
        """The entries of a new folder (itself first) when it can land in one rename:
        nothing in it to refuse, skip or leave out; else None."""
        entries = []
        for path, child_rel, st in _walk_upper(source, rel):
            name = child_rel.rsplit("/", 1)[-1].casefold()
            if (
                self.refusal(child_rel) is not None
                or name in _GIT_NAMES
                or child_rel in self.mountpoints
                or _kind(st.st_mode) == "other"
                or (stat.S_ISDIR(st.st_mode) and _is_opaque(path))
            ):
                return None
            entries.append((path, st))
        return entries


# ---------------------------------------------------------------------- helpers

_GIT_NAMES = frozenset((".git", "head", "config", "hooks"))


def _git_elsewhere(name: str, kind: str, rel: str, upper_dir: str, ws_fd: int) -> str | None:
    """A way to make git run code later that is not under a `.git` folder: a `.git` file
    or link (it sends git to another folder, whose hooks and config then run), or the
    parts of a bare repository (`HEAD` beside `config` or `hooks`: git run in that folder
    reads them)."""
    folded = name.casefold()
    if folded not in _GIT_NAMES or ".git" in rel.casefold().split("/")[:-1]:
        return None
    if folded == ".git":
        return None if kind == "dir" else "a .git file or link sends git to other hooks"
    siblings = {n.casefold() for n in (*os.listdir(upper_dir), *os.listdir(ws_fd))}
    if "head" in siblings and siblings & {"config", "hooks"}:
        return "a bare git repository's HEAD, config or hooks (code git runs later)"
    return None


def _join(rel: str, name: str) -> str:
    return f"{rel}/{name}" if rel else name


def _kind(mode: int) -> str:
    if stat.S_ISREG(mode):
        return "file"
    if stat.S_ISDIR(mode):
        return "dir"
    if stat.S_ISLNK(mode):
        return "symlink"
    return "other"


def _lstat(dir_fd: int, name: str) -> os.stat_result | None:
    try:
        return os.lstat(name, dir_fd=dir_fd)
    except FileNotFoundError:
        return None


def _is_opaque(path: str) -> bool:
    try:
        return os.getxattr(path, OPAQUE, follow_symlinks=False) == b"y"
    except OSError:
        return False


def _is_empty(path: str, st: os.stat_result) -> bool:
    if stat.S_ISDIR(st.st_mode):
        return not os.listdir(path)
    return stat.S_ISREG(st.st_mode) and st.st_size == 0


def _suid_note(st: os.stat_result) -> str:
    if st.st_mode & (stat.S_ISUID | stat.S_ISGID) and stat.S_ISREG(st.st_mode):
        return "set-user-id and set-group-id bits removed"
    return ""


def _clean(path: str, st: os.stat_result) -> None:
    """Drop the overlay's own xattrs and the set-id bits before a stage file lands."""
    if stat.S_ISLNK(st.st_mode):
        return
    if stat.S_ISREG(st.st_mode) and st.st_mode & (stat.S_ISUID | stat.S_ISGID):
        os.chmod(path, stat.S_IMODE(st.st_mode) & ~(stat.S_ISUID | stat.S_ISGID))
    try:
        names = os.listxattr(path, follow_symlinks=False)
    except OSError:
        return
    for attr in names:
        if attr.startswith(_OVERLAY_XATTR):
            os.removexattr(path, attr, follow_symlinks=False)


def _walk_upper(root: str, rel: str) -> Iterator[tuple[str, str, os.stat_result]]:
    """Every entry of a stage folder (itself included), links not followed."""
    yield root, rel, os.lstat(root)
    for dirpath, dirnames, filenames in os.walk(root):
        sub = os.path.relpath(dirpath, root)
        for name in (*dirnames, *filenames):
            path = os.path.join(dirpath, name)
            yield path, _join(rel, name if sub == "." else f"{sub}/{name}"), os.lstat(path)


def _walk_names(dir_fd: int, name: str, rel: str) -> Iterator[str]:
    """The relative paths under a workspace folder, entered through descriptors."""
    try:
        fd = os.open(name, _DIR_FLAGS, dir_fd=dir_fd)
    except OSError:
        return
    try:
        for top, dirs, files, _fd in os.fwalk(".", dir_fd=fd):
            here = os.path.relpath(top, ".")
            for child in (*dirs, *files):
                yield _join(rel, child if here == "." else f"{here}/{child}")
    finally:
        os.close(fd)


def _put(source: str, ws_fd: int, name: str) -> None:
    """Move a stage file or link into place (a copy when the stage is on another file
    system), replacing what is there in one rename."""
    try:
        os.rename(source, name, dst_dir_fd=ws_fd)
        return
    except OSError as exc:
        if exc.errno != errno.EXDEV:
            raise
    temporary = f".{name[:200]}.{os.urandom(6).hex()}.signoff-landing"  # new (O_EXCL)
    st = os.lstat(source)
    if stat.S_ISLNK(st.st_mode):
        os.symlink(os.readlink(source), temporary, dir_fd=ws_fd)
    else:
        _copy_file(os.open(source, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC), ws_fd, temporary)
    os.rename(temporary, name, src_dir_fd=ws_fd, dst_dir_fd=ws_fd)


def _copy_file(src_fd: int, dst_dir_fd: int, name: str) -> None:
    """Copy an open file (closed here) into a new file, with its mode and times."""
    try:
        st = os.fstat(src_fd)
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        dst_fd = os.open(name, flags, 0o600, dir_fd=dst_dir_fd)
        try:
            while os.copy_file_range(src_fd, dst_fd, 1 << 30):
                pass
            os.fchmod(dst_fd, stat.S_IMODE(st.st_mode) & ~(stat.S_ISUID | stat.S_ISGID))
            os.utime(dst_fd, ns=(st.st_atime_ns, st.st_mtime_ns))
        finally:
            os.close(dst_fd)
    finally:
        os.close(src_fd)


def _copy_out(dir_fd: int, name: str, target: str) -> None:
    """Copy a workspace entry (entered through descriptors) to a backup path."""
    st = os.lstat(name, dir_fd=dir_fd)
    if stat.S_ISLNK(st.st_mode):
        os.symlink(os.readlink(name, dir_fd=dir_fd), target)
    elif stat.S_ISDIR(st.st_mode):
        os.mkdir(target, 0o700)
        fd = os.open(name, _DIR_FLAGS, dir_fd=dir_fd)
        try:
            for child in os.listdir(fd):
                _copy_out(fd, child, os.path.join(target, child))
        finally:
            os.close(fd)
        os.chmod(target, stat.S_IMODE(st.st_mode))
    elif stat.S_ISREG(st.st_mode):
        source = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dir_fd)
        parent = os.open(os.path.dirname(target), _DIR_FLAGS)
        try:
            _copy_file(source, parent, os.path.basename(target))
        finally:
            os.close(parent)


def _delete(dir_fd: int, name: str) -> None:
    st = _lstat(dir_fd, name)
    if st is None:
        return
    if stat.S_ISDIR(st.st_mode):
        import shutil

        shutil.rmtree(name, dir_fd=dir_fd)
    else:
        os.unlink(name, dir_fd=dir_fd)


def land(
    upper: str,
    workspace: str,
    *,
    since_ns: int,
    mountpoints: frozenset[str] = frozenset(),
    protected: frozenset[str] = frozenset(),
    backup: str | None = None,
) -> list[Change]:
    """Land a stage's upper directory into the workspace; every change, landed or not."""
    lander = Lander(
        upper,
        workspace,
        since_ns=since_ns,
        mountpoints=mountpoints,
        protected=protected,
        backup=backup,
    )
    return lander.land()


__all__ = ["Change", "land"]
