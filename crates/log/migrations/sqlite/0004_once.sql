-- Keys that may be used once (a person's confirmation of an app's call):
-- the write that uses one inserts it in its own transaction, so a second
-- use is refused and writes nothing.
CREATE TABLE once_keys (
    tenant TEXT NOT NULL,
    key TEXT NOT NULL,
    at BIGINT NOT NULL,
    PRIMARY KEY (tenant, key)
);
