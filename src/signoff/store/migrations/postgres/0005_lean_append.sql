-- A leaner hot path. Events travel as one text of newline-joined entries (canonical JSON
-- never holds a raw newline) instead of text[] arrays, which the driver escapes slowly;
-- the chain head moves in ONE statement (the UPDATE reads the old hash and writes the new
-- one, keeping the old one in `prev` for the event row); one NOTIFY per transaction.
ALTER TABLE signoff_chain ADD COLUMN prev TEXT;

CREATE FUNCTION signoff_append_text(p_ts DOUBLE PRECISION, p_request_id TEXT,
                                    p_run_id TEXT, p_kinds TEXT, p_entries TEXT)
RETURNS BIGINT
LANGUAGE plpgsql AS $$
DECLARE
    v_kinds TEXT[];
    v_entries TEXT[];
    v_seq BIGINT;
    v_prev TEXT;
    v_hash TEXT;
BEGIN
    IF p_entries IS NULL OR p_entries = '' THEN
        RETURN NULL;
    END IF;
    IF strpos(p_entries, E'\n') = 0 THEN  -- one entry: the common case
        UPDATE signoff_chain
           SET seq = seq + 1, prev = hash,
               hash = encode(sha256(convert_to(hash || p_entries, 'UTF8')), 'hex')
         WHERE id = 1
        RETURNING seq, prev, hash INTO v_seq, v_prev, v_hash;
        INSERT INTO signoff_events (seq, ts, kind, request_id, run_id, entry, prev_hash, hash)
            VALUES (v_seq, p_ts, p_kinds, p_request_id, p_run_id, p_entries, v_prev, v_hash);
    ELSE
        v_kinds := string_to_array(p_kinds, E'\n');
        v_entries := string_to_array(p_entries, E'\n');
        FOR i IN 1 .. array_length(v_entries, 1) LOOP
            UPDATE signoff_chain
               SET seq = seq + 1, prev = hash,
                   hash = encode(sha256(convert_to(hash || v_entries[i], 'UTF8')), 'hex')
             WHERE id = 1
            RETURNING seq, prev, hash INTO v_seq, v_prev, v_hash;
            INSERT INTO signoff_events (seq, ts, kind, request_id, run_id, entry, prev_hash,
                                        hash)
                VALUES (v_seq, p_ts, v_kinds[i], p_request_id, p_run_id, v_entries[i],
                        v_prev, v_hash);
        END LOOP;
    END IF;
    PERFORM pg_notify('signoff_events', v_seq::text);
    RETURN v_seq;
END
$$;

CREATE OR REPLACE FUNCTION signoff_append(p_ts DOUBLE PRECISION, p_kind TEXT,
                                          p_request_id TEXT, p_run_id TEXT, p_entry TEXT)
RETURNS BIGINT
LANGUAGE sql AS $$
    SELECT signoff_append_text(p_ts, p_request_id, p_run_id, p_kind, p_entry)
$$;

-- One call per transition: compare-and-set on the version, then the events.
CREATE FUNCTION signoff_transition(p_id TEXT, p_version BIGINT, p_state TEXT, p_doc TEXT,
                                   p_token_hash TEXT, p_worker TEXT,
                                   p_lease DOUBLE PRECISION, p_outcome TEXT,
                                   p_ts DOUBLE PRECISION, p_run_id TEXT, p_kinds TEXT,
                                   p_entries TEXT) RETURNS BOOLEAN
LANGUAGE plpgsql AS $$
BEGIN
    UPDATE signoff_requests
       SET state = p_state, doc = p_doc, token_hash = p_token_hash, worker = p_worker,
           lease_expires_at = p_lease, outcome = p_outcome, version = version + 1
     WHERE id = p_id AND version = p_version;
    IF NOT FOUND THEN
        RETURN FALSE;  -- someone else moved first: the caller re-reads and re-decides
    END IF;
    PERFORM signoff_append_text(p_ts, p_id, p_run_id, p_kinds, p_entries);
    RETURN TRUE;
END
$$;

CREATE FUNCTION signoff_insert(p_id TEXT, p_state TEXT, p_run_id TEXT, p_tenant TEXT,
                               p_created_at DOUBLE PRECISION, p_expires_at DOUBLE PRECISION,
                               p_idempotent INTEGER, p_doc TEXT, p_ts DOUBLE PRECISION,
                               p_kinds TEXT, p_entries TEXT) RETURNS VOID
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO signoff_requests (id, state, run_id, tenant, created_at, expires_at,
                                  idempotent, doc)
        VALUES (p_id, p_state, p_run_id, p_tenant, p_created_at, p_expires_at,
                p_idempotent, p_doc);
    PERFORM signoff_append_text(p_ts, p_id, p_run_id, p_kinds, p_entries);
END
$$;

-- The chain head is one row, so appends queue on its lock, and a row lock is held until
-- the commit is on disk: with synchronous commits the appenders would take turns waiting
-- for the disk, one flush each. These procedures commit the change and its events
-- ASYNCHRONOUSLY (the lock is released as soon as the commit record is written), then
-- run a second, tiny transaction that writes one WAL record and commits synchronously:
-- its flush covers the first commit (the WAL is flushed in order), and concurrent
-- callers share flushes (group commit). The caller hears back only after the flush, so
-- everything acknowledged is durable. (Between the two steps others can already see the
-- change; were the server to crash in that instant the change would be lost, but nobody
-- was told it was done, and anything written after it that was acknowledged is durable
-- only together with it.)
CREATE PROCEDURE signoff_commit_transition(p_id TEXT, p_version BIGINT, p_state TEXT,
                                           p_doc TEXT, p_token_hash TEXT, p_worker TEXT,
                                           p_lease DOUBLE PRECISION, p_outcome TEXT,
                                           p_ts DOUBLE PRECISION, p_run_id TEXT,
                                           p_kinds TEXT, p_entries TEXT,
                                           INOUT p_ok BOOLEAN DEFAULT NULL)
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM set_config('synchronous_commit', 'off', true);
    p_ok := signoff_transition(p_id, p_version, p_state, p_doc, p_token_hash, p_worker,
                               p_lease, p_outcome, p_ts, p_run_id, p_kinds, p_entries);
    COMMIT;
    IF p_ok THEN
        PERFORM pg_logical_emit_message(true, 'signoff', '');
    END IF;
END
$$;

CREATE PROCEDURE signoff_commit_insert(p_id TEXT, p_state TEXT, p_run_id TEXT,
                                       p_tenant TEXT, p_created_at DOUBLE PRECISION,
                                       p_expires_at DOUBLE PRECISION, p_idempotent INTEGER,
                                       p_doc TEXT, p_ts DOUBLE PRECISION, p_kinds TEXT,
                                       p_entries TEXT)
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM set_config('synchronous_commit', 'off', true);
    PERFORM signoff_insert(p_id, p_state, p_run_id, p_tenant, p_created_at, p_expires_at,
                           p_idempotent, p_doc, p_ts, p_kinds, p_entries);
    COMMIT;
    PERFORM pg_logical_emit_message(true, 'signoff', '');
END
$$;
