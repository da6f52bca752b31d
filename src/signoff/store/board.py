"""A task board and mailboxes for a team of agents, in the approval store itself.

    board = Board(open_store("team.db"))     # or open_board("postgresql://…")
    task = board.add_task("write the tests", id="tests", depends_on=["design"])
    claim = board.claim_task("design", agent="ann", version=1)   # claim.token: shown once
    board.complete_task("design", agent="ann", token=claim.token, result={"pr": 12})
    board.send("ann", "design is done", to="bob")                 # to=None: everyone
    batch = board.read("bob"); board.ack("bob", batch.through)

The tasks (`store.tasks`) and the mail (`store.mail`) share the store's transactions and
its audit chain: every create, claim, completion, release and lapse, every message sent
and every acknowledgement is an entry of `signoff audit`. SQLite and PostgreSQL only.
"""

from __future__ import annotations

from pathlib import Path

from . import Store, open_store
from .coord import Coordination
from .mail import Mail, MailAPI, MailBatch
from .tasks import DEFAULT_TASK_LEASE_SECONDS, Task, TaskClaim, TasksAPI, TaskState

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


class Board(TasksAPI, MailAPI):
    """Tasks and mail over one SQLite or PostgreSQL store (closed with the board only
    when the board opened it: see `open_board`)."""

    def __init__(self, store: Store, *, owns_store: bool = False) -> None:
        self._co = Coordination(store)
        self.store = store
        self._owns = owns_store

    def close(self) -> None:
        if self._owns:
            self.store.close()

    def __enter__(self) -> Board:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_board(url: str | Path | None = None, *, workspace: str | Path | None = None) -> Board:
    """The board in the store `url` names (as `open_store`), closed with the board."""
    store = open_store(url, workspace=workspace)
    try:
        return Board(store, owns_store=True)
    except BaseException:
        store.close()
        raise
