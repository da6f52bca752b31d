"""Full request -> decide -> claim -> finish lifecycles per second.

Every operation is one durable transaction (SQLite: WAL + synchronous=FULL; PostgreSQL:
synchronous_commit as configured, fsync on), with its audit event in the same transaction.
Measured with 1 and 4 processes on SQLite and PostgreSQL, beside:

* the seed 001 reference design: a NEW sqlite3 connection and a default rollback-journal
  (journal_mode=DELETE, synchronous=FULL) BEGIN IMMEDIATE transaction per operation;
* the same signoff stores writing the record two cheaper ways, to price the audit:
  - "feed only": the events feed as the durable-runs issue specified it (every state
    change appends its event, in commit order, in the same transaction; the same entries,
    so webhooks and the inbox see the same data) but NOT hash-chained: no previous hash,
    no hash, no chain head to read and move. The audit's own cost is the difference:
    `audit_overhead_ratio` = time per lifecycle with the audit / with the feed only.
    On PostgreSQL the feed keeps its one-row counter (the feed's order comes from it;
    a bench-only server function replaces the append in a schema of its own).
  - "no record": no event at all (private engine flag), which no real signoff store
    does (invariant 8); `record_overhead_ratio` = with the audit / with no record, printed
    so the whole cost of keeping a record is visible too.

* a lean reference for each backend, written here and not in signoff: one connection per
  process, each transition ONE durable transaction that compare-and-sets the row on its
  state and appends one event row (a plain feed: no chain, no MAC, no checks, no cache),
  with the same durability (SQLite: WAL + synchronous=FULL; PostgreSQL: synchronous
  commit, one autocommit statement). It prices what the disk and the driver cost on this
  machine, so `postgres_vs_reference` / `sqlite_vs_reference` (signoff / reference,
  4 processes) say how much of each figure is signoff's own.

Every configuration runs --repeat times, interleaved round-robin, and the medians are
reported (the machine is shared: a single run can be off by 2x); the overhead ratios are
the medians of the per-round ratios, each taken between runs made back to back.

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


def _signoff_worker(url: str, seconds: float, record: str, barrier: Any, out: Any) -> None:
    from signoff.models import Decision, Request, ToolCall, Verdict
    from signoff.store import open_store

    store = open_store(url)
    store._audit = record != "none"  # type: ignore[attr-defined]
    if record == "feed" and store.__class__.__name__ == "SQLiteStore":
        store._tx.__class__ = _feed_only_sqlite_tx()  # type: ignore[attr-defined]
    verdict = Verdict("ask", "high", "ask:Bash(rm *)", ("deletes files",), "destructive")
    approve = Decision("approve")
    pid = os.getpid()
    barrier.wait()
    start, cpu = time.perf_counter(), time.process_time()
    deadline = start + seconds
    n = 0
    while time.perf_counter() < deadline:
        call = ToolCall("bash", {"command": f"rm -rf build/{pid}/{n}"}, f"call_{n}")
        req = store.create_request(Request(id="", call=call, verdict=verdict, run_id="bench"))
        store.decide(req.id, approve, actor="ann")
        claim = store.claim(req.id, worker=f"w{pid}", lease_seconds=60)
        store.finish(req.id, claim.token, ok=True, result_digest="0" * 64)
        n += 1
    out.put((n, start, time.perf_counter(), time.process_time() - cpu))
    store.close()


def _feed_only_sqlite_tx() -> Any:
    """SQLite's transaction with the events appended as a plain feed: the same rows, in
    commit order (one writer at a time, the rowid is the next sequence number), without
    the chain's hashes and head."""
    from signoff.store.sql import SQLTx

    class FeedOnlyTx(SQLTx):
        def append(self, entries: Any, ts: float) -> list[int]:
            self.appended = True
            seqs = []
            for draft, entry in entries:
                cur = self._q(
                    "event",
                    (None, ts, draft.kind, draft.request_id, draft.run_id, entry, "", "", None),
                )
                seqs.append(int(cur.lastrowid))
            return seqs

    return FeedOnlyTx


