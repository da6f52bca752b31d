-- SQLite-only change (the chain's end mark), numbered here too so both backends count alike
SELECT 1
