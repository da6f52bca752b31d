-- Every change to a request row bumps its version, even one made by hand in SQL: a store
-- that kept a copy of the row (see engine.py, _transition) then fails its compare-and-set
-- and reads the row again, so its checks always see what is stored. signoff's own updates
-- bump the version themselves, so the trigger only fires for the others.
CREATE TRIGGER signoff_requests_version AFTER UPDATE ON signoff_requests
WHEN NEW.version = OLD.version
BEGIN
    UPDATE signoff_requests SET version = OLD.version + 1 WHERE ord = NEW.ord;
END;
