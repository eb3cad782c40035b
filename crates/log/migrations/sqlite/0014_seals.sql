-- The log's seal (docs/SEAL.md): each envelope's place in its workspace's
-- hash chain, written just after its commit, in log order, by one sealer
-- at a time; and the chains' signed heads. Neither is the log: a copy
-- altered with them is caught by the signatures.
CREATE TABLE seals (
    tenant TEXT NOT NULL,
    -- Empty for the tenant's envelopes of no workspace.
    workspace TEXT NOT NULL,
    n BIGINT NOT NULL,
    seq BIGINT NOT NULL,
    envelope TEXT NOT NULL,
    leaf TEXT NOT NULL,
    head TEXT NOT NULL,
    PRIMARY KEY (tenant, workspace, n)
);
-- How far the sealer is (the highest seq), and an envelope's seal.
CREATE UNIQUE INDEX seals_by_seq ON seals (seq);
CREATE UNIQUE INDEX seals_by_envelope ON seals (envelope);

CREATE TABLE seal_checkpoints (
    tenant TEXT NOT NULL,
    workspace TEXT NOT NULL,
    n BIGINT NOT NULL,
    seq BIGINT NOT NULL,
    head TEXT NOT NULL,
    at_ms BIGINT NOT NULL,
    key_id TEXT NOT NULL,
    signature TEXT NOT NULL,
    PRIMARY KEY (tenant, workspace, n)
);
-- What the bridge publishes next: the checkpoints after its cursor (a seq).
CREATE UNIQUE INDEX seal_checkpoints_by_seq ON seal_checkpoints (seq);