# The same append as migration 0005's, minus the hashes: the counter row still gives the
# feed its gap-free commit order (a consumer's cursor must never skip an event that
# commits late), so appends still queue on it and commit in two steps.
PG_FEED_ONLY = """
CREATE OR REPLACE FUNCTION signoff_append_text(p_ts DOUBLE PRECISION, p_request_id TEXT,
                                               p_run_id TEXT, p_kinds TEXT, p_entries TEXT)
RETURNS BIGINT LANGUAGE plpgsql AS $$
DECLARE
    v_kinds TEXT[];
    v_entries TEXT[];
    v_seq BIGINT;
BEGIN
    IF p_entries IS NULL OR p_entries = '' THEN
        RETURN NULL;
    END IF;
    IF strpos(p_entries, E'\n') = 0 THEN  -- one entry: the common case
        UPDATE signoff_chain SET seq = seq + 1 WHERE id = 1 RETURNING seq INTO v_seq;
        INSERT INTO signoff_events (seq, ts, kind, request_id, run_id, entry, prev_hash, hash)
            VALUES (v_seq, p_ts, p_kinds, p_request_id, p_run_id, p_entries, '', '');
    ELSE
        v_kinds := string_to_array(p_kinds, E'\n');
        v_entries := string_to_array(p_entries, E'\n');
        FOR i IN 1 .. array_length(v_entries, 1) LOOP
            UPDATE signoff_chain SET seq = seq + 1 WHERE id = 1 RETURNING seq INTO v_seq;
            INSERT INTO signoff_events (seq, ts, kind, request_id, run_id, entry, prev_hash,
                                        hash)
                VALUES (v_seq, p_ts, v_kinds[i], p_request_id, p_run_id, v_entries[i], '', '');
        END LOOP;
    END IF;
    PERFORM pg_notify('signoff_events', v_seq::text);
    RETURN v_seq;
END
$$;
"""


# ------------------------------------------------------------------ lean references

REF_SQLITE_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS ref_requests (id TEXT PRIMARY KEY, state TEXT NOT NULL, "
    "doc TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS ref_events (seq INTEGER PRIMARY KEY, request_id TEXT, "
    "entry TEXT NOT NULL)",
)
# PostgreSQL: the transition and its event in one statement (a data-modifying CTE); the
# event is written only if the compare-and-set matched
REF_PG_SCHEMA = """
CREATE TABLE ref_requests (id TEXT PRIMARY KEY, state TEXT NOT NULL, doc TEXT NOT NULL);
CREATE TABLE ref_events (seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                         request_id TEXT, entry TEXT NOT NULL);
"""
REF_PG_INSERT = (
    "WITH r AS (INSERT INTO ref_requests VALUES (%s, 'pending', %s) RETURNING id) "
    "INSERT INTO ref_events (request_id, entry) SELECT id, %s FROM r"
)
REF_PG_MOVE = (
    "WITH r AS (UPDATE ref_requests SET state = %s, doc = %s WHERE id = %s "
    "AND state = %s RETURNING id) "
    "INSERT INTO ref_events (request_id, entry) SELECT id, %s FROM r RETURNING seq"
)
REF_MOVES = (("approved", "pending"), ("claimed", "approved"), ("finished", "claimed"))


def _ref_payload(pid: int, n: int, state: str) -> tuple[str, str]:
    """A request document and an event entry about the size of signoff's own."""
    doc = _canon(
        {
            "call": {"name": "bash", "arguments": {"command": f"rm -rf build/{pid}/{n}"}},
            "state": state,
            "pad": "x" * 900,
        }
    )
    return doc, _canon({"kind": f"request.{state}", "data": {"pad": "y" * 300}})


