-- A version counter on every request row: each transition is a compare-and-set on it,
-- done by one server-side call in one autocommit statement (one transaction, one commit):
-- the row write and its events land together or not at all.
ALTER TABLE signoff_requests ADD COLUMN version BIGINT NOT NULL DEFAULT 0;

CREATE FUNCTION signoff_apply(p_id TEXT, p_version BIGINT, p_state TEXT, p_doc TEXT,
                              p_token_hash TEXT, p_worker TEXT,
                              p_lease DOUBLE PRECISION, p_outcome TEXT,
                              p_ts DOUBLE PRECISION, p_run_id TEXT, p_kinds TEXT[],
                              p_entries TEXT[]) RETURNS BOOLEAN
LANGUAGE plpgsql AS $$
BEGIN
    UPDATE signoff_requests
       SET state = p_state, doc = p_doc, token_hash = p_token_hash, worker = p_worker,
           lease_expires_at = p_lease, outcome = p_outcome, version = version + 1
     WHERE id = p_id AND version = p_version;
    IF NOT FOUND THEN
        RETURN FALSE;  -- someone else moved first: the caller re-reads and re-decides
    END IF;
    FOR i IN 1 .. coalesce(array_length(p_entries, 1), 0) LOOP
        PERFORM signoff_append(p_ts, p_kinds[i], p_id, p_run_id, p_entries[i]);
    END LOOP;
    RETURN TRUE;
END
$$;

CREATE FUNCTION signoff_create(p_id TEXT, p_state TEXT, p_run_id TEXT, p_tenant TEXT,
                               p_created_at DOUBLE PRECISION, p_expires_at DOUBLE PRECISION,
                               p_idempotent INTEGER, p_doc TEXT, p_ts DOUBLE PRECISION,
                               p_kinds TEXT[], p_entries TEXT[]) RETURNS VOID
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO signoff_requests (id, state, run_id, tenant, created_at, expires_at,
                                  idempotent, doc)
        VALUES (p_id, p_state, p_run_id, p_tenant, p_created_at, p_expires_at,
                p_idempotent, p_doc);
    FOR i IN 1 .. coalesce(array_length(p_entries, 1), 0) LOOP
        PERFORM signoff_append(p_ts, p_kinds[i], p_id, p_run_id, p_entries[i]);
    END LOOP;
END
$$;
