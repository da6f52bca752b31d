-- Every change to a request row bumps its version, even one made by hand in SQL: a store
-- that kept a copy of the row (see engine.py, _transition) then fails its compare-and-set
-- and reads the row again, so its checks always see what is stored. signoff's own updates
-- bump the version themselves, so the trigger only fires for the others.
CREATE FUNCTION signoff_bump_version() RETURNS TRIGGER
LANGUAGE plpgsql AS $$
BEGIN
    NEW.version := OLD.version + 1;
    RETURN NEW;
END
$$;
CREATE TRIGGER signoff_requests_version BEFORE UPDATE ON signoff_requests
    FOR EACH ROW WHEN (NEW.version = OLD.version) EXECUTE FUNCTION signoff_bump_version();
