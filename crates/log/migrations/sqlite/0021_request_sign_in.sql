-- What a request asks when a run waits for a person to sign in to a
-- connected server ({"server", "scope"}, as JSON): the run's view and
-- AG-UI's interrupt say so, not only the pause's event.
ALTER TABLE run_requests ADD COLUMN sign_in TEXT;
