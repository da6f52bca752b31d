-- Append with one row lock and one update of the chain head (was two updates): half the
-- dead tuples on the hottest row, and a shorter critical section.
CREATE OR REPLACE FUNCTION signoff_append(p_ts DOUBLE PRECISION, p_kind TEXT,
                                          p_request_id TEXT, p_run_id TEXT, p_entry TEXT)
RETURNS BIGINT
LANGUAGE plpgsql AS $$
DECLARE
    v_seq BIGINT;
    v_prev TEXT;
    v_hash TEXT;
BEGIN
    SELECT seq + 1, hash INTO v_seq, v_prev FROM signoff_chain WHERE id = 1 FOR UPDATE;
    v_hash := encode(sha256(convert_to(v_prev || p_entry, 'UTF8')), 'hex');
    UPDATE signoff_chain SET seq = v_seq, hash = v_hash WHERE id = 1;
    INSERT INTO signoff_events (seq, ts, kind, request_id, run_id, entry, prev_hash, hash)
        VALUES (v_seq, p_ts, p_kind, p_request_id, p_run_id, p_entry, v_prev, v_hash);
    PERFORM pg_notify('signoff_events', v_seq::text);
    RETURN v_seq;
END
$$;
