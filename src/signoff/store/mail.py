"""Mailboxes: messages to one agent or to everyone, read through acknowledged cursors.

Mail is append-only and numbered (`seq`) in commit order. An agent's mailbox is every
message addressed to it, plus every message to all that another agent sent. `read` returns
the messages after the agent's acknowledged position (its cursor) and changes nothing, so
a batch comes back, whole, until `ack(through=...)` moves the cursor past it: delivery is
at least once, and a crash between reading and acknowledging loses nothing. A read names
its agent and returns nothing addressed to anyone else; the cursor only moves forward.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..exceptions import InvalidInput
from ..kinds import MAIL_ACKED, MAIL_SENT
from ..models import sha256_hex
from . import coord
from .base import Draft
from .coord import BoardTx, Coordination

BODY_MAX = 64 * 1024
MAIL_LOCK = 0x5190B0  # pg_advisory_xact_lock key: senders take turns, so seqs commit in order


@dataclass(frozen=True, slots=True)
class Mail:
    """One message; `to` is None for a message to every agent."""

    seq: int
    sender: str
    to: str | None
    body: str
    sent_at: float

    def to_json(self) -> dict[str, Any]:
        return {
            "seq": self.seq,
            "from": self.sender,
            "to": self.to,
            "body": self.body,
            "sent_at": self.sent_at,
        }


@dataclass(frozen=True, slots=True)
class MailBatch:
    """What `read` returned: messages after `after`; acknowledge with `through`."""

    agent: str
    after: int
    through: int
    messages: tuple[Mail, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "agent": self.agent,
            "after": self.after,
            "through": self.through,
            "messages": [m.to_json() for m in self.messages],
        }


def _position(btx: BoardTx, agent: str) -> int:
    row = btx.q("SELECT position FROM signoff_mailboxes WHERE agent = ?", (agent,)).fetchone()
    return 0 if row is None else int(row[0])


def _mail(row: Sequence[Any]) -> Mail:
    seq, sent_at, sender, recipient, body = row
    return Mail(int(seq), sender, recipient, body, sent_at)


class MailAPI:
    """The mail half of `Board`."""

    _co: Coordination

    def send(
        self, sender: str, body: str, *, to: str | None = None, now: float | None = None
    ) -> Mail:
        """Post `body` to one agent (`to`) or, with `to=None`, to every other agent."""
        who = coord.name(sender, "sender")
        recipient = None if to is None else coord.name(to, "recipient")
        if not isinstance(body, str):
            raise InvalidInput(f"a message body is text, not {type(body).__name__}")
        try:
            size = len(body.encode("utf-8"))
        except UnicodeEncodeError as exc:
            raise InvalidInput(f"the message is not valid text: {exc.reason}") from None
        if size > BODY_MAX:
            raise InvalidInput(f"the message is {size} bytes long (at most {BODY_MAX})")
        ts = coord.now_or(now)
        with self._co.write() as btx:
            if btx.postgres:
                btx.q("SELECT pg_advisory_xact_lock(?)", (MAIL_LOCK,))
            seq = int(
                btx.q(
                    "INSERT INTO signoff_mail (sent_at, sender, recipient, body) "
                    "VALUES (?, ?, ?, ?) RETURNING seq",
                    (ts, who, recipient, body),
                ).fetchone()[0]
            )
            data = {"seq": seq, "to": recipient, "chars": len(body), "digest": sha256_hex(body)}
            entries = self._co.entries([Draft(MAIL_SENT, None, None, who, data)], ts)
            self._co.append(btx, entries, ts)
        self._co.anchored()
        return Mail(seq, who, recipient, body, ts)

    def read(self, agent: str, *, limit: int = 100) -> MailBatch:
        """The next unacknowledged messages for `agent`, oldest first (at most `limit`).
        Reading again before `ack` returns the same messages."""
        who = coord.name(agent, "agent")
        coord.count(limit, "limit", least=1)
        with self._co.read() as btx:
            after = _position(btx, who)
            rows = btx.q(
                "SELECT seq, sent_at, sender, recipient, body FROM signoff_mail WHERE seq > ? "
                "AND (recipient = ? OR (recipient IS NULL AND sender <> ?)) ORDER BY seq LIMIT ?",
                (after, who, who, limit),
            ).fetchall()
        messages = tuple(_mail(r) for r in rows)
        return MailBatch(who, after, messages[-1].seq if messages else after, messages)

    def ack(self, agent: str, through: int, *, now: float | None = None) -> int:
        """Move `agent`'s cursor to `through` (a batch's `through`); never backwards.
        Returns the cursor's position."""
        who = coord.name(agent, "agent")
        coord.count(through, "through", least=0)
        ts = coord.now_or(now)
        with self._co.write() as btx:
            (last,) = btx.q("SELECT COALESCE(MAX(seq), 0) FROM signoff_mail").fetchone()
            if through > int(last):
                raise InvalidInput(f"ack: message {through} does not exist (the last is {last})")
            before = _position(btx, who)
            if through <= before:
                return before
            moved = btx.q(
                "INSERT INTO signoff_mailboxes (agent, position) VALUES (?, ?) "
                "ON CONFLICT (agent) DO UPDATE SET position = excluded.position "
                "WHERE signoff_mailboxes.position < excluded.position",
                (who, through),
            ).rowcount
            if moved != 1:  # another reader of this mailbox acknowledged further meanwhile
                return _position(btx, who)
            data = {"from": before, "through": through}
            entries = self._co.entries([Draft(MAIL_ACKED, None, None, who, data)], ts)
            self._co.append(btx, entries, ts)
        self._co.anchored()
        return through
