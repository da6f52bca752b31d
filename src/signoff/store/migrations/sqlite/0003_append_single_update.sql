-- PostgreSQL-only change (the append function), numbered here too so both backends count alike
SELECT 1
