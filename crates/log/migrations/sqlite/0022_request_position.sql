-- Where a request stands among its pause's: the order the model made the
-- calls in, which the run's view, AG-UI's interrupt and the answers keep
-- (an id says nothing of it).
ALTER TABLE run_requests ADD COLUMN position INTEGER NOT NULL DEFAULT 0;
