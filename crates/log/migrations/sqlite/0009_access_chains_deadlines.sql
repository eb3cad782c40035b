-- Who sees a thread: a restricted thread only its members (and the
-- workspace's admins); any thread also the people listed on it from
-- outside the workspace.
ALTER TABLE threads ADD COLUMN restricted BIGINT NOT NULL DEFAULT 0;
CREATE TABLE thread_members (
    thread TEXT NOT NULL,
    user_id TEXT NOT NULL,
    role TEXT NOT NULL,
    PRIMARY KEY (thread, user_id)
);
CREATE INDEX thread_members_by_user ON thread_members (user_id);

-- The chain of the event a rule started a run for; what the run creates
-- keeps it, so an answer to it joins the chain.
ALTER TABLE runs ADD COLUMN chain TEXT;
ALTER TABLE artifacts ADD COLUMN chain TEXT;

-- A request's deadline (ms since the epoch): the deadline scheduler
-- answers `expired` once it passes.
ALTER TABLE run_requests ADD COLUMN expires_at BIGINT;
CREATE INDEX run_requests_by_deadline ON run_requests (answered_by, expires_at);
