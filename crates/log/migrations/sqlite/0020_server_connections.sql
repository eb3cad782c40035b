-- A person's sign-in to a connected MCP server (docs/MCP.md, "Signing in
-- to a server"): what its authorization server gave (tokens, the client
-- registered there), sealed under a key derived from the deployment's
-- secret and bound to the person and the server; used for that person
-- alone, dropped when they are signed out everywhere.
CREATE TABLE server_connections (
    tenant TEXT NOT NULL,
    user_id TEXT NOT NULL,
    server TEXT NOT NULL,
    sealed TEXT NOT NULL,
    connected_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    PRIMARY KEY (tenant, user_id, server)
);

-- A sign-in to a server begun and not yet back from its authorization
-- server (the PKCE verifier among it): sealed too, used once.
CREATE TABLE server_sign_ins (
    state TEXT PRIMARY KEY,
    tenant TEXT NOT NULL,
    user_id TEXT NOT NULL,
    server TEXT NOT NULL,
    sealed TEXT NOT NULL,
    expires_at BIGINT NOT NULL
);
CREATE INDEX server_sign_ins_by_expiry ON server_sign_ins (expires_at);
CREATE INDEX server_sign_ins_by_person ON server_sign_ins (tenant, user_id);
