"""The task board: tasks with dependencies, claimed by one agent at a time.

    open --claim--> claimed --complete--> done
      ^                |
      +--release-------+   (or its lease lapsed: `task.lapsed`, claimable again)

A claim names the version the agent read (a stale one is refused: someone changed the task
since) and returns a token, shown once; only the owner, with that token, completes or
releases the task. A task is claimable only once every task it depends on is done. Each
transition is one transaction that compare-and-sets the row on its version and appends its
audit entry; the store keeps only the token's hash.
"""

from __future__ import annotations

import hmac
import json
import secrets
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from ..exceptions import AlreadyClaimed, ConflictError, InvalidInput, NotAuthorized, NotFound
from ..kinds import TASK_CLAIMED, TASK_COMPLETED, TASK_CREATED, TASK_LAPSED, TASK_RELEASED
from ..times import when
from . import coord
from .base import Draft, dumps, new_id, token_hash
from .coord import BoardTx, Coordination

TaskState = Literal["open", "claimed", "done"]
DEFAULT_TASK_LEASE_SECONDS = 300.0
TITLE_MAX = 1000
RESULT_MAX = 64 * 1024

COLS = (
    "id, title, state, version, owner, lease_expires_at, lease_seconds, created_by, "
    "created_at, updated_at, result, token_hash"
)


@dataclass(frozen=True, slots=True)
class Task:
    """A task as stored. `depends_on` is sorted; `owner` is who holds it (claimed) or who
    completed it (done); `result` is the JSON value its owner reported."""

    id: str
    title: str
    state: TaskState
    version: int
    depends_on: tuple[str, ...] = ()
    owner: str | None = None
    lease_expires_at: float | None = None
    created_by: str | None = None
    created_at: float = 0.0
    updated_at: float = 0.0
    result: Any = None

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "title": self.title,
            "state": self.state,
            "version": self.version,
            "depends_on": list(self.depends_on),
            "owner": self.owner,
            "lease_expires_at": self.lease_expires_at,
            "created_by": self.created_by,
            "created_at": self.created_at,
            "updated_at": self.updated_at,
            "result": self.result,
        }


@dataclass(frozen=True, slots=True)
class TaskClaim:
    """A won claim: the task (now at its new version) and the owner's token."""

    task: Task
    token: str = field(repr=False)  # the proof of ownership: never in a log line


@dataclass(frozen=True, slots=True)
class _Stored:
    task: Task
    lease_seconds: float | None
    token_hash: str | None


def _row(cols: Sequence[Any], deps: tuple[str, ...]) -> _Stored:
    tid, title, state, version, owner, expires, secs, by, created, updated, result, th = cols
    return _Stored(
        Task(
            id=tid,
            title=title,
            state=state,
            version=int(version),
            depends_on=deps,
            owner=owner,
            lease_expires_at=expires,
            created_by=by,
            created_at=created,
            updated_at=updated,
            result=None if result is None else json.loads(result),
        ),
        secs,
        th,
    )


def _deps(btx: BoardTx, ids: Sequence[str]) -> dict[str, tuple[str, ...]]:
    found: dict[str, list[str]] = {i: [] for i in ids}
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        marks = ", ".join("?" for _ in chunk)
        for tid, dep in btx.q(
            f"SELECT task_id, depends_on FROM signoff_task_deps WHERE task_id IN ({marks}) "
            "ORDER BY task_id, depends_on",
            chunk,
        ).fetchall():
            found[tid].append(dep)
    return {k: tuple(v) for k, v in found.items()}


def _get(btx: BoardTx, tid: str, *, lock: bool) -> _Stored:
    sql = f"SELECT {COLS} FROM signoff_tasks WHERE id = ?"
    cols = btx.q(btx.lock(sql) if lock else sql, (tid,)).fetchone()
    if cols is None:
        raise NotFound(f"no task {tid!r}")
    return _row(cols, _deps(btx, [tid])[tid])


def _live(stored: _Stored, now: float) -> bool:
    expires = stored.task.lease_expires_at
    return expires is not None and now < expires


def _held(task: Task) -> str:
    return f"{task.owner} (lease until {when(task.lease_expires_at)})"


