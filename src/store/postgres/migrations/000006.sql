-- Baton schema 6 (PostgreSQL): as SQLite schema 11. Schedules with their plan snapshot and rules;
-- `next_fire_at` is the next slot (null: paused or ended), so "is anything due" is one seek of
-- schedules_due, and a tick locks the due rows FOR UPDATE SKIP LOCKED: each slot is decided by
-- one transaction. schedule_slots is the slot history, keyed by (schedule, manual, slot_at).
CREATE TABLE schedules (
  name text COLLATE "C" PRIMARY KEY,
  plan_name text NOT NULL,
  plan_json text NOT NULL,
  plan_hash text NOT NULL,
  inputs_json text NOT NULL,
  workspace text NOT NULL,
  rules_json text NOT NULL,
  paused boolean NOT NULL DEFAULT false,
  cursor_at bigint NOT NULL,
  next_fire_at bigint,
  queued_slot_at bigint,
  last_run_id text COLLATE "C",
  created_at bigint NOT NULL,
  updated_at bigint NOT NULL
);
CREATE INDEX schedules_due ON schedules (next_fire_at) WHERE next_fire_at IS NOT NULL;
CREATE INDEX schedules_queued ON schedules (last_run_id) WHERE queued_slot_at IS NOT NULL;
CREATE TABLE schedule_slots (
  schedule text COLLATE "C" NOT NULL REFERENCES schedules (name) ON DELETE CASCADE,
  manual boolean NOT NULL,
  slot_at bigint NOT NULL,
  outcome text NOT NULL CHECK (outcome IN ('started', 'skipped', 'queued', 'missed', 'triggered')),
  run_id text COLLATE "C",
  reason text,
  slot_count integer NOT NULL,
  last_slot_at bigint NOT NULL,
  recorded_at bigint NOT NULL,
  PRIMARY KEY (schedule, manual, slot_at)
);
CREATE INDEX schedule_slots_by_run ON schedule_slots (run_id) WHERE run_id IS NOT NULL;
