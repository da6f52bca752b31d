"""Full request -> decide -> claim -> finish lifecycles per second.

Every operation is one durable transaction (SQLite: WAL + synchronous=FULL; PostgreSQL:
synchronous_commit as configured, fsync on), with its audit event in the same transaction.
Measured with 1 and 4 processes on SQLite and PostgreSQL, beside:

* the seed 001 reference design: a NEW sqlite3 connection and a default rollback-journal
  (journal_mode=DELETE, synchronous=FULL) BEGIN IMMEDIATE transaction per operation;
* the same signoff stores with the audit/event write switched off (private flag), to
  print the audit's cost as `audit_overhead_ratio` (time with audit / time without).

Every configuration runs --repeat times, interleaved round-robin, and the medians are
reported (the machine is shared: a single run can be off by 2x).

Usage: python bench/store_lifecycle.py [--seconds 2] [--repeat 3] [--pg postgresql://…]
Last line: one JSON object.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import multiprocessing as mp
import os
import secrets
import sqlite3
import statistics
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

PG_DEFAULT = os.environ.get("SIGNOFF_BENCH_PG", "postgresql://postgres@127.0.0.1:5432/test")


# ------------------------------------------------------------------ signoff workers


def _signoff_worker(url: str, seconds: float, audit: bool, barrier: Any, out: Any) -> None:
    from signoff.models import Decision, Request, ToolCall, Verdict
    from signoff.store import open_store

    store = open_store(url)
    store._audit = audit  # type: ignore[attr-defined]
    verdict = Verdict("ask", "high", "ask:Bash(rm *)", ("deletes files",), "destructive")
    approve = Decision("approve")
    pid = os.getpid()
    barrier.wait()
    start = time.perf_counter()
    deadline = start + seconds
    n = 0
    while time.perf_counter() < deadline:
        call = ToolCall("bash", {"command": f"rm -rf build/{pid}/{n}"}, f"call_{n}")
        req = store.create_request(Request(id="", call=call, verdict=verdict, run_id="bench"))
        store.decide(req.id, approve, actor="ann")
        claim = store.claim(req.id, worker=f"w{pid}", lease_seconds=60)
        store.finish(req.id, claim.token, ok=True, result_digest="0" * 64)
        n += 1
    out.put((n, start, time.perf_counter()))
    store.close()


# ------------------------------------------------------------------ seed 001 design


def _seed_tx(path: str) -> Any:
    @contextlib.contextmanager
    def tx() -> Any:
        conn = sqlite3.connect(path, timeout=30, isolation_level=None)
        try:
            conn.execute("PRAGMA synchronous=FULL")
            conn.execute("BEGIN IMMEDIATE")
            yield conn
            conn.commit()
        except BaseException:
            conn.rollback()
            raise
        finally:
            conn.close()

    return tx


def _canon(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _seed_worker(path: str, seconds: float, barrier: Any, out: Any) -> None:
    tx = _seed_tx(path)
    pid = os.getpid()
    barrier.wait()
    start = time.perf_counter()
    deadline = start + seconds
    n = 0
    while time.perf_counter() < deadline:
        payload = {"tool": "bash", "arguments": {"command": f"rm -rf build/{pid}/{n}"}}
        body, rid, expires = _canon(payload), uuid.uuid4().hex, time.time() + 3600
        digest = _sha(body)
        binding = _sha(_canon({"id": rid, "actor": "ann", "digest": digest, "expires_at": expires}))
        with tx() as conn:  # request
            conn.execute("INSERT INTO approvals VALUES (?,?,?,?,?,?,'pending',NULL,NULL)",
                         (rid, "ann", body, digest, expires, binding))
        for target, source in (("approved", "pending"), ("claimed", "approved")):
            with tx() as conn:  # decide, then claim: read, verify, compare-and-set
                row = conn.execute("SELECT payload, digest, binding, state, expires FROM "
                                   "approvals WHERE id=?", (rid,)).fetchone()
                assert _sha(row[0]) == row[1] and row[2] == binding and row[3] == source
                assert time.time() < row[4]
                token = secrets.token_hex(16) if target == "claimed" else None
                conn.execute("UPDATE approvals SET state=?, token=COALESCE(?, token) "
                             "WHERE id=? AND state=?", (target, token, rid, source))
        with tx() as conn:  # finish
            conn.execute("UPDATE approvals SET state='finished', result=? WHERE id=? AND "
                         "state='claimed' AND token IS NOT NULL", ('{"ok":true}', rid))
        n += 1
    out.put((n, start, time.perf_counter()))


def _seed_setup(path: str) -> None:
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("""CREATE TABLE IF NOT EXISTS approvals (
        id TEXT PRIMARY KEY, actor TEXT NOT NULL, payload TEXT NOT NULL,
        digest TEXT NOT NULL, expires REAL NOT NULL, binding TEXT NOT NULL,
        state TEXT NOT NULL, token TEXT, result TEXT)""")
    conn.close()


# ------------------------------------------------------------------ runner


def run(target: Any, args: tuple[Any, ...], procs: int) -> float:
    ctx = mp.get_context("spawn")
    barrier, out = ctx.Barrier(procs), ctx.Queue()
    ps = [ctx.Process(target=target, args=(*args, barrier, out)) for _ in range(procs)]
    for p in ps:
        p.start()
    results = [out.get(timeout=300) for _ in ps]
    for p in ps:
        p.join()
    total = sum(r[0] for r in results)
    wall = max(r[2] for r in results) - min(r[1] for r in results)
    return total / wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=2.0)
    parser.add_argument("--repeat", type=int, default=3,
                        help="run every configuration this many times, interleaved, and "
                             "report medians (the machine is shared and noisy)")
    parser.add_argument("--pg", default=PG_DEFAULT)
    opts = parser.parse_args()
    figures: dict[str, Any] = {}
    samples: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory() as tmp:

        def sqlite_url(name: str) -> str:
            return str(Path(tmp) / f"{name}.db")

        # (key, label, procs, target, args): every key is measured once per round
        configs: list[tuple[str, str, int, Any, tuple[Any, ...]]] = []
        for procs in (1, 4):
            configs.append((f"sqlite_{procs}p", "signoff sqlite (WAL, FULL)", procs,
                            _signoff_worker, (sqlite_url(f"s{procs}"), opts.seconds, True)))
        configs.append(("sqlite_noaudit_4p", "signoff sqlite, audit off", 4, _signoff_worker,
                        (sqlite_url("na"), opts.seconds, False)))
        for procs in (1, 4):
            path = sqlite_url(f"seed{procs}")
            _seed_setup(path)
            configs.append((f"seed_{procs}p", "seed 001 design (conn/op, DELETE journal)",
                            procs, _seed_worker, (path, opts.seconds)))
        pg_schema = _pg_schema(opts.pg)
        try:
            if pg_schema is not None:
                url = f"{opts.pg}?options=-csearch_path%3D{pg_schema}"
                from signoff.store import open_store

                open_store(url).close()  # migrate once, not in the timed region
                for procs in (1, 4):
                    configs.append((f"postgres_{procs}p", "signoff postgres", procs,
                                    _signoff_worker, (url, opts.seconds, True)))
                configs.append(("postgres_noaudit_4p", "signoff postgres, audit off", 4,
                                _signoff_worker, (url, opts.seconds, False)))
            for _ in range(max(1, opts.repeat)):
                for key, _label, procs, target, args in configs:
                    samples.setdefault(key, []).append(run(target, args, procs))
        finally:
            if pg_schema is not None:
                _pg_drop(opts.pg, pg_schema)
    for key, values in samples.items():
        figures[key] = statistics.median(values)
    print(f"{'store':<44} {'procs':>5} {'lifecycles/s':>13}   (median of {opts.repeat}; "
          "each run)")
    print("-" * 96)
    for key, label, procs, _t, _a in configs:
        runs = ", ".join(f"{v:,.0f}" for v in samples[key])
        print(f"{label:<44} {procs:>5} {figures[key]:>13,.0f}   [{runs}]")
    sqlite4, seed4 = figures["sqlite_4p"], figures["seed_4p"]
    audit_ratio = figures["sqlite_noaudit_4p"] / sqlite4
    pg4 = figures.get("postgres_4p")
    print(f"\nsignoff sqlite / seed 001 design (4 processes): {sqlite4 / seed4:.2f}x")
    print(f"audit overhead, sqlite 4p (time with / time without): {audit_ratio:.3f}")
    pg_audit = None
    if pg4:
        pg_audit = figures["postgres_noaudit_4p"] / pg4
        print(f"audit overhead, postgres 4p (time with / time without): {pg_audit:.3f}")
    print(json.dumps({
        "sqlite_lifecycles_per_s": round(sqlite4, 1),
        "postgres_lifecycles_per_s": round(pg4, 1) if pg4 else None,
        "seed_design_lifecycles_per_s": round(seed4, 1),
        "sqlite_vs_seed_ratio": round(sqlite4 / seed4, 2),
        "audit_overhead_ratio": round(audit_ratio, 3),
        "postgres_audit_overhead_ratio": round(pg_audit, 3) if pg_audit else None,
        "sqlite_1p_lifecycles_per_s": round(figures["sqlite_1p"], 1),
        "postgres_1p_lifecycles_per_s": round(figures["postgres_1p"], 1) if pg4 else None,
        "seed_design_1p_lifecycles_per_s": round(figures["seed_1p"], 1),
        "repeat": opts.repeat,
        "cpus": os.cpu_count(),
    }))


def _pg_schema(url: str) -> str | None:
    try:
        import psycopg

        schema = f"signoff_bench_{uuid.uuid4().hex[:10]}"
        with psycopg.connect(url, autocommit=True, connect_timeout=3) as conn:
            conn.execute(f"CREATE SCHEMA {schema}")
        return schema
    except Exception as exc:
        print(f"PostgreSQL skipped: {exc}")
        return None


def _pg_drop(url: str, schema: str) -> None:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")


if __name__ == "__main__":
    main()
