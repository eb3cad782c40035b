-- A thread list reads the reader's mark on each of its threads. Keyed by
-- (thread, user_id), with its rows apart from that key, each mark cost two
-- descents, to the key and to the row, and in a large log every one of a
-- reader's marks lay on pages of its own: on a log of a million envelopes
-- a workspace's thread list took 1.3 to 1.4 times as long as on one of a
-- thousand (`cargo xtask bench data`; the lookups alone, through eight
-- connections in turn, 351 µs against 195 by the reader's marks side by
-- side). Now a reader's marks are the key's order and the table is that
-- key (WITHOUT ROWID): one descent each, onto the same few pages.
CREATE TABLE read_marks_by_reader (
    thread TEXT NOT NULL,
    user_id TEXT NOT NULL,
    seq BIGINT NOT NULL,
    PRIMARY KEY (user_id, thread)
) WITHOUT ROWID;
INSERT INTO read_marks_by_reader (thread, user_id, seq) SELECT thread, user_id, seq FROM read_marks;
DROP TABLE read_marks;
ALTER TABLE read_marks_by_reader RENAME TO read_marks;
-- PostgreSQL reads a mark from this index alone (the key holds no seq
-- there); the two backends keep one schema (tests/it/migrations.rs).
CREATE INDEX read_marks_by_user ON read_marks (user_id, thread, seq);
