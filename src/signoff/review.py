"""Review after action: calls that ran under `notify`, kept with what they replaced.

The run driver records a `review` event (the call and its snapshot) for each file change
that ran without asking; `revert` puts the previous content back, refusing if the file
changed since, and records `review.reverted`. The CLI and the web inbox both use these.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from .exceptions import InvalidInput, NotFound
from .kinds import REVIEW, REVIEW_REVERTED
from .models import ToolCall
from .store import Event, Store
from .workspace.snapshots import Snapshot


@dataclass(frozen=True, slots=True)
class ReviewItem:
    event: Event
    reverted: bool

    @property
    def id(self) -> str:
        return f"rev_{self.event.seq}"

    @property
    def call(self) -> ToolCall:
        return ToolCall.from_json(self.event.data["call"])


def parse_review_id(text: str) -> int:
    number = text.removeprefix("rev_")
    if not number.isdigit():
        raise InvalidInput(f"{text!r} is not a review item id (like rev_12)")
    return int(number)


def record_review(store: Store, call: ToolCall, snapshot: Snapshot, *, run_id: str) -> int:
    """Put a change that ran without asking on the record for review after (and revert)."""
    return store.record(
        REVIEW, {"call": call.to_json(), "snapshot": snapshot.to_json()}, run_id=run_id
    )


def review_items(store: Store, *, window: int = 5000) -> list[ReviewItem]:
    """Review items among the last `window` events, newest first."""
    events: list[Event] = []
    reverted: set[int] = set()
    seq = max(0, store.last_seq() - window)
    while batch := store.events_after(seq, limit=500):
        for event in batch:
            if event.kind == REVIEW:
                events.append(event)
            elif event.kind == REVIEW_REVERTED and isinstance(event.data.get("seq"), int):
                reverted.add(int(event.data["seq"]))
        seq = batch[-1].seq
    return [ReviewItem(e, e.seq in reverted) for e in reversed(events)]


def find_review(store: Store, seq: int) -> Event:
    batch = store.events_after(seq - 1, limit=1) if seq > 0 else []
    if not batch or batch[0].seq != seq or batch[0].kind != "review":
        raise NotFound(f"no review item rev_{seq}")
    return batch[0]


def revert(
    store: Store,
    seq: int,
    *,
    actor: str,
    workspace: str | os.PathLike[str] | None = None,
) -> str:
    """Restore what the reviewed call replaced; RevertConflict if the file changed since."""
    from .workspace import Workspace

    event = find_review(store, seq)
    if any(item.reverted for item in review_items(store) if item.event.seq == seq):
        raise InvalidInput(f"review item rev_{seq} was already reverted")
    if event.data.get("not_kept"):  # a contained change set too big to keep
        raise InvalidInput(
            f"review item rev_{seq} cannot be reverted: {event.data['not_kept']}, so signoff "
            "did not keep them"
        )
    snapshot = Snapshot.from_json(event.data.get("snapshot") or {})
    root = workspace if workspace is not None else snapshot.root
    message = Workspace(root).revert(snapshot)
    store.record(
        REVIEW_REVERTED, {"seq": seq, "message": message}, run_id=event.run_id, actor=actor
    )
    return message


__all__ = ["ReviewItem", "find_review", "parse_review_id", "revert", "review_items"]
