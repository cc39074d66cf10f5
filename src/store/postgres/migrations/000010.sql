-- Baton schema 10: webhook triggers (core/triggers/). A trigger stores its plan snapshot, the
-- templates of its runs' inputs and how deliveries are verified: the source and the NAME of the
-- variable holding the secret, never the secret. trigger_deliveries is what became of recent
-- deliveries (started, duplicate, filtered, refused), the newest 200 per trigger; never a body,
-- a signature or a secret.
CREATE TABLE triggers (
  name text COLLATE "C" PRIMARY KEY,
  source text NOT NULL,
  secret_env text NOT NULL,
  when_expr text,
  inputs_json text NOT NULL,
  plan_name text NOT NULL,
  plan_json text NOT NULL,
  plan_hash text NOT NULL,
  workspace text NOT NULL,
  propose boolean NOT NULL,
  labels_json text NOT NULL,
  paused boolean NOT NULL,
  created_at bigint NOT NULL,
  updated_at bigint NOT NULL
);
CREATE TABLE trigger_deliveries (
  id bigserial PRIMARY KEY,
  trigger text COLLATE "C" NOT NULL REFERENCES triggers (name) ON DELETE CASCADE,
  delivery_id text,
  outcome text NOT NULL CHECK (outcome IN ('started', 'duplicate', 'filtered', 'refused')),
  run_id text COLLATE "C",
  reason text,
  received_at bigint NOT NULL
);
CREATE INDEX trigger_deliveries_by_trigger ON trigger_deliveries (trigger, id);
