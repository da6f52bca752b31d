"""The `Store` protocol: what every backend offers (`signoff.store` exports it, made on
first use: defining a runtime-checkable Protocol imports typing, which a hook process that
only records a verdict does without)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from ..models import Decision, Grant, Request, Verdict
from .base import DEFAULT_LEASE_SECONDS, Claim, Draft, Event
from .runstore import DEFAULT_RUN_LEASE_SECONDS

if TYPE_CHECKING:
    from ..run_state import Run
    from .base import Flush, InDoubtOutcome


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
        token: str | None = None,
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
    def renew_claim(
        self,
        request_id: str,
        token: str,
        *,
        lease_seconds: float = DEFAULT_LEASE_SECONDS,
        now: float | None = None,
    ) -> bool: ...
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
        flush: Flush = "now",
    ) -> int: ...
    def record_many(
        self, drafts: Sequence[Draft], *, now: float | None = None, flush: Flush = "now"
    ) -> list[int]: ...
    def flush(self, timeout: float | None = None) -> bool: ...
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
    def renew_run(
        self,
        run_id: str,
        worker: str,
        *,
        lease_seconds: float = DEFAULT_RUN_LEASE_SECONDS,
        now: float | None = None,
    ) -> bool: ...
    def release_run(self, run_id: str, worker: str) -> None: ...


__all__ = ["Store"]
