-- Where each follower of the log (the bridge) has got to: the sequence
-- number of the last envelope it has handed on and had acknowledged.
CREATE TABLE follower_checkpoints (
    name TEXT PRIMARY KEY,
    seq BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);
