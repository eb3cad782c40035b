-- One follower of a name publishes at a time: the holder of the lead, until
-- when (ms since the epoch). Another of that name waits, and takes the
-- lead once it has expired.
ALTER TABLE follower_checkpoints ADD COLUMN holder TEXT;
ALTER TABLE follower_checkpoints ADD COLUMN lead_until BIGINT;
