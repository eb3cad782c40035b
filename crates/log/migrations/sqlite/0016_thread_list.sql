-- A workspace's thread list reads, for each thread, its row and the
-- reader's read mark. In a large log a workspace's threads lie among
-- everyone's, each row and each mark on a page of its own: the list read
-- a hundred pages of threads and a hundred of marks where a small log's
-- read three (`cargo xtask bench data`). Both now come from an index that
-- holds what the list shows, a workspace's threads side by side in the
-- order it shows them, and a reader's marks side by side.
DROP INDEX threads_by_workspace;
CREATE INDEX threads_by_workspace ON threads (workspace, created_at, id, title, created_by, restricted);
CREATE INDEX read_marks_by_user ON read_marks (user_id, thread, seq);
