-- A tenant's directory (docs/IDENTITY.md): the people a SCIM client
-- provisions or a sign-in creates, and their groups. `user_id` is
-- lattice's id for the person, stable while `user_name` may change;
-- `user_name_key` is the name as compared (lowercase), unique in a tenant.
-- `role` is the tenant role their groups give, kept with every change of
-- them; `claimed_groups` the groups a provider's token named at their last
-- sign-in (JSON); `document` the SCIM resource as provisioned.
CREATE TABLE people (
    tenant TEXT NOT NULL,
    user_id TEXT NOT NULL,
    user_name TEXT NOT NULL,
    user_name_key TEXT NOT NULL,
    display_name TEXT,
    email TEXT,
    external_id TEXT,
    active BIGINT NOT NULL,
    role TEXT NOT NULL,
    claimed_groups TEXT NOT NULL,
    document TEXT,
    version BIGINT NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    PRIMARY KEY (tenant, user_id)
);
CREATE UNIQUE INDEX people_by_user_name ON people (tenant, user_name_key);

CREATE TABLE directory_groups (
    tenant TEXT NOT NULL,
    id TEXT NOT NULL,
    display_name TEXT NOT NULL,
    external_id TEXT,
    document TEXT NOT NULL,
    version BIGINT NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    PRIMARY KEY (tenant, id)
);

CREATE TABLE group_members (
    tenant TEXT NOT NULL,
    group_id TEXT NOT NULL,
    user_id TEXT NOT NULL,
    PRIMARY KEY (tenant, group_id, user_id)
);
CREATE INDEX group_members_by_user ON group_members (tenant, user_id);

-- A person's sign-in through a provider: the session its short-lived
-- tokens name (`sid`), renewed while they are active, ended by a sign-out
-- here or at the provider. `handoff` is the digest of the one-time code the
-- browser trades for its first token, with the digest of the secret the
-- page that began the sign-in kept (`binding`).
CREATE TABLE sign_ins (
    id TEXT PRIMARY KEY,
    tenant TEXT NOT NULL,
    user_id TEXT NOT NULL,
    provider TEXT NOT NULL,
    subject TEXT NOT NULL,
    provider_sid TEXT,
    created_at BIGINT NOT NULL,
    renewed_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL,
    ended_at BIGINT,
    handoff TEXT,
    handoff_until BIGINT,
    binding TEXT
);
CREATE UNIQUE INDEX sign_ins_by_handoff ON sign_ins (handoff);
CREATE INDEX sign_ins_by_subject ON sign_ins (provider, subject);
CREATE INDEX sign_ins_by_person ON sign_ins (tenant, user_id);

-- A sign-in begun and not yet back from the provider: what the browser
-- must not hold (the PKCE verifier, the nonce), used once.
CREATE TABLE sign_in_attempts (
    state TEXT PRIMARY KEY,
    provider TEXT NOT NULL,
    nonce TEXT NOT NULL,
    verifier TEXT NOT NULL,
    binding TEXT,
    expires_at BIGINT NOT NULL
);
CREATE INDEX sign_in_attempts_by_expiry ON sign_in_attempts (expires_at);

-- API keys for agents and the tokens of SCIM clients: their digests,
-- never themselves. A key's id is its agent's user id.
CREATE TABLE credentials (
    id TEXT PRIMARY KEY,
    tenant TEXT NOT NULL,
    kind TEXT NOT NULL,
    name TEXT NOT NULL,
    scope TEXT NOT NULL,
    digest TEXT NOT NULL,
    created_by TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    expires_at BIGINT,
    last_used_at BIGINT,
    revoked_at BIGINT
);
CREATE UNIQUE INDEX credentials_by_digest ON credentials (digest);
CREATE INDEX credentials_by_tenant ON credentials (tenant, kind);
