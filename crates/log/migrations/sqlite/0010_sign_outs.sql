-- "Sign out everywhere": when a person's tokens were last ended. A token
-- issued at or before `at` (ms since the epoch) is refused, on every
-- request and by every open stream.
CREATE TABLE sign_outs (
    tenant TEXT NOT NULL,
    user_id TEXT NOT NULL,
    at BIGINT NOT NULL,
    PRIMARY KEY (tenant, user_id)
);
