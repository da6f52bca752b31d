"""Every kind of entry on the audit record, in one place (the strings are a wire and disk
format: stored in every store, sent to webhooks, read by `signoff audit`). Modules compare
and write these constants, never retyped strings; `EventKind` lets mypy check a kind."""

from __future__ import annotations

from .hints import literal_type

TYPE_CHECKING = False  # not typing's: see signoff/__init__.py

if TYPE_CHECKING:
    from typing import Final, Literal

    EventKind = Literal[
        "verdict",
        "review",
        "review.reverted",
        "request.created",
        "request.decided",
        "request.claimed",
        "request.finished",
        "request.expired",
        "request.in_doubt",
        "request.resolved",
        "request.integrity_failed",
        "run.created",
        "run.claimed",
        "run.not_resumed",
        "grant.added",
        "grant.revoked",
        "notify.delivered",
        "notify.failed",
        "mcp.tool_pinned",
        "mcp.tool_changed",
        "session.decided",
        "session.grant",
        "session.outcome",
        "session.unmatched",
        "reviewer.verdict",
        "task.created",
        "task.claimed",
        "task.completed",
        "task.released",
        "task.lapsed",
        "mail.sent",
        "mail.acked",
        "writer.ended",
        "keys.reanchored",
        "sandbox.blocked",
    ]

VERDICT: Final = "verdict"  # a call was judged (in process, or before a request)
REVIEW: Final = "review"  # a notify-tier change ran and is kept for review after
REVIEW_REVERTED: Final = "review.reverted"
REQUEST_CREATED: Final = "request.created"
REQUEST_DECIDED: Final = "request.decided"
REQUEST_CLAIMED: Final = "request.claimed"
REQUEST_FINISHED: Final = "request.finished"
REQUEST_EXPIRED: Final = "request.expired"
REQUEST_IN_DOUBT: Final = "request.in_doubt"
REQUEST_RESOLVED: Final = "request.resolved"
REQUEST_INTEGRITY_FAILED: Final = "request.integrity_failed"
RUN_CREATED: Final = "run.created"
RUN_CLAIMED: Final = "run.claimed"
RUN_NOT_RESUMED: Final = "run.not_resumed"  # a worker could not rebuild a framework's agent
GRANT_ADDED: Final = "grant.added"
GRANT_REVOKED: Final = "grant.revoked"
NOTIFY_DELIVERED: Final = "notify.delivered"
NOTIFY_FAILED: Final = "notify.failed"
MCP_TOOL_PINNED: Final = "mcp.tool_pinned"  # an MCP tool's words and shape, trusted
MCP_TOOL_CHANGED: Final = "mcp.tool_changed"  # ... differ from what was pinned: asks
SESSION_DECIDED: Final = "session.decided"  # imported from an in-process session log
SESSION_GRANT: Final = "session.grant"
SESSION_OUTCOME: Final = "session.outcome"
# an outcome posted (by the HTTP hook's credential) for no call judged here: never an outcome
SESSION_UNMATCHED: Final = "session.unmatched"
REVIEWER_VERDICT: Final = "reviewer.verdict"  # the reviewer model settled or escalated an ask
TASK_CREATED: Final = "task.created"  # the task board (store.board)
TASK_CLAIMED: Final = "task.claimed"
TASK_COMPLETED: Final = "task.completed"
TASK_RELEASED: Final = "task.released"
TASK_LAPSED: Final = "task.lapsed"  # its owner's lease ran out: claimable again
MAIL_SENT: Final = "mail.sent"
MAIL_ACKED: Final = "mail.acked"
WRITER_ENDED: Final = "writer.ended"  # a writer of outcomes after the calls stopped
KEYS_REANCHORED: Final = "keys.reanchored"  # a person accepted a break on purpose (keys reanchor)
# a contained command tried to leave (network, a write outside, a secret): it failed inside
SANDBOX_BLOCKED: Final = "sandbox.blocked"

EVENT_KINDS: Final[tuple[EventKind, ...]] = (
    VERDICT,
    REVIEW,
    REVIEW_REVERTED,
    REQUEST_CREATED,
    REQUEST_DECIDED,
    REQUEST_CLAIMED,
    REQUEST_FINISHED,
    REQUEST_EXPIRED,
    REQUEST_IN_DOUBT,
    REQUEST_RESOLVED,
    REQUEST_INTEGRITY_FAILED,
    RUN_CREATED,
    RUN_CLAIMED,
    RUN_NOT_RESUMED,
    GRANT_ADDED,
    GRANT_REVOKED,
    NOTIFY_DELIVERED,
    NOTIFY_FAILED,
    MCP_TOOL_PINNED,
    MCP_TOOL_CHANGED,
    SESSION_DECIDED,
    SESSION_GRANT,
    SESSION_OUTCOME,
    SESSION_UNMATCHED,
    REVIEWER_VERDICT,
    TASK_CREATED,
    TASK_CLAIMED,
    TASK_COMPLETED,
    TASK_RELEASED,
    TASK_LAPSED,
    MAIL_SENT,
    MAIL_ACKED,
    WRITER_ENDED,
    KEYS_REANCHORED,
    SANDBOX_BLOCKED,
)
_LITERALS: dict[str, tuple[str, ...]] = {"EventKind": EVENT_KINDS}

if not TYPE_CHECKING:

    def __getattr__(name):
        return literal_type(__name__, _LITERALS, name)
