-- The chain's end is marked on its last entry instead of being kept only in a row of its
-- own: an append then writes one page (the events table's last leaf holds both the new
-- entry and the mark it moves) instead of two. `signoff_chain` stays as a checkpoint,
-- moved by the first entry and by every 64th, so a log cut below it, or emptied, is still
-- caught. See store/chain.py.
ALTER TABLE signoff_events ADD COLUMN head INTEGER;
UPDATE signoff_events SET head = 1 WHERE seq = (SELECT seq FROM signoff_chain WHERE id = 1);
