-- SQLite-only change (the open-state index's condition), numbered here too so both
-- backends count alike
SELECT 1
