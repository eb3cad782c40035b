-- The tenant role of the person who started a run: a run resumed by
-- someone else's answer acts within what its starter may do.
ALTER TABLE runs ADD COLUMN started_role TEXT NOT NULL DEFAULT 'member';
UPDATE runs SET started_role = acting_role WHERE acting_for = started_by;
