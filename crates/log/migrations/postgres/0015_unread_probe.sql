-- A thread's envelopes by sequence number, with what says whether one is
-- new to a reader (its type, and who wrote it): the unread probe of a
-- thread list (store/read_marks.rs) can then read the index alone. On
-- SQLite, read through to the table, each envelope it looked at cost a
-- descent of the log's rows, which in a large log lie each on a page of
-- their own: a workspace's thread list on a log of a million envelopes
-- took 1.2 to 1.4 times as long as on one of a thousand (`cargo xtask
-- bench data`). The same index here: the two backends keep one schema
-- (tests/it/migrations.rs). Built under a lock on the table's writes, as
-- every index a migration makes.
DROP INDEX envelopes_by_thread;
CREATE INDEX envelopes_by_thread ON envelopes (thread, seq, type, actor);
