-- Which runner drives a running run, and until when (ms since the epoch):
-- one replica at a time, and another takes a run over once its lease has
-- expired. Coordination, not history: it is not in the log.
ALTER TABLE runs ADD COLUMN lease_holder TEXT;
ALTER TABLE runs ADD COLUMN lease_until BIGINT;
