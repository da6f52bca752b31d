"""Durable approvals: one `Store` protocol, three backends, chosen by a URL.

    open_store("memory:")                        # tests and docs
    open_store("sqlite:///rel/signoff.db")       # sqlite:////abs/path; or a plain path
    open_store("postgresql://user@host/db")      # many processes, many machines
    open_store()                                 # $SIGNOFF_DB, else .signoff/signoff.db

Opening a store applies its pending schema migrations; a database written by a newer
signoff is refused. The lifecycle and its guarantees are described in `store.base`; durable
runs (a versioned document plus an append-only transcript, leased to one worker at a time)
in `store.runstore`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from ..exceptions import ConfigurationError
from ..models import Decision, Grant, Request, Verdict
from .base import DEFAULT_LEASE_SECONDS, Claim, Draft, Event, InDoubtOutcome
from .runstore import DEFAULT_RUN_LEASE_SECONDS

if TYPE_CHECKING:
    from ..run_state import Run

__all__ = ["Claim", "Draft", "Event", "InDoubtOutcome", "Store", "default_url", "open_store"]

DEFAULT_PATH = Path(".signoff") / "signoff.db"


@runtime_checkable
class Store(Protocol):
    """What every backend offers; see the contract tests for the exact behaviour."""

    def migrate(self) -> list[int]: ...
    def close(self, *, process_ends: bool = False) -> None: ...

    # requests and their lifecycle
    def create_request(
        self,
        request: Request,
        *,
        idempotent: bool = False,
        ttl_seconds: float | None = None,
        now: float | None = None,
    ) -> Request: ...
    def get_request(self, request_id: str) -> Request: ...
    def get_outcome(self, request_id: str) -> Mapping[str, Any] | None: ...
    def get_outcomes(self, request_ids: Sequence[str]) -> dict[str, Mapping[str, Any] | None]: ...
    def list_requests(
        self,
        state: str | None = None,
        run_id: str | None = None,
        tenant: str | None = None,
        limit: int = 100,
    ) -> list[Request]: ...
    def decide(
        self,
        request_id: str,
        decision: Decision,
        *,
        actor: str,
        actor_roles: Sequence[str] = (),
        now: float | None = None,
        new_verdict: Verdict | None = None,
        binding: str | None = None,
    ) -> Request: ...
    def claim(
        self,
        request_id: str,
        *,
        worker: str,
        lease_seconds: float = DEFAULT_LEASE_SECONDS,
        now: float | None = None,
    ) -> Claim: ...
    def finish(
        self,
        request_id: str,
        token: str,
        *,
        ok: bool,
        result_digest: str | None = None,
        result: Any = None,
        now: float | None = None,
    ) -> Request: ...
    def expire_stale(self, now: float | None = None) -> list[str]: ...
    def sweep_leases(self, now: float | None = None) -> list[str]: ...
    def resolve_in_doubt(
        self, request_id: str, outcome: InDoubtOutcome, *, actor: str, now: float | None = None
    ) -> Request: ...

    # grants
    def add_grant(
        self, grant: Grant, *, run_id: str | None = None, now: float | None = None
    ) -> Grant: ...
    def list_grants(self, scope: str | None = None, run_id: str | None = None) -> list[Grant]: ...
    def revoke_grant(
        self, grant_id: str, *, actor: str = "local", now: float | None = None
    ) -> Grant: ...

    # events feed = audit log
    def record(
        self,
        kind: str,
        data: Mapping[str, Any],
        *,
        run_id: str | None = None,
        request_id: str | None = None,
        actor: str | None = None,
        now: float | None = None,
    ) -> int: ...
    def record_many(self, drafts: Sequence[Draft], *, now: float | None = None) -> list[int]: ...
    def events_after(self, seq: int, limit: int = 100) -> list[Event]: ...
    def last_seq(self) -> int: ...
    def deliveries(self, request_id: str) -> list[Event]: ...
    def read_events(self, consumer: str, limit: int = 100) -> list[Event]: ...
    def ack(self, consumer: str, seq: int) -> None: ...
    def verify_chain(self) -> tuple[bool, int | None, str]: ...
    def wait_for_event(self, timeout: float, after_seq: int | None = None) -> bool: ...

    # durable runs (see store.runstore): a versioned document + append-only messages
    def create_run(
        self,
        run: Run,
        messages: Sequence[Mapping[str, Any]],
        *,
        worker: str | None = None,
        lease_seconds: float = DEFAULT_RUN_LEASE_SECONDS,
        now: float | None = None,
    ) -> Run: ...
    def get_run(self, run_id: str) -> Run: ...
    def child_runs(self, run_id: str) -> list[Run]: ...
    def list_runs(
        self, status: str | None = None, tenant: str | None = None, limit: int = 100
    ) -> list[Run]: ...
    def load_messages(self, run_id: str) -> list[dict[str, Any]]: ...
    def save_run(
        self,
        run: Run,
        new_messages: Sequence[Mapping[str, Any]],
        *,
        expected_version: int,
        events: Sequence[tuple[str, Mapping[str, Any]]] = (),
        worker: str | None = None,
        now: float | None = None,
        requests: Sequence[tuple[Request, bool, float | None]] = (),
    ) -> Run: ...
    def claim_run(
        self,
        worker: str,
        *,
        run_id: str | None = None,
        lease_seconds: float = DEFAULT_RUN_LEASE_SECONDS,
        now: float | None = None,
    ) -> Run | None: ...
    def release_run(self, run_id: str, worker: str) -> None: ...


def default_url(workspace: str | Path | None = None) -> str:
    """$SIGNOFF_DB, else `.signoff/signoff.db` under the workspace (default: cwd)."""
    env = os.environ.get("SIGNOFF_DB")
    if env:
        return env
    return str(Path(workspace or Path.cwd()) / DEFAULT_PATH)


def open_store(url: str | Path | None = None, *, workspace: str | Path | None = None) -> Store:
    """Open (and migrate) the store named by `url`; see the module docstring."""
    target = str(url) if url is not None else default_url(workspace)
    if target in ("memory:", "memory://", ":memory:"):
        from .memory import MemoryStore

        return MemoryStore()
    if target.startswith(("postgresql://", "postgres://")):
        from .postgres import PostgresStore

        return PostgresStore(target)
    if target.startswith("sqlite:"):
        # SQLAlchemy's convention: sqlite:///relative.db, sqlite:////absolute/path.db
        path = target[len("sqlite:///") :] if target.startswith("sqlite:///") else ""
        if not path:
            raise ConfigurationError(
                f"store URL {target!r} names no file (sqlite:///relative.db or "
                "sqlite:////absolute/path.db)"
            )
        from .sqlite import SQLiteStore

        return SQLiteStore(path)
    if "://" in target:
        raise ConfigurationError(
            f"unknown store URL {target!r}: use memory:, sqlite:///PATH, a file path, "
            "or postgresql://…"
        )
    from .sqlite import SQLiteStore

    return SQLiteStore(target)
