-- Files people attach to their answers (docs/FILES.md): the bytes in
-- chunks beside the log, never in it. The log holds only a reference
-- (id, name, type, size, sha256), so erasing a file's bytes leaves the log
-- whole: the row stays, with when and by whom it was erased.
CREATE TABLE files (
    tenant TEXT NOT NULL,
    id TEXT NOT NULL,
    workspace TEXT NOT NULL,
    thread TEXT NOT NULL,
    uploader TEXT NOT NULL,
    name TEXT NOT NULL,
    media_type TEXT NOT NULL,
    size BIGINT NOT NULL,
    sha256 TEXT NOT NULL,
    -- 0 while its bytes arrive; an upload cut off leaves a row to forget.
    complete BIGINT NOT NULL,
    created_at BIGINT NOT NULL,
    erased_at BIGINT,
    erased_by TEXT,
    PRIMARY KEY (tenant, id)
);
-- What a tenant holds (its quota), and the uploads to forget.
CREATE INDEX files_by_tenant ON files (tenant, complete);

CREATE TABLE file_chunks (
    tenant TEXT NOT NULL,
    file TEXT NOT NULL,
    n BIGINT NOT NULL,
    bytes BLOB NOT NULL,
    PRIMARY KEY (tenant, file, n)
);
