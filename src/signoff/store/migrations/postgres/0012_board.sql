-- The task board and the mailboxes (store.board). A task is one row with a version bumped
-- by every change, its owner, the hash of the owner's claim token and a lease; its
-- dependencies are rows of their own. Mail is append-only, numbered in commit order
-- (senders take turns on an advisory lock, so no reader ever acknowledges past a message
-- still being written); each agent's mailbox is read through its acknowledged position.
CREATE TABLE signoff_tasks (
    ord BIGSERIAL PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    title TEXT NOT NULL,
    state TEXT NOT NULL,
    version BIGINT NOT NULL,
    owner TEXT,
    token_hash TEXT,
    lease_expires_at DOUBLE PRECISION,
    lease_seconds DOUBLE PRECISION,
    created_by TEXT,
    created_at DOUBLE PRECISION NOT NULL,
    updated_at DOUBLE PRECISION NOT NULL,
    result TEXT
);
CREATE INDEX signoff_tasks_claimed ON signoff_tasks (lease_expires_at) WHERE state = 'claimed';
CREATE TABLE signoff_task_deps (
    task_id TEXT NOT NULL,
    depends_on TEXT NOT NULL,
    PRIMARY KEY (task_id, depends_on)
);
CREATE TABLE signoff_mail (
    seq BIGSERIAL PRIMARY KEY,
    sent_at DOUBLE PRECISION NOT NULL,
    sender TEXT NOT NULL,
    recipient TEXT,
    body TEXT NOT NULL
);
CREATE INDEX signoff_mail_recipient ON signoff_mail (recipient, seq);
CREATE TABLE signoff_mailboxes (
    agent TEXT PRIMARY KEY,
    position BIGINT NOT NULL
);