def _stale(task: Task, version: int) -> ConflictError:
    return ConflictError(
        f"task {task.id} is at version {task.version}, not {version}: it changed since you "
        f"read it (it is {task.state}); read it again"
    )


class TasksAPI:
    """The task half of `Board`."""

    _co: Coordination

    def add_task(
        self,
        title: str,
        *,
        id: str | None = None,
        depends_on: Sequence[str] = (),
        agent: str | None = None,
        now: float | None = None,
    ) -> Task:
        """A new open task (version 1). Its dependencies must exist already, so the
        graph can never hold a cycle."""
        if not isinstance(title, str) or not title.strip() or len(title) > TITLE_MAX:
            raise InvalidInput(f"a task's title must be 1 to {TITLE_MAX} characters of text")
        if not title.isprintable():
            raise InvalidInput(f"task title {title!r} holds a control character (a newline?)")
        tid = coord.task_id(id) if id is not None else f"task_{new_id()[:12]}"
        if isinstance(depends_on, str):
            raise InvalidInput("depends_on must be a list of task ids, not one string")
        deps = [coord.task_id(d, "dependency") for d in depends_on]
        if len(set(deps)) != len(deps) or tid in deps:
            raise InvalidInput(f"task {tid}: dependencies repeat or name the task itself: {deps}")
        who = None if agent is None else coord.name(agent, "agent")
        ts = coord.now_or(now)
        data = {"task": tid, "title": title, "depends_on": sorted(deps)}
        entries = self._co.entries([Draft(TASK_CREATED, None, None, who, data)], ts)
        taken = ConflictError(f"task {tid!r} already exists")
        try:
            with self._co.write() as btx:
                if btx.q("SELECT 1 FROM signoff_tasks WHERE id = ?", (tid,)).fetchone():
                    raise taken
                for dep in deps:
                    if btx.q("SELECT 1 FROM signoff_tasks WHERE id = ?", (dep,)).fetchone() is None:
                        raise NotFound(f"task {tid}: it depends on {dep!r}, which does not exist")
                btx.q(
                    f"INSERT INTO signoff_tasks ({COLS}) VALUES (?, ?, 'open', 1, NULL, NULL, "
                    "NULL, ?, ?, ?, NULL, NULL)",
                    (tid, title, who, ts, ts),
                )
                for dep in deps:
                    btx.q(
                        "INSERT INTO signoff_task_deps (task_id, depends_on) VALUES (?, ?)",
                        (tid, dep),
                    )
                self._co.append(btx, entries, ts)
        except self._co.store._duplicate:  # another process added it since the check
            raise taken from None
        self._co.anchored()
        return Task(tid, title, "open", 1, tuple(sorted(deps)), None, None, who, ts, ts)

    def get_task(self, task_id: str) -> Task:
        with self._co.read() as btx:
            return _get(btx, task_id, lock=False).task

    def list_tasks(self, state: TaskState | None = None, limit: int = 1000) -> list[Task]:
        """Tasks in the order they were added, optionally of one state."""
        if state not in (None, "open", "claimed", "done"):
            raise InvalidInput(f"no task state {state!r} (open, claimed or done)")
        coord.count(limit, "limit", least=1)
        where = "" if state is None else "WHERE state = ? "
        with self._co.read() as btx:
            rows = btx.q(
                f"SELECT {COLS} FROM signoff_tasks {where}ORDER BY ord LIMIT ?",
                (*([state] if state else []), limit),
            ).fetchall()
            deps = _deps(btx, [r[0] for r in rows])
        return [_row(r, deps[r[0]]).task for r in rows]

    def claim_task(
        self,
        task_id: str,
        *,
        agent: str,
        version: int,
        lease_seconds: float = DEFAULT_TASK_LEASE_SECONDS,
        now: float | None = None,
    ) -> TaskClaim:
        """Take an open task (or one whose owner's lease lapsed) at the version you read."""
        who = coord.name(agent, "agent")
        coord.count(version, "version", least=1)
        secs = coord.seconds(lease_seconds, "lease_seconds")
        ts = coord.now_or(now)
        token = secrets.token_urlsafe(24)
        with self._co.write() as btx:
            stored = _get(btx, task_id, lock=True)
            task = stored.task
            drafts: list[Draft] = []
            if task.state == "claimed":
                if _live(stored, ts):
                    raise AlreadyClaimed(f"task {task.id} is already claimed by {_held(task)}")
                drafts.append(self._lapse_draft(task))
            if task.state == "done":
                raise ConflictError(f"task {task.id} is done (by {task.owner}): nothing to claim")
            if task.version != version:
                raise _stale(task, version)
            self._check_ready(btx, task)
            new_version = task.version + 1
            cur = btx.q(
                "UPDATE signoff_tasks SET state = 'claimed', owner = ?, token_hash = ?, "
                "lease_expires_at = ?, lease_seconds = ?, version = ?, updated_at = ? "
                "WHERE id = ? AND version = ?",
                (who, token_hash(token), ts + secs, secs, new_version, ts, task.id, task.version),
            )
            if cur.rowcount != 1:  # the row is locked (or the file is): cannot happen
                raise ConflictError(f"task {task.id} changed under a lock")
            lapsed = task.owner if drafts else None
            data = {
                "task": task.id,
                "version": new_version,
                "lease_expires_at": ts + secs,
                "lapsed": lapsed,
            }
            drafts.append(Draft(TASK_CLAIMED, None, None, who, data))
            self._co.append(btx, self._co.entries(drafts, ts), ts)
        self._co.anchored()
        claimed = Task(
            task.id,
            task.title,
            "claimed",
            new_version,
            task.depends_on,
            who,
            ts + secs,
            task.created_by,
            task.created_at,
            ts,
        )
        return TaskClaim(claimed, token)

    @staticmethod
    def _lapse_draft(task: Task) -> Draft:
        data = {
            "task": task.id,
            "owner": task.owner,
            "lease_expires_at": task.lease_expires_at,
            "version": task.version,
        }
        return Draft(TASK_LAPSED, None, None, None, data)

    @staticmethod
    def _check_ready(btx: BoardTx, task: Task) -> None:
        if not task.depends_on:
            return
        marks = ", ".join("?" for _ in task.depends_on)
        rows = btx.q(
            f"SELECT id, state, owner FROM signoff_tasks WHERE id IN ({marks}) ORDER BY id",
            task.depends_on,
        ).fetchall()
        waiting = [
            f"{tid} ({state}{f' by {owner}' if owner and state == 'claimed' else ''})"
            for tid, state, owner in rows
            if state != "done"
        ]
        if waiting:
            raise ConflictError(
                f"task {task.id} cannot be claimed before its dependencies are done; "
                f"waiting on {', '.join(waiting)}"
            )

    def complete_task(
        self,
        task_id: str,
        *,
        agent: str,
        token: str,
        result: Any = None,
        version: int | None = None,
        now: float | None = None,
    ) -> Task:
        """The owner reports the task done, with an optional JSON result."""
        text = None if result is None else dumps(result, f"task {task_id} result")
        if text is not None and len(text.encode()) > RESULT_MAX:
            raise InvalidInput(f"task {task_id}: the result is over {RESULT_MAX} bytes of JSON")
        return self._owner_change(task_id, agent, token, version, now, done=True, result=text)

    def release_task(
        self,
        task_id: str,
        *,
        agent: str,
        token: str,
        version: int | None = None,
        now: float | None = None,
    ) -> Task:
        """The owner gives the task back: open again, claimable by anyone."""
        return self._owner_change(task_id, agent, token, version, now, done=False, result=None)

    def renew_task(
        self,
        task_id: str,
        *,
        agent: str,
        token: str,
        lease_seconds: float | None = None,
        now: float | None = None,
    ) -> Task:
        """The owner is still at work: its lease runs `lease_seconds` (default: as claimed)
        from now. Renewal is a heartbeat, so it writes no audit entry."""
        who = coord.name(agent, "agent")
        ts = coord.now_or(now)
        with self._co.write() as btx:
            stored = self._owned(btx, task_id, who, token, None, ts)
            if lease_seconds is None:
                lease_seconds = stored.lease_seconds or DEFAULT_TASK_LEASE_SECONDS
            secs = coord.seconds(lease_seconds, "lease_seconds")
            task = stored.task
            btx.q(
                "UPDATE signoff_tasks SET lease_expires_at = ?, lease_seconds = ?, version = ?, "
                "updated_at = ? WHERE id = ? AND version = ?",
                (ts + secs, secs, task.version + 1, ts, task.id, task.version),
            )
        return replace(task, version=task.version + 1, lease_expires_at=ts + secs, updated_at=ts)

    def _owned(
        self,
        btx: BoardTx,
        task_id: str,
        who: str,
        token: str,
        version: int | None,
        now: float,
    ) -> _Stored:
        """The locked row, if `who` holds a live claim on it with `token`; else why not."""
        stored = _get(btx, task_id, lock=True)
        task = stored.task
        if task.state != "claimed":
            raise ConflictError(f"task {task.id} is {task.state}, not claimed by {who}")
        if task.owner != who:
            raise NotAuthorized(f"task {task.id} is claimed by {_held(task)}, not {who}")
        if not isinstance(token, str) or stored.token_hash is None:
            raise NotAuthorized(f"task {task.id}: no claim token given")
        if not hmac.compare_digest(token_hash(token), stored.token_hash):
            raise NotAuthorized(
                f"task {task.id}: the token is not {who}'s claim token (claim prints it once)"
            )
        if not _live(stored, now):
            raise ConflictError(
                f"task {task.id}: {who}'s lease lapsed at {when(task.lease_expires_at)}; "
                "claim it again"
            )
        if version is not None and version != task.version:
            raise _stale(task, version)
        return stored

    def _owner_change(
        self,
        task_id: str,
        agent: str,
        token: str,
        version: int | None,
        now: float | None,
        *,
        done: bool,
        result: str | None,
    ) -> Task:
        who = coord.name(agent, "agent")
        if version is not None:
            coord.count(version, "version", least=1)
        ts = coord.now_or(now)
        with self._co.write() as btx:
            task = self._owned(btx, task_id, who, token, version, ts).task
            new_version = task.version + 1
            btx.q(
                "UPDATE signoff_tasks SET state = ?, owner = ?, token_hash = NULL, "
                "lease_expires_at = NULL, lease_seconds = NULL, version = ?, updated_at = ?, "
                "result = ? WHERE id = ? AND version = ?",
                (
                    "done" if done else "open",
                    who if done else None,
                    new_version,
                    ts,
                    result,
                    task.id,
                    task.version,
                ),
            )
            data: dict[str, Any] = {"task": task.id, "version": new_version}
            if done:
                data["result"] = None if result is None else json.loads(result)
            kind = TASK_COMPLETED if done else TASK_RELEASED
            self._co.append(btx, self._co.entries([Draft(kind, None, None, who, data)], ts), ts)
        self._co.anchored()
        return replace(
            task,
            state="done" if done else "open",
            version=new_version,
            owner=who if done else None,
            lease_expires_at=None,
            updated_at=ts,
            result=None if result is None else json.loads(result),
        )

    def sweep_tasks(self, now: float | None = None) -> list[str]:
        """Claimed tasks whose lease lapsed -> open again (`task.lapsed`); their ids."""
        ts = coord.now_or(now)
        due_sql = "SELECT id FROM signoff_tasks WHERE state = 'claimed' AND lease_expires_at <= ?"
        with self._co.read() as btx:  # nothing due, the usual case: no write lock at all
            if not btx.q(due_sql + " LIMIT 1", (ts,)).fetchone():
                return []
        done: list[str] = []
        with self._co.write() as btx:
            # every due row is locked first, the chain head (by the append) last: the order
            # a claim takes them in, so the two never wait on each other in a circle
            lock = " ORDER BY id FOR UPDATE SKIP LOCKED" if btx.postgres else " ORDER BY id"
            ids = [r[0] for r in btx.q(due_sql + lock, (ts,)).fetchall()]
            drafts = []
            for tid in ids:
                task = _get(btx, tid, lock=False).task
                btx.q(
                    "UPDATE signoff_tasks SET state = 'open', owner = NULL, token_hash = NULL, "
                    "lease_expires_at = NULL, lease_seconds = NULL, version = version + 1, "
                    "updated_at = ? WHERE id = ?",
                    (ts, tid),
                )
                drafts.append(self._lapse_draft(task))
                done.append(tid)
            self._co.append(btx, self._co.entries(drafts, ts), ts)
        self._co.anchored()
        return done
