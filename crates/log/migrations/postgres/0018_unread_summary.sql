-- What a thread list needs to say whether a thread is unread, kept on the
-- thread: the last envelope that makes a thread unread (a message or an
-- artifact; store/unread.rs), who wrote it, and the last one by anyone
-- else. A list probed each thread's envelopes instead, a descent of a
-- million-row index per thread, and on a log of a million envelopes took
-- 1.3 to 1.4 times as long as on one of a thousand (`cargo xtask bench
-- data`); now it reads one range of `threads_by_workspace`.
--
-- The columns are folded in beside the write path by src/unread.rs, from
-- the log, up to the checkpoint named `unread` in `follower_checkpoints`:
-- a list reads what came after the checkpoint from the log itself. Here
-- the log as it stands is folded at once, so an upgraded deployment's
-- lists do not read its whole log while the fold catches up.
ALTER TABLE threads ADD COLUMN said_seq BIGINT NOT NULL DEFAULT 0;
ALTER TABLE threads ADD COLUMN said_by TEXT NOT NULL DEFAULT '';
ALTER TABLE threads ADD COLUMN said_before BIGINT NOT NULL DEFAULT 0;
DROP INDEX threads_by_workspace;
CREATE INDEX threads_by_workspace ON threads (workspace, created_at, id, title, created_by, restricted, said_seq, said_by, said_before);
-- No commit is under way while the log is folded: each holds this lock
-- shared (store/envelopes.rs), and the last sequence number is then the
-- checkpoint.
SELECT pg_advisory_xact_lock(7809651272170300721);
UPDATE threads SET said_seq = COALESCE((SELECT MAX(e.seq) FROM envelopes e
    WHERE e.thread = threads.id AND e.type IN ('message_posted', 'artifact_created')), 0);
UPDATE threads SET said_by = COALESCE((SELECT e.actor FROM envelopes e WHERE e.seq = threads.said_seq), '');
UPDATE threads SET said_before = COALESCE((SELECT MAX(e.seq) FROM envelopes e
    WHERE e.thread = threads.id AND e.type IN ('message_posted', 'artifact_created') AND e.actor <> threads.said_by), 0);
INSERT INTO follower_checkpoints (name, seq, updated_at) SELECT 'unread', COALESCE(MAX(seq), 0), 0 FROM envelopes;
