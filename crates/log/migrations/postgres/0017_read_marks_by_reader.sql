-- A reader's marks side by side in the key, as on SQLite, where the key
-- is the table and a thread list read each mark by two scattered descents
-- (crates/log/migrations/sqlite/0017). Here the thread list reads a mark
-- from `read_marks_by_user` alone, as before; the two backends keep one
-- schema (tests/it/migrations.rs).
ALTER TABLE read_marks DROP CONSTRAINT read_marks_pkey;
ALTER TABLE read_marks ADD PRIMARY KEY (user_id, thread);
