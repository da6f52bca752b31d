"""Leases kept while they are used, one contract on three backends (memory, SQLite,
PostgreSQL): a run's lease and an approved call's claim are renewed by their holder only,
a claim only before it lapsed; a claim tried again with the caller's token after a lost
answer is the same claim; a paused run whose call runs under a live claim is not ready."""

from __future__ import annotations

from dataclasses import replace

import pytest

from signoff.exceptions import AlreadyClaimed, InvalidInput
from signoff.models import Decision
from signoff.run_state import Run
from signoff.store import Store
from store_helpers import (  # the fixtures register themselves by name
    backend_fixture,  # noqa: F401
    make_request,
    store_fixture,  # noqa: F401
)

NOW = 1_800_000_000.0
TOKEN = "t" * 32


def approved(store: Store, run_id: str = "run-1") -> str:
    request = store.create_request(make_request(run_id=run_id), now=NOW)
    store.decide(request.id, Decision("approve"), actor="ann", now=NOW + 1)
    return request.id


def kinds(store: Store, request_id: str) -> list[str]:
    return [e.kind for e in store.events_after(0, 1000) if e.request_id == request_id]


def test_a_claim_is_renewed_by_its_token_before_it_lapses(store: Store) -> None:
    rid = approved(store)
    claim = store.claim(rid, worker="w1", lease_seconds=30, now=NOW + 2)
    assert store.renew_claim(rid, claim.token, lease_seconds=30, now=NOW + 31)
    assert store.sweep_leases(now=NOW + 59) == []  # renewed to NOW + 61
    assert not store.renew_claim(rid, "x" * 32, lease_seconds=30, now=NOW + 40)  # not its token
    assert not store.renew_claim(rid, claim.token, lease_seconds=30, now=NOW + 61)  # lapsed
    assert store.sweep_leases(now=NOW + 61) == [rid]
    assert not store.renew_claim(rid, claim.token, lease_seconds=30, now=NOW + 62)  # in doubt
    assert store.get_request(rid).state == "in_doubt"
    # a renewal is no event: the claim and the doubt are
    assert kinds(store, rid).count("request.claimed") == 1
    store.finish(rid, claim.token, ok=True, result="late", now=NOW + 63)  # the truth still
    assert not store.renew_claim(rid, claim.token, lease_seconds=30, now=NOW + 64)


def test_a_claim_tried_again_with_its_token_is_the_same_claim(store: Store) -> None:
    rid = approved(store)
    first = store.claim(rid, worker="w1", lease_seconds=30, now=NOW + 2, token=TOKEN)
    assert first.token == TOKEN
    again = store.claim(rid, worker="w1", lease_seconds=30, now=NOW + 10, token=TOKEN)
    assert again.token == TOKEN and again.request.call == first.request.call
    assert again.lease_expires_at == NOW + 40  # renewed from the second try
    assert kinds(store, rid).count("request.claimed") == 1
    with pytest.raises(AlreadyClaimed, match="already claimed by w1"):
        store.claim(rid, worker="w2", now=NOW + 11)  # without the token: another claimer
    with pytest.raises(AlreadyClaimed, match="already claimed by w1"):
        store.claim(rid, worker="w2", now=NOW + 11, token="u" * 32)
    with pytest.raises(AlreadyClaimed, match="in doubt"):  # lapsed: no token brings it back
        store.claim(rid, worker="w1", lease_seconds=30, now=NOW + 41, token=TOKEN)
    with pytest.raises(InvalidInput, match="16 characters"):
        store.claim(approved(store, "run-2"), worker="w1", token="short")


def test_a_run_lease_is_renewed_by_its_holder_only(store: Store) -> None:
    run = store.create_run(Run(id="run-a"), [], worker="w1", lease_seconds=30, now=NOW)
    assert store.renew_run("run-a", "w1", lease_seconds=30, now=NOW + 25)
    assert store.claim_run("w2", now=NOW + 50) is None  # renewed to NOW + 55
    assert not store.renew_run("run-a", "w2", lease_seconds=30, now=NOW + 51)
    # lapsed, but nobody took it: still w1's (as claim_run would give it back)
    assert store.renew_run("run-a", "w1", lease_seconds=30, now=NOW + 60)
    assert store.claim_run("w2", now=NOW + 91) == run  # lapsed at NOW + 90: w2 takes it
    assert not store.renew_run("run-a", "w1", lease_seconds=30, now=NOW + 92)
    store.release_run("run-a", "w2")
    assert not store.renew_run("run-a", "w2", lease_seconds=30, now=NOW + 93)  # let go
    assert not store.renew_run("nope", "w1", now=NOW + 94)


def test_a_paused_run_whose_call_runs_is_not_ready(store: Store) -> None:
    run = store.create_run(Run(id="run-1"), [], now=NOW)
    store.save_run(replace(run, status="paused"), [], expected_version=1, now=NOW)
    rid = approved(store)
    claim = store.claim(rid, worker="w1", lease_seconds=30, now=NOW + 2)
    # the call runs (its driver let the run go): nobody takes the run meanwhile, over and over
    assert store.claim_run("w2", now=NOW + 10) is None
    assert store.renew_claim(rid, claim.token, lease_seconds=30, now=NOW + 20)
    assert store.claim_run("w2", now=NOW + 45) is None
    # its claim lapsed: the run is ready, and its driver will find the call in doubt
    got = store.claim_run("w2", now=NOW + 51)
    assert got is not None and got.id == "run-1"
