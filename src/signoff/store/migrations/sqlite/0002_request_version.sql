-- A version counter on every request row: each transition is a compare-and-set on it.
ALTER TABLE signoff_requests ADD COLUMN version INTEGER NOT NULL DEFAULT 0
