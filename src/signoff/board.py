"""The task board and mailboxes for teams of agents: see `signoff.store.board` and
docs/board.md."""

from __future__ import annotations

from .store.board import (
    DEFAULT_TASK_LEASE_SECONDS,
    Board,
    Mail,
    MailBatch,
    Task,
    TaskClaim,
    TaskState,
    open_board,
)

__all__ = [
    "DEFAULT_TASK_LEASE_SECONDS",
    "Board",
    "Mail",
    "MailBatch",
    "Task",
    "TaskClaim",
    "TaskState",
    "open_board",
]