def _ref_sqlite_worker(path: str, seconds: float, barrier: Any, out: Any) -> None:
    conn = sqlite3.connect(path, timeout=30, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=FULL")
    pid = os.getpid()
    barrier.wait()
    start, cpu = time.perf_counter(), time.process_time()
    deadline = start + seconds
    n = 0
    while time.perf_counter() < deadline:
        rid = uuid.uuid4().hex
        doc, entry = _ref_payload(pid, n, "pending")
        conn.execute("BEGIN IMMEDIATE")
        conn.execute("INSERT INTO ref_requests VALUES (?, 'pending', ?)", (rid, doc))
        conn.execute("INSERT INTO ref_events (request_id, entry) VALUES (?, ?)", (rid, entry))
        conn.execute("COMMIT")
        for target, source in REF_MOVES:
            doc, entry = _ref_payload(pid, n, target)
            conn.execute("BEGIN IMMEDIATE")
            moved = conn.execute(
                "UPDATE ref_requests SET state = ?, doc = ? WHERE id = ? AND state = ?",
                (target, doc, rid, source),
            ).rowcount
            assert moved == 1
            conn.execute("INSERT INTO ref_events (request_id, entry) VALUES (?, ?)", (rid, entry))
            conn.execute("COMMIT")
        n += 1
    out.put((n, start, time.perf_counter(), time.process_time() - cpu))
    conn.close()


def _ref_sqlite_setup(path: str) -> None:
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    for statement in REF_SQLITE_SCHEMA:
        conn.execute(statement)
    conn.close()


def _ref_pg_worker(url: str, seconds: float, barrier: Any, out: Any) -> None:
    import psycopg

    conn = psycopg.connect(url, autocommit=True)  # synchronous_commit as configured
    cur = conn.cursor()
    pid = os.getpid()
    barrier.wait()
    start, cpu = time.perf_counter(), time.process_time()
    deadline = start + seconds
    n = 0
    while time.perf_counter() < deadline:
        rid = uuid.uuid4().hex
        doc, entry = _ref_payload(pid, n, "pending")
        cur.execute(REF_PG_INSERT, (rid, doc, entry), prepare=True)
        for target, source in REF_MOVES:
            doc, entry = _ref_payload(pid, n, target)
            cur.execute(REF_PG_MOVE, (target, doc, rid, source, entry), prepare=True)
            assert cur.fetchone() is not None
        n += 1
    out.put((n, start, time.perf_counter(), time.process_time() - cpu))
    conn.close()


def _ref_pg_setup(url: str) -> None:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(REF_PG_SCHEMA)


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
    start, cpu = time.perf_counter(), time.process_time()
    deadline = start + seconds
    n = 0
    while time.perf_counter() < deadline:
        payload = {"tool": "bash", "arguments": {"command": f"rm -rf build/{pid}/{n}"}}
        body, rid, expires = _canon(payload), uuid.uuid4().hex, time.time() + 3600
        digest = _sha(body)
        binding = _sha(_canon({"id": rid, "actor": "ann", "digest": digest, "expires_at": expires}))
        with tx() as conn:  # request
            conn.execute(
                "INSERT INTO approvals VALUES (?,?,?,?,?,?,'pending',NULL,NULL)",
                (rid, "ann", body, digest, expires, binding),
            )
        for target, source in (("approved", "pending"), ("claimed", "approved")):
            with tx() as conn:  # decide, then claim: read, verify, compare-and-set
                row = conn.execute(
                    "SELECT payload, digest, binding, state, expires FROM approvals WHERE id=?",
                    (rid,),
                ).fetchone()
                assert _sha(row[0]) == row[1] and row[2] == binding and row[3] == source
                assert time.time() < row[4]
                token = secrets.token_hex(16) if target == "claimed" else None
                conn.execute(
                    "UPDATE approvals SET state=?, token=COALESCE(?, token) WHERE id=? AND state=?",
                    (target, token, rid, source),
                )
        with tx() as conn:  # finish
            conn.execute(
                "UPDATE approvals SET state='finished', result=? WHERE id=? AND "
                "state='claimed' AND token IS NOT NULL",
                ('{"ok":true}', rid),
            )
        n += 1
    out.put((n, start, time.perf_counter(), time.process_time() - cpu))


def _seed_setup(path: str) -> None:
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("""CREATE TABLE IF NOT EXISTS approvals (
        id TEXT PRIMARY KEY, actor TEXT NOT NULL, payload TEXT NOT NULL,
        digest TEXT NOT NULL, expires REAL NOT NULL, binding TEXT NOT NULL,
        state TEXT NOT NULL, token TEXT, result TEXT)""")
    conn.close()


# ------------------------------------------------------------------ runner


def run(target: Any, args: tuple[Any, ...], procs: int) -> tuple[float, float]:
    """(lifecycles per second, the workers' own CPU in ms per lifecycle)."""
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
    return total / wall, 1000 * sum(r[3] for r in results) / max(total, 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=2.0)
    parser.add_argument(
        "--repeat",
        type=int,
        default=3,
        help="run every configuration this many times, interleaved, and "
        "report medians (the machine is shared and noisy)",
    )
    parser.add_argument("--pg", default=PG_DEFAULT)
    opts = parser.parse_args()
    figures: dict[str, Any] = {}
    samples: dict[str, list[float]] = {}
    cpu_ms: dict[str, list[float]] = {}  # client CPU per lifecycle: steadier than the rates
    with tempfile.TemporaryDirectory() as tmp:

        def sqlite_url(name: str) -> str:
            return str(Path(tmp) / f"{name}.db")

        # (key, label, procs, target, args): every key is measured once per round
        configs: list[tuple[str, str, int, Any, tuple[Any, ...]]] = []
        for procs in (1, 4):
            configs.append(
                (
                    f"sqlite_{procs}p",
                    "signoff sqlite (WAL, FULL)",
                    procs,
                    _signoff_worker,
                    (sqlite_url(f"s{procs}"), opts.seconds, "audit"),
                )
            )
        configs.append(
            (
                "sqlite_feed_4p",
                "signoff sqlite, feed only (no chain)",
                4,
                _signoff_worker,
                (sqlite_url("feed"), opts.seconds, "feed"),
            )
        )
        configs.append(
            (
                "sqlite_norecord_4p",
                "signoff sqlite, no record at all",
                4,
                _signoff_worker,
                (sqlite_url("none"), opts.seconds, "none"),
            )
        )
        ref_path = sqlite_url("reference")
        _ref_sqlite_setup(ref_path)
        configs.append(
            (
                "sqlite_ref_4p",
                "lean reference, sqlite (WAL, FULL)",
                4,
                _ref_sqlite_worker,
                (ref_path, opts.seconds),
            )
        )
        for procs in (1, 4):
            path = sqlite_url(f"seed{procs}")
            _seed_setup(path)
            configs.append(
                (
                    f"seed_{procs}p",
                    "seed 001 design (conn/op, DELETE journal)",
                    procs,
                    _seed_worker,
                    (path, opts.seconds),
                )
            )
        pg_schemas = [
            s for s in (_pg_schema(opts.pg), _pg_schema(opts.pg), _pg_schema(opts.pg)) if s
        ]
        try:
            if len(pg_schemas) == 3:
                url, feed_url, ref_url = (
                    f"{opts.pg}?options=-csearch_path%3D{s}" for s in pg_schemas
                )
                from signoff.store import open_store

                open_store(url).close()  # migrate once, not in the timed region
                _pg_feed_only(feed_url)
                for procs in (1, 4):
                    configs.append(
                        (
                            f"postgres_{procs}p",
                            "signoff postgres",
                            procs,
                            _signoff_worker,
                            (url, opts.seconds, "audit"),
                        )
                    )
                configs.append(
                    (
                        "postgres_feed_4p",
                        "signoff postgres, feed only (no chain)",
                        4,
                        _signoff_worker,
                        (feed_url, opts.seconds, "feed"),
                    )
                )
                configs.append(
                    (
                        "postgres_norecord_4p",
                        "signoff postgres, no record at all",
                        4,
                        _signoff_worker,
                        (url, opts.seconds, "none"),
                    )
                )
                _ref_pg_setup(ref_url)
                configs.append(
                    (
                        "postgres_ref_4p",
                        "lean reference, postgres",
                        4,
                        _ref_pg_worker,
                        (ref_url, opts.seconds),
                    )
                )
            for _ in range(max(1, opts.repeat)):
                for key, _label, procs, target, args in configs:
                    rate, cpu = run(target, args, procs)
                    samples.setdefault(key, []).append(rate)
                    cpu_ms.setdefault(key, []).append(cpu)
        finally:
            for schema in pg_schemas:
                _pg_drop(opts.pg, schema)
    for key, values in samples.items():
        figures[key] = statistics.median(values)
    cpu = {key: statistics.median(values) for key, values in cpu_ms.items()}
    print(
        f"{'store':<44} {'procs':>5} {'lifecycles/s':>13} {'CPU ms':>7}"
        f"   (median of {opts.repeat}; each run)"
    )
    print("-" * 104)
    for key, label, procs, _t, _a in configs:
        runs = ", ".join(f"{v:,.0f}" for v in samples[key])
        print(f"{label:<44} {procs:>5} {figures[key]:>13,.0f} {cpu[key]:>7.2f}   [{runs}]")
    print(
        "CPU ms: the client processes' own CPU per lifecycle (PostgreSQL's server work not\n"
        "included). On 2 shared cores it bounds the rates when the disk is fast, and it moves\n"
        "far less than they do when other work loads the machine."
    )
    sqlite4, seed4 = figures["sqlite_4p"], figures["seed_4p"]
    # time per lifecycle with the audit / without it = throughput without / with, taken
    # per round (the configurations compared run back to back) and then the median: the
    # machine's speed drifts between rounds more than the difference being measured

    def paired(audited: str, other: str) -> float:
        return statistics.median(
            b / a for a, b in zip(samples[audited], samples[other], strict=True)
        )

    audit_ratio = paired("sqlite_4p", "sqlite_feed_4p")
    record_ratio = paired("sqlite_4p", "sqlite_norecord_4p")
    pg4 = figures.get("postgres_4p")
    pg_ref = paired("postgres_ref_4p", "postgres_4p") if pg4 else None
    pg_sqlite = paired("sqlite_4p", "postgres_4p") if pg4 else None
    sqlite_ref = paired("sqlite_ref_4p", "sqlite_4p")
    print(f"\nsignoff sqlite / seed 001 design (4 processes): {sqlite4 / seed4:.2f}x")
    print(
        f"signoff / lean reference (4 processes, median of per-round ratios): sqlite "
        f"{sqlite_ref:.2f}",
        end="",
    )
    print(f", postgres {pg_ref:.2f}" if pg_ref else "")
    if pg_sqlite:
        print(f"signoff postgres / signoff sqlite (4 processes, per round): {pg_sqlite:.2f}")
    print(
        "time per lifecycle, 4 processes       audit / feed only   audit / no record"
        "   (median of per-round ratios)"
    )
    print(f"  sqlite                                {audit_ratio:>15.3f} {record_ratio:>19.3f}")
    pg_audit = pg_record = None
    if pg4:
        pg_audit = paired("postgres_4p", "postgres_feed_4p")
        pg_record = paired("postgres_4p", "postgres_norecord_4p")
        print(f"  postgres                              {pg_audit:>15.3f} {pg_record:>19.3f}")
    print(
        json.dumps(
            {
                "sqlite_lifecycles_per_s": round(sqlite4, 1),
                "postgres_lifecycles_per_s": round(pg4, 1) if pg4 else None,
                "seed_design_lifecycles_per_s": round(seed4, 1),
                "sqlite_vs_seed_ratio": round(sqlite4 / seed4, 2),
                "audit_overhead_ratio": round(audit_ratio, 3),
                "postgres_audit_overhead_ratio": round(pg_audit, 3) if pg_audit else None,
                "record_overhead_ratio": round(record_ratio, 3),
                "postgres_record_overhead_ratio": round(pg_record, 3) if pg_record else None,
                "sqlite_1p_lifecycles_per_s": round(figures["sqlite_1p"], 1),
                "postgres_1p_lifecycles_per_s": round(figures["postgres_1p"], 1) if pg4 else None,
                "seed_design_1p_lifecycles_per_s": round(figures["seed_1p"], 1),
                "sqlite_reference_lifecycles_per_s": round(figures["sqlite_ref_4p"], 1),
                "postgres_reference_lifecycles_per_s": (
                    round(figures["postgres_ref_4p"], 1) if pg4 else None
                ),
                "sqlite_cpu_ms_per_lifecycle": round(cpu["sqlite_4p"], 3),
                "sqlite_reference_cpu_ms_per_lifecycle": round(cpu["sqlite_ref_4p"], 3),
                "postgres_cpu_ms_per_lifecycle": round(cpu["postgres_4p"], 3) if pg4 else None,
                "postgres_reference_cpu_ms_per_lifecycle": (
                    round(cpu["postgres_ref_4p"], 3) if pg4 else None
                ),
                "sqlite_vs_reference": round(sqlite_ref, 3),
                "postgres_vs_reference": round(pg_ref, 3) if pg_ref else None,
                "postgres_vs_sqlite": round(pg_sqlite, 3) if pg_sqlite else None,
                "repeat": opts.repeat,
                "cpus": os.cpu_count(),
            }
        )
    )


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


def _pg_feed_only(url: str) -> None:
    """A second schema whose append is the feed-only one (see PG_FEED_ONLY)."""
    import psycopg

    from signoff.store import open_store

    open_store(url).close()
    schema = url.rsplit("%3D", 1)[1]
    with psycopg.connect(url.split("?")[0], autocommit=True) as conn:
        conn.execute(f"SET search_path TO {schema}")
        conn.execute(PG_FEED_ONLY)


def _pg_drop(url: str, schema: str) -> None:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")


if __name__ == "__main__":
    main()
