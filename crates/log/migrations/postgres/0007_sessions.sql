-- Protocol sessions that replicas share: a session opened on one replica
-- is found on another. `state` is the transport's handshake, opaque here;
-- `owner` is who opened it (tenant/user), the only one who may use it.
CREATE TABLE sessions (
    id TEXT PRIMARY KEY,
    owner TEXT,
    state TEXT,
    opened_at BIGINT NOT NULL
);
CREATE INDEX sessions_by_opened_at ON sessions (opened_at);
