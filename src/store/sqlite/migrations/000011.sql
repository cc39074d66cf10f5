-- Baton schema 11: schedules (core/schedule/). A schedule stores its plan snapshot, inputs and
-- workspace (the file may change or vanish later), its rules, and where its ticks are: every slot
-- at or before `cursor_at` is decided; `next_fire_at` is the next slot (null: paused or ended), so
-- "is anything due" is one seek of schedules_due. `queued_slot_at` is a slot waiting for
-- `last_run_id` to end (overlap queue). schedule_slots is the history: one row per slot decided
-- (a started run, skipped with the reason, queued, missed; a missed row may stand for a range) and
-- per manual trigger; keyed by (schedule, manual, slot_at), so a slot is recorded once.
CREATE TABLE schedules (
  name TEXT PRIMARY KEY,
  plan_name TEXT NOT NULL,
  plan_json TEXT NOT NULL,
  plan_hash TEXT NOT NULL,
  inputs_json TEXT NOT NULL,
  workspace TEXT NOT NULL,
  rules_json TEXT NOT NULL,
  paused INTEGER NOT NULL DEFAULT 0,
  cursor_at INTEGER NOT NULL,
  next_fire_at INTEGER,
  queued_slot_at INTEGER,
  last_run_id TEXT,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX schedules_due ON schedules (next_fire_at) WHERE next_fire_at IS NOT NULL;
CREATE INDEX schedules_queued ON schedules (last_run_id) WHERE queued_slot_at IS NOT NULL;
CREATE TABLE schedule_slots (
  schedule TEXT NOT NULL REFERENCES schedules (name) ON DELETE CASCADE,
  manual INTEGER NOT NULL,
  slot_at INTEGER NOT NULL,
  outcome TEXT NOT NULL,
  run_id TEXT,
  reason TEXT,
  slot_count INTEGER NOT NULL,
  last_slot_at INTEGER NOT NULL,
  recorded_at INTEGER NOT NULL,
  PRIMARY KEY (schedule, manual, slot_at)
) WITHOUT ROWID;
CREATE INDEX schedule_slots_by_run ON schedule_slots (run_id) WHERE run_id IS NOT NULL;
