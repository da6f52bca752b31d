"""How long a record written with flush="soon" waits before it is on disk, per backend.

`store.record(..., flush="soon")` returns once the record is committed (another process
reads it, and it survives the writing process being killed) and before it is on disk;
what a power cut (SQLite, PostgreSQL) or a crash of the database server (PostgreSQL) can
lose is what is in that gap. This measures the gap, for each soon record:

* SQLite: from the moment the commit is handed to the flush thread to the end of the
  first `fdatasync` of the WAL that thread starts after it (both timed in the writing
  process by wrapping the flush thread's own calls);
* PostgreSQL: from the commit's return to the first moment `pg_current_wal_flush_lsn()`
  is at or past the WAL position read right after the commit, polled every 0.5 ms on a
  second connection (an upper bound: the position read may be past the commit's own).

Two conditions, back to back, each --records soon records by one measured writer:
`quiet` (one record every 50 ms, nothing else writing: each record waits out its own
window) and `load` (the same, while --load processes write soon records, and a durable
one in ten, to the same store as fast as they can).

Printed: p50, p90, p99 and the maximum, in ms, per backend and condition.
Usage: python bench/flush_window.py [--records 200] [--load 4] [--pg postgresql://…]
Last line: one JSON object (`sqlite_quiet_p50_ms`, … `postgres_load_max_ms`).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import statistics
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

PG_DEFAULT = os.environ.get("SIGNOFF_BENCH_PG", "postgresql://postgres@127.0.0.1:5432/test")
VERDICT = {"call": {"name": "read_file", "arguments": {"path": "README.md"}}, "verdict": "allow"}
SPACING_S = 0.05


def _loader(url: str, stop: Any) -> None:
    """Writes to the same store as fast as it can until told to stop."""
    from signoff.store import open_store

    store = open_store(url)
    n = 0
    while not stop.is_set():
        store.record("verdict", VERDICT, run_id="load", flush="now" if n % 10 == 0 else "soon")
        n += 1
    store.close()


def _percentiles(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)

    def rank(p: float) -> float:  # nearest rank
        return ordered[max(0, min(len(ordered) - 1, round(p * len(ordered)) - 1))]

    return {
        "p50": round(statistics.median(ordered), 1),
        "p90": round(rank(0.9), 1),
        "p99": round(rank(0.99), 1),
        "max": round(ordered[-1], 1),
    }


def sqlite_gaps(url: str, records: int) -> list[float]:
    from signoff.store import flusher, open_store

    handed: list[float] = []
    flushes: list[tuple[float, float]] = []
    real_due, real_sync = flusher.Flusher.due, flusher.os.fdatasync

    def due(self: Any) -> None:
        handed.append(time.perf_counter())
        real_due(self)

    def sync(fd: int) -> None:
        start = time.perf_counter()
        real_sync(fd)
        flushes.append((start, time.perf_counter()))

    flusher.Flusher.due = due  # type: ignore[method-assign]
    flusher.os.fdatasync = sync  # the module's `os` is the os module: this process only
    store = open_store(url)
    try:
        for _ in range(records):
            store.record("verdict", VERDICT, run_id="measured", flush="soon")
            time.sleep(SPACING_S)
        store.flush(30)
    finally:
        store.close()
        flusher.Flusher.due = real_due  # type: ignore[method-assign]
        flusher.os.fdatasync = real_sync
    gaps = []
    for at in handed:
        ends = [end for start, end in flushes if start >= at]
        if ends:
            gaps.append((min(ends) - at) * 1000)
    return gaps


def postgres_gaps(url: str, records: int) -> list[float]:
    import psycopg

    from signoff.store import open_store

    store = open_store(url)
    probe = psycopg.connect(url, autocommit=True)
    gaps = []
    try:
        for _ in range(records):
            store.record("verdict", VERDICT, run_id="measured", flush="soon")
            done = time.perf_counter()
            (target,) = probe.execute("SELECT pg_current_wal_insert_lsn()").fetchone()  # type: ignore[misc]
            while True:
                (flushed,) = probe.execute(
                    "SELECT pg_current_wal_flush_lsn() >= %s::pg_lsn", (target,)
                ).fetchone()  # type: ignore[misc]
                if flushed:
                    break
                time.sleep(0.0005)
            gaps.append((time.perf_counter() - done) * 1000)
            time.sleep(SPACING_S)
    finally:
        probe.close()
        store.close()
    return gaps


def measure(backend: str, url: str, records: int, load: int) -> dict[str, dict[str, float]]:
    out = {}
    gaps = sqlite_gaps if backend == "sqlite" else postgres_gaps
    out["quiet"] = _percentiles(gaps(url, records))
    ctx = mp.get_context("spawn")
    stop = ctx.Event()
    loaders = [ctx.Process(target=_loader, args=(url, stop)) for _ in range(load)]
    for proc in loaders:
        proc.start()
    try:
        time.sleep(1.0)  # the loaders are writing
        out["load"] = _percentiles(gaps(url, records))
    finally:
        stop.set()
        for proc in loaders:
            proc.join(60)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=200)
    parser.add_argument("--load", type=int, default=4, help="processes writing beside")
    parser.add_argument("--pg", default=PG_DEFAULT)
    opts = parser.parse_args()
    results: dict[str, dict[str, dict[str, float]]] = {}
    with tempfile.TemporaryDirectory(dir=Path.cwd()) as folder:  # the disk a project uses
        results["sqlite"] = measure(
            "sqlite", str(Path(folder) / "signoff.db"), opts.records, opts.load
        )
    schema = f"bench_flush_{uuid.uuid4().hex[:8]}"
    try:
        import psycopg

        with psycopg.connect(opts.pg, autocommit=True) as admin:
            admin.execute(f"CREATE SCHEMA {schema}")
            delay = admin.execute("SHOW wal_writer_delay").fetchone()[0]  # type: ignore[index]
        url = f"{opts.pg}?options=-csearch_path%3D{schema}"
        try:
            results["postgres"] = measure("postgres", url, opts.records, opts.load)
        finally:
            with psycopg.connect(opts.pg, autocommit=True) as admin:
                admin.execute(f"DROP SCHEMA {schema} CASCADE")
    except Exception as exc:  # no server: SQLite alone, said so
        print(f"PostgreSQL not measured: {exc}")
        delay = None
    print(f"{'ms from commit to disk':<28} {'p50':>7} {'p90':>7} {'p99':>7} {'max':>7}")
    figures: dict[str, Any] = {"records": opts.records, "load_processes": opts.load}
    for backend, by in results.items():
        for condition, p in by.items():
            name = f"{backend} {condition}"
            print(f"{name:<28} {p['p50']:>7} {p['p90']:>7} {p['p99']:>7} {p['max']:>7}")
            for key, value in p.items():
                figures[f"{backend}_{condition}_{key}_ms"] = value
    if delay is not None:
        print(f"(PostgreSQL wal_writer_delay here: {delay})")
        figures["postgres_wal_writer_delay"] = delay
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
