-- The log: one envelope per committed command. `seq` comes from a sequence,
-- so concurrent writers never wait on one another; the horizon tracker
-- (src/horizon.rs) makes readers wait for an earlier sequence number whose
-- transaction has not committed yet.
CREATE TABLE envelopes (
    seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    tenant TEXT NOT NULL,
    workspace TEXT,
    thread TEXT,
    actor TEXT NOT NULL,
    at BIGINT NOT NULL,
    type TEXT NOT NULL,
    payload TEXT NOT NULL,
    traceparent TEXT
);
CREATE INDEX envelopes_by_thread ON envelopes (thread, seq);
CREATE INDEX envelopes_by_workspace ON envelopes (workspace, seq);
CREATE INDEX envelopes_by_type ON envelopes (type, seq);

CREATE TABLE workspaces (
    id TEXT PRIMARY KEY,
    tenant TEXT NOT NULL,
    name TEXT NOT NULL,
    created_by TEXT NOT NULL,
    created_at BIGINT NOT NULL
);
CREATE INDEX workspaces_by_tenant ON workspaces (tenant);

CREATE TABLE members (
    workspace TEXT NOT NULL,
    user_id TEXT NOT NULL,
    role TEXT NOT NULL,
    PRIMARY KEY (workspace, user_id)
);
CREATE INDEX members_by_user ON members (user_id);

CREATE TABLE threads (
    id TEXT PRIMARY KEY,
    workspace TEXT NOT NULL,
    title TEXT NOT NULL,
    created_by TEXT NOT NULL,
    created_at BIGINT NOT NULL
);
CREATE INDEX threads_by_workspace ON threads (workspace);

-- Artifact ids may be chosen by clients, so they are unique per tenant:
-- another tenant's id never conflicts with, or reveals, this one's.
CREATE TABLE artifacts (
    tenant TEXT NOT NULL,
    id TEXT NOT NULL,
    workspace TEXT NOT NULL,
    thread TEXT NOT NULL,
    kind TEXT NOT NULL,
    version BIGINT NOT NULL,
    data TEXT NOT NULL,
    digest TEXT NOT NULL,
    author TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    archived BIGINT NOT NULL DEFAULT 0,
    parent TEXT,
    PRIMARY KEY (tenant, id)
);
CREATE INDEX artifacts_by_thread ON artifacts (thread, kind);
CREATE INDEX artifacts_by_parent ON artifacts (tenant, parent);

CREATE TABLE artifact_versions (
    tenant TEXT NOT NULL,
    id TEXT NOT NULL,
    version BIGINT NOT NULL,
    data TEXT NOT NULL,
    digest TEXT NOT NULL,
    author TEXT NOT NULL,
    at BIGINT NOT NULL,
    PRIMARY KEY (tenant, id, version)
);

-- One row per level and key that is set; a missing row is `unset`.
CREATE TABLE switches (
    level TEXT NOT NULL,
    key TEXT NOT NULL,
    state TEXT NOT NULL,
    PRIMARY KEY (level, key)
);
