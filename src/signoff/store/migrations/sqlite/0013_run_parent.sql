-- Nested runs: a run started by another run's delegate call names that run. A parent
-- is not ready to resume while a child is unfinished, so the column is indexed.
ALTER TABLE signoff_runs ADD COLUMN parent_id TEXT;
CREATE INDEX signoff_runs_parent ON signoff_runs (parent_id) WHERE parent_id IS NOT NULL
