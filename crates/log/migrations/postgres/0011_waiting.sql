-- What waits for a person's answer (GET /v1/me/waiting), read without
-- reading any document: what an artifact asks while it asks, as its kind
-- says at each version (`ArtifactKind::asks`): `asks` is NULL when it asks
-- nothing, else whose answer ends it (`anyone`, `each`); its title; when it
-- stops taking answers (ms since the epoch). And whether its author was an
-- agent (who asked, as the envelope's actor says).
ALTER TABLE artifacts ADD COLUMN asks TEXT;
ALTER TABLE artifacts ADD COLUMN asks_title TEXT;
ALTER TABLE artifacts ADD COLUMN asks_until BIGINT;
ALTER TABLE artifacts ADD COLUMN author_agent BIGINT NOT NULL DEFAULT 0;

-- The artifacts that ask, per workspace, soonest deadline first; only
-- those (a small part of all artifacts) are in it.
CREATE INDEX artifacts_asking ON artifacts (workspace, asks_until) WHERE asks IS NOT NULL AND archived = 0;
-- Whether a person has answered: one probe, however many answers a form has.
CREATE INDEX artifacts_by_parent_author ON artifacts (tenant, parent, author);
-- A workspace's paused runs (their open requests wait for an answer).
CREATE INDEX runs_by_workspace ON runs (workspace, status);

-- The forms kept before this migration (lattice-ui's `form`, the one kind
-- that asked when it was written), as `FormKind::asks` reads them: open
-- unless `closed`; a `once` form (the default) until anyone answers, any
-- other until each person does; a `closes_at` that is no RFC 3339 date-time
-- closes nothing.
CREATE FUNCTION pg_temp.lattice_ms(t TEXT) RETURNS BIGINT AS $$
BEGIN
    IF t IS NULL OR t !~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt ][0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?([Zz]|[+-][0-9]{2}:[0-9]{2})$' THEN
        RETURN NULL;
    END IF;
    RETURN floor(EXTRACT(EPOCH FROM t::timestamptz) * 1000)::BIGINT;
EXCEPTION WHEN others THEN
    RETURN NULL;
END
$$ LANGUAGE plpgsql;

UPDATE artifacts SET
    asks = CASE WHEN COALESCE(data::jsonb ->> 'submissions', 'once') = 'once' THEN 'anyone' ELSE 'each' END,
    asks_title = data::jsonb ->> 'title',
    asks_until = pg_temp.lattice_ms(data::jsonb ->> 'closes_at')
WHERE kind = 'form' AND archived = 0 AND COALESCE(data::jsonb -> 'closed', 'false'::jsonb) <> 'true'::jsonb;

UPDATE artifacts a SET author_agent = 1
WHERE a.asks IS NOT NULL AND EXISTS (
    SELECT 1 FROM envelopes e
    WHERE e.thread = a.thread AND e.type = 'artifact_created' AND e.at = a.created_at
      AND e.actor::jsonb ->> 'kind' = 'agent' AND e.payload::jsonb ->> 'id' = a.id
);
