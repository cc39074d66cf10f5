-- Baton schema 5: attempts ended `interrupted` (a dead worker, an expired lease) have a budget of
-- their own (retry.maxInterruptions) and no longer spend the step's tries.
ALTER TABLE steps ADD COLUMN interruptions INTEGER NOT NULL DEFAULT 0;
