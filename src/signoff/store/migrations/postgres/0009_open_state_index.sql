-- SQLite-only change (a partial index on open states), numbered here too so both backends
-- count alike
SELECT 1
