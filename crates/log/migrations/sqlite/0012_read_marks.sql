-- How far each person has read each thread (the sequence number of the
-- last envelope they had in view), so a thread with something new from
-- someone else is marked unread for them. Kept beside the log, not in it:
-- reading commands nothing and is not bridged.
CREATE TABLE read_marks (
    thread TEXT NOT NULL,
    user_id TEXT NOT NULL,
    seq BIGINT NOT NULL,
    PRIMARY KEY (thread, user_id)
);
