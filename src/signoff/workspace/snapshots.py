"""What a file-changing call replaced, so it can be reviewed and reverted after it ran.

A `notify` call (ran without asking) keeps a `Snapshot`: the bytes, mode or link target of
each file it touched, and the digest of what each holds after the call. It is plain JSON
(`"v": 1`, bytes in base64) so the store can keep it; `Workspace.revert` refuses when a file
changed since the call.
"""

from __future__ import annotations

import base64
import hashlib
import os
import stat
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from ..exceptions import InvalidInput, RevertConflict
from ..models import check_version

SNAPSHOT_VERSION = 1


def _digest(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def path_state(path: str) -> str | None:
    """A digest of what is at `path` now: file bytes, a link's target, or None if absent."""
    if os.path.islink(path):
        return "link:" + _digest(os.readlink(path).encode("utf-8"))
    if os.path.isdir(path):
        return "directory"
    if not os.path.exists(path):
        return None
    if not os.path.isfile(path):
        return "special"  # a FIFO or device: opening it could block for ever
    with open(path, "rb") as handle:
        return _digest(handle.read())


@dataclass(frozen=True, slots=True)
class SnapshotEntry:
    """One file: what was there before (None: nothing) and the digest after the call."""

    path: str  # relative to the workspace root
    before: bytes | None
    mode: int | None = None
    link: str | None = None  # the file was a symbolic link to this target
    after: str | None = None
    settled: bool = False

    @classmethod
    def capture(cls, rel: str, target: str) -> SnapshotEntry:
        if os.path.islink(target):
            return cls(rel, None, None, os.readlink(target))
        if not os.path.isfile(target):
            return cls(rel, None)
        with open(target, "rb") as handle:
            data = handle.read()
        return cls(rel, data, stat.S_IMODE(os.stat(target).st_mode))

    def settle_as(self, state: str | None) -> SnapshotEntry:
        return replace(self, after=state, settled=True)

    def to_json(self) -> dict[str, Any]:
        before = None if self.before is None else base64.b64encode(self.before).decode("ascii")
        return {
            "path": self.path,
            "before": before,
            "mode": self.mode,
            "link": self.link,
            "after": self.after,
            "settled": self.settled,
        }

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> SnapshotEntry:
        try:
            before = doc.get("before")
            return cls(
                path=str(doc["path"]),
                before=None if before is None else base64.b64decode(before, validate=True),
                mode=doc.get("mode"),
                link=doc.get("link"),
                after=doc.get("after"),
                settled=bool(doc.get("settled", False)),
            )
        except (KeyError, ValueError, TypeError) as exc:
            raise InvalidInput(f"snapshot entry is not valid: {exc}") from exc


@dataclass(frozen=True, slots=True)
class Snapshot:
    """What one file-changing call replaced, to review and revert it later."""

    tool: str
    root: str
    entries: tuple[SnapshotEntry, ...]
    dirs: tuple[str, ...] = ()  # directories the call created (removed on revert if empty)
    taken_at: float = 0.0

    def with_entries(self, entries: tuple[SnapshotEntry, ...]) -> Snapshot:
        return replace(self, entries=entries)

    def check_revertible(self, current: Callable[[str], str | None]) -> None:
        changed = [e.path for e in self.entries if not e.settled or current(e.path) != e.after]
        if any(not e.settled for e in self.entries):
            raise RevertConflict(
                f"cannot revert {self.tool}: the snapshot was never settled "
                "(the state after the call is unknown)"
            )
        if changed:
            raise RevertConflict(
                f"cannot revert {self.tool}: changed since the call: "
                f"{', '.join(changed)}; nothing was reverted"
            )

    def to_json(self) -> dict[str, Any]:
        return {
            "v": SNAPSHOT_VERSION,
            "tool": self.tool,
            "root": self.root,
            "entries": [e.to_json() for e in self.entries],
            "dirs": list(self.dirs),
            "taken_at": self.taken_at,
        }

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> Snapshot:
        check_version(doc, "snapshot")
        try:
            return cls(
                tool=str(doc["tool"]),
                root=str(doc["root"]),
                entries=tuple(SnapshotEntry.from_json(e) for e in doc["entries"]),
                dirs=tuple(str(d) for d in doc.get("dirs", ())),
                taken_at=float(doc.get("taken_at", 0.0)),
            )
        except (KeyError, TypeError) as exc:
            raise InvalidInput(f"snapshot document is not valid: {exc}") from exc


def restore_entry(entry: SnapshotEntry, target: str) -> None:
    """Put back what was at `target` before the call (remove what the call created)."""
    if os.path.lexists(target):
        os.unlink(target)
    if entry.link is not None:
        os.symlink(entry.link, target)
    elif entry.before is not None:
        from ..safe_files import write_regular  # no link followed, none written through

        write_regular(
            target, entry.before, raw=entry.path, tool="revert", exclusive=True, mode=entry.mode
        )
