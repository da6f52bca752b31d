-- A request's notification deliveries, found by request at any age (the request page used
-- to scan only the last 2,000 events). Partial: only the notifier's own events are indexed,
-- so the hot path (every other append) pays nothing. Queries repeat the condition word for
-- word (sql.DELIVERY_TERM) so that the planner can use the index.
CREATE INDEX signoff_events_deliveries ON signoff_events (request_id)
    WHERE kind IN ('notify.delivered', 'notify.failed');
