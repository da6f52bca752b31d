CREATE TABLE signoff_meta (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE signoff_requests (
    ord BIGSERIAL PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    state TEXT NOT NULL,
    run_id TEXT,
    tenant TEXT NOT NULL,
    created_at DOUBLE PRECISION NOT NULL,
    expires_at DOUBLE PRECISION,
    idempotent INTEGER NOT NULL DEFAULT 0,
    doc TEXT NOT NULL,
    token_hash TEXT,
    worker TEXT,
    lease_expires_at DOUBLE PRECISION,
    outcome TEXT
);
CREATE INDEX signoff_requests_state ON signoff_requests (state);
CREATE INDEX signoff_requests_run ON signoff_requests (run_id);
CREATE TABLE signoff_events (
    seq BIGINT PRIMARY KEY,
    ts DOUBLE PRECISION NOT NULL,
    kind TEXT NOT NULL,
    request_id TEXT,
    run_id TEXT,
    entry TEXT NOT NULL,
    prev_hash TEXT NOT NULL,
    hash TEXT NOT NULL
);
CREATE TABLE signoff_chain (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    seq BIGINT NOT NULL,
    hash TEXT NOT NULL
);
INSERT INTO signoff_chain (id, seq, hash)
    VALUES (1, 0, '0000000000000000000000000000000000000000000000000000000000000000');
CREATE TABLE signoff_consumers (
    name TEXT PRIMARY KEY,
    seq BIGINT NOT NULL
);
CREATE TABLE signoff_grants (
    ord BIGSERIAL PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    scope TEXT NOT NULL,
    run_id TEXT,
    created_at DOUBLE PRECISION NOT NULL,
    revoked_at DOUBLE PRECISION,
    doc TEXT NOT NULL
);
-- Append one event to the hash chain: the UPDATE of the chain head is the lock that
-- serializes appends; sha256 over prev_hash || entry (the canonical JSON text), as the
-- other backends compute it; NOTIFY in the same transaction.
CREATE FUNCTION signoff_append(p_ts DOUBLE PRECISION, p_kind TEXT, p_request_id TEXT,
                               p_run_id TEXT, p_entry TEXT) RETURNS BIGINT
LANGUAGE plpgsql AS $$
DECLARE
    v_seq BIGINT;
    v_prev TEXT;
    v_hash TEXT;
BEGIN
    UPDATE signoff_chain SET seq = seq + 1 WHERE id = 1 RETURNING seq, hash INTO v_seq, v_prev;
    v_hash := encode(sha256(convert_to(v_prev || p_entry, 'UTF8')), 'hex');
    INSERT INTO signoff_events (seq, ts, kind, request_id, run_id, entry, prev_hash, hash)
        VALUES (v_seq, p_ts, p_kind, p_request_id, p_run_id, p_entry, v_prev, v_hash);
    UPDATE signoff_chain SET hash = v_hash WHERE id = 1;
    PERFORM pg_notify('signoff_events', v_seq::text);
    RETURN v_seq;
END
$$;
