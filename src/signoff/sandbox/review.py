"""A contained command's change set, for review and revert.

`signoff sandbox --report FILE --backup DIR` writes what landed (FILE, JSON) and moves
what each change replaced or deleted into DIR. `change_set` turns the two into a review
`Snapshot` (the bytes before, the digest after, for each file and link), so `signoff review`
shows the change set and `signoff revert` restores the workspace exactly; and lists what the
sandbox stopped. A change set over `MAX_KEPT_BYTES` is listed but not kept (not revertible).
"""

from __future__ import annotations

import json
import os
import stat
import time
from collections.abc import Mapping
from typing import Any

from ..records import record
from ..shell.restorable import KEPT_BYTES as MAX_KEPT_BYTES
from ..workspace.snapshots import Snapshot, SnapshotEntry, path_state


@record(frozen=True, slots=True)
class ChangeSet:
    """What a contained command changed (`snapshot`: None when not revertible) and what
    the sandbox stopped it doing (`blocked`: kind and detail)."""

    changes: tuple[Mapping[str, str], ...]
    snapshot: Snapshot | None
    blocked: tuple[Mapping[str, str], ...]
    exit_code: int
    why_not_kept: str = ""


def read_report(path: str) -> dict[str, Any] | None:
    try:
        with open(path, encoding="utf-8") as handle:
            doc = json.load(handle)
    except (OSError, ValueError):
        return None
    return doc if isinstance(doc, dict) else None


def change_set(report: Mapping[str, Any], backup: str, workspace: str, tool: str) -> ChangeSet:
    """The change set of one contained run, from its report and its backup folder."""
    changes = tuple(
        {k: str(c.get(k, "")) for k in ("path", "action", "kind", "detail")}
        for c in report.get("changes", ())
        if isinstance(c, Mapping)
    )
    blocked = tuple(
        {k: str(b.get(k, "")) for k in ("kind", "detail")}
        for b in report.get("blocked", ())
        if isinstance(b, Mapping)
    )
    code = report.get("exit_code")
    exit_code = code if isinstance(code, int) else -1
    entries: list[SnapshotEntry] = []
    dirs: list[str] = []
    kept = 0
    for change in changes:
        action, kind, rel = change["action"], change["kind"], change["path"]
        if action not in ("created", "modified", "deleted"):
            continue
        if kind == "dir":
            if action == "created":
                dirs.append(rel)
            continue
        before = _before(os.path.join(backup, rel)) if action != "created" else (None, None, None)
        data, mode, link = before
        kept += len(data or b"")
        if kept > MAX_KEPT_BYTES:
            why = f"its old files are over {MAX_KEPT_BYTES // (1024 * 1024)} MiB"
            return ChangeSet(changes, None, blocked, exit_code, why)
        after = path_state(os.path.join(workspace, rel))
        entries.append(SnapshotEntry(rel, data, mode, link, after, settled=True))
    snapshot = Snapshot(tool, workspace, tuple(entries), tuple(dirs), time.time())
    return ChangeSet(changes, snapshot, blocked, exit_code)


def _before(path: str) -> tuple[bytes | None, int | None, str | None]:
    """What a change replaced, as the backup holds it: (bytes, mode, link target)."""
    try:
        st = os.lstat(path)
    except OSError:
        return None, None, None
    if stat.S_ISLNK(st.st_mode):
        return None, None, os.readlink(path)
    if not stat.S_ISREG(st.st_mode):
        return None, None, None
    with open(path, "rb") as handle:
        return handle.read(), stat.S_IMODE(st.st_mode), None


__all__ = ["MAX_KEPT_BYTES", "ChangeSet", "change_set", "read_report"]
