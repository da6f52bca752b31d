CREATE TABLE signoff_meta (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE signoff_requests (
    ord INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    state TEXT NOT NULL,
    run_id TEXT,
    tenant TEXT NOT NULL,
    created_at REAL NOT NULL,
    expires_at REAL,
    idempotent INTEGER NOT NULL DEFAULT 0,
    doc TEXT NOT NULL,
    token_hash TEXT,
    worker TEXT,
    lease_expires_at REAL,
    outcome TEXT
);
CREATE INDEX signoff_requests_state ON signoff_requests (state);
CREATE INDEX signoff_requests_run ON signoff_requests (run_id);
CREATE TABLE signoff_events (
    seq INTEGER PRIMARY KEY,
    ts REAL NOT NULL,
    kind TEXT NOT NULL,
    request_id TEXT,
    run_id TEXT,
    entry TEXT NOT NULL,
    prev_hash TEXT NOT NULL,
    hash TEXT NOT NULL
);
CREATE TABLE signoff_chain (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    seq INTEGER NOT NULL,
    hash TEXT NOT NULL
);
INSERT INTO signoff_chain (id, seq, hash)
    VALUES (1, 0, '0000000000000000000000000000000000000000000000000000000000000000');
CREATE TABLE signoff_consumers (
    name TEXT PRIMARY KEY,
    seq INTEGER NOT NULL
);
CREATE TABLE signoff_grants (
    ord INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    scope TEXT NOT NULL,
    run_id TEXT,
    created_at REAL NOT NULL,
    revoked_at REAL,
    doc TEXT NOT NULL
);
