-- Runs (L6): the read model of each agent turn and its deferred requests.
-- The run's steps themselves are envelopes, tagged with the run.
ALTER TABLE envelopes ADD COLUMN run TEXT;
CREATE INDEX envelopes_by_run ON envelopes (run, seq);

CREATE TABLE runs (
    tenant TEXT NOT NULL,
    id TEXT NOT NULL,
    workspace TEXT NOT NULL,
    thread TEXT NOT NULL,
    status TEXT NOT NULL,
    model TEXT NOT NULL,
    started_by TEXT NOT NULL,
    -- Whom the current segment acts for: the starter, then each answerer.
    acting_for TEXT NOT NULL,
    acting_role TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    PRIMARY KEY (tenant, id)
);
CREATE INDEX runs_by_thread ON runs (thread, status);
CREATE INDEX runs_by_status ON runs (status);

CREATE TABLE run_requests (
    tenant TEXT NOT NULL,
    run TEXT NOT NULL,
    tool_call_id TEXT NOT NULL,
    tool_name TEXT NOT NULL,
    args TEXT NOT NULL,
    answered_by TEXT,
    answer TEXT,
    PRIMARY KEY (tenant, run, tool_call_id)
);
