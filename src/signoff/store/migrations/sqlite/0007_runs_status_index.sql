-- The runs index covers the status only: a save that keeps the status (most of them)
-- then leaves the index alone; the few ready runs are ordered by update time in memory.
DROP INDEX signoff_runs_status;
CREATE INDEX signoff_runs_status ON signoff_runs (status);
