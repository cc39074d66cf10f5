-- Baton schema 13: webhook triggers (core/triggers/). A trigger stores its plan snapshot, the
-- templates of its runs' inputs and how deliveries are verified: the source and the NAME of the
-- variable holding the secret, never the secret. trigger_deliveries is what became of recent
-- deliveries (started, duplicate, filtered, refused), the newest 200 per trigger; never a body,
-- a signature or a secret.
CREATE TABLE triggers (
  name TEXT PRIMARY KEY,
  source TEXT NOT NULL,
  secret_env TEXT NOT NULL,
  when_expr TEXT,
  inputs_json TEXT NOT NULL,
  plan_name TEXT NOT NULL,
  plan_json TEXT NOT NULL,
  plan_hash TEXT NOT NULL,
  workspace TEXT NOT NULL,
  propose INTEGER NOT NULL,
  labels_json TEXT NOT NULL,
  paused INTEGER NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE trigger_deliveries (
  id INTEGER PRIMARY KEY,
  trigger TEXT NOT NULL REFERENCES triggers (name) ON DELETE CASCADE,
  delivery_id TEXT,
  outcome TEXT NOT NULL,
  run_id TEXT,
  reason TEXT,
  received_at INTEGER NOT NULL
);
CREATE INDEX trigger_deliveries_by_trigger ON trigger_deliveries (trigger, id);
