-- Durable runs: one row per run (its JSON document, version and lease) and one row per
-- chat-completions message, append-only (a pause writes only the new messages).
CREATE TABLE signoff_runs (
    ord INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    status TEXT NOT NULL,
    tenant TEXT NOT NULL,
    thread TEXT,
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL,
    message_count INTEGER NOT NULL,
    version INTEGER NOT NULL,
    lease_owner TEXT,
    lease_expires_at REAL,
    lease_seconds REAL,
    doc TEXT NOT NULL
);
CREATE INDEX signoff_runs_status ON signoff_runs (status, updated_at);
CREATE TABLE signoff_messages (
    run_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    msg TEXT NOT NULL,
    PRIMARY KEY (run_id, seq)
) WITHOUT ROWID
