"""Races between real processes (multiprocessing, spawn) on SQLite and PostgreSQL.

16 processes decide the same request: exactly one decision stands, the other 15 get
AlreadyDecided naming the winner. Then 8 of them claim the same approved request: exactly
one claim, the other 7 get AlreadyClaimed naming the holder. And 8 workers ask for a ready
run (`claim_run` without an id, the `signoff worker` loop) when one run is ready: exactly
one gets it, the other 7 get None.
"""

from __future__ import annotations

import multiprocessing as mp
from pathlib import Path
from typing import Any

import pytest

from signoff.models import Decision
from store_helpers import Backend, make_request

DECIDERS = 16
CLAIMERS = 8


def _racer(
    url: str, index: int, decide_id: str, claim_id: str, barrier: Any, claim_barrier: Any, out: Any
) -> None:
    from signoff.exceptions import AlreadyClaimed, AlreadyDecided
    from signoff.store import open_store

    store = open_store(url)
    try:
        kind = "approve" if index % 2 else "reject"
        decision = Decision(kind, reason=f"by {index}")  # type: ignore[arg-type]
        barrier.wait(timeout=60)
        try:
            store.decide(decide_id, decision, actor=f"p{index}")
            out.put(("decide", index, "won", ""))
        except AlreadyDecided as exc:
            out.put(("decide", index, "lost", str(exc)))
        if index < CLAIMERS:
            claim_barrier.wait(timeout=60)
            try:
                store.claim(claim_id, worker=f"w{index}")
                out.put(("claim", index, "won", ""))
            except AlreadyClaimed as exc:
                out.put(("claim", index, "lost", str(exc)))
    except Exception as exc:  # reported, never swallowed
        out.put(("error", index, type(exc).__name__, str(exc)))
    finally:
        store.close()


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
def test_racing_processes(kind: str, tmp_path: Path) -> None:
    backend = Backend(kind, tmp_path)
    try:
        store = backend.open()
        to_decide = store.create_request(make_request())
        to_claim = store.create_request(make_request())
        store.decide(to_claim.id, Decision("approve"), actor="ann")
        ctx = mp.get_context("spawn")
        barrier, claim_barrier, out = ctx.Barrier(DECIDERS), ctx.Barrier(CLAIMERS), ctx.Queue()
        procs = [
            ctx.Process(
                target=_racer,
                args=(backend.url, i, to_decide.id, to_claim.id, barrier, claim_barrier, out),
            )
            for i in range(DECIDERS)
        ]
        for p in procs:
            p.start()
        results = [out.get(timeout=120) for _ in range(DECIDERS + CLAIMERS)]
        for p in procs:
            p.join(timeout=60)
        assert [r for r in results if r[0] == "error"] == []
        decided = [r for r in results if r[0] == "decide"]
        winners = [r for r in decided if r[2] == "won"]
        assert len(winners) == 1 and len(decided) == DECIDERS
        final = store.get_request(to_decide.id)
        assert final.decision is not None and final.decision.actor == f"p{winners[0][1]}"
        assert all(f"by p{winners[0][1]}" in r[3] for r in decided if r[2] == "lost")
        claims = [r for r in results if r[0] == "claim"]
        claim_winners = [r for r in claims if r[2] == "won"]
        assert len(claim_winners) == 1 and len(claims) == CLAIMERS
        assert all(f"claimed by w{claim_winners[0][1]}" in r[3] for r in claims if r[2] == "lost")
        events = [e for e in store.events_after(0, 1000) if e.request_id == to_decide.id]
        assert [e.kind for e in events] == ["request.created", "request.decided"]
        claimed = [
            e
            for e in store.events_after(0, 1000)
            if e.request_id == to_claim.id and e.kind == "request.claimed"
        ]
        assert len(claimed) == 1
        assert store.verify_chain()[0]
    finally:
        backend.close()


RUN_WORKERS = 8


def _run_claimer(url: str, index: int, barrier: Any, out: Any) -> None:
    from signoff.store import open_store

    store = open_store(url)
    try:
        barrier.wait(timeout=60)
        run = store.claim_run(f"w{index}", lease_seconds=60)
        out.put(("claim", index, None if run is None else run.id))
    except Exception as exc:  # reported, never swallowed
        out.put(("error", index, f"{type(exc).__name__}: {exc}"))
    finally:
        store.close()


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
def test_workers_racing_for_one_ready_run(kind: str, tmp_path: Path) -> None:
    from dataclasses import replace

    from signoff.runs.agent import Run

    backend = Backend(kind, tmp_path)
    try:
        store = backend.open()
        run = store.create_run(
            Run(id="run-ready"), [{"role": "user", "content": "go"}], worker="starter"
        )
        store.save_run(replace(run, status="paused"), [], expected_version=1, worker="starter")
        ctx = mp.get_context("spawn")
        barrier, out = ctx.Barrier(RUN_WORKERS), ctx.Queue()
        procs = [
            ctx.Process(target=_run_claimer, args=(backend.url, i, barrier, out))
            for i in range(RUN_WORKERS)
        ]
        for p in procs:
            p.start()
        results = [out.get(timeout=120) for _ in range(RUN_WORKERS)]
        for p in procs:
            p.join(timeout=60)
        assert [r for r in results if r[0] == "error"] == []
        winners = [r for r in results if r[2] == "run-ready"]
        assert len(winners) == 1
        assert sum(1 for r in results if r[2] is None) == RUN_WORKERS - 1
        claimed = [e for e in store.events_after(0, 1000) if e.kind == "run.claimed"]
        assert [e.actor for e in claimed] == [f"w{winners[0][1]}"]
        assert store.verify_chain()[0]
    finally:
        backend.close()
