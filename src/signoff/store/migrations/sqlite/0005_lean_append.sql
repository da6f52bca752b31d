-- PostgreSQL-only change (the append functions), numbered here too so both backends count alike
SELECT 1
