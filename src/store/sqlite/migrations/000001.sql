-- Baton schema 1: runs with their plan snapshot, materialized step state, attempts, events, artifacts.
CREATE TABLE baton_meta (
  key TEXT PRIMARY KEY,
  value TEXT NOT NULL
) WITHOUT ROWID;

CREATE TABLE runs (
  id TEXT PRIMARY KEY,
  plan_name TEXT NOT NULL,
  plan_hash TEXT NOT NULL,
  inputs_json TEXT NOT NULL,
  workspace TEXT NOT NULL,
  status TEXT NOT NULL,
  attempts_total INTEGER NOT NULL DEFAULT 0,
  blocked_reason TEXT,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  finished_at INTEGER,
  -- Bumped by every write to the run or its steps: lets a process reuse the steps it loaded last.
  version INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID;
CREATE INDEX runs_by_status ON runs (status, created_at);

-- The plan snapshot lives apart from the run row: the run row is rewritten at every transition,
-- and a large plan in it would be copied into the WAL each time.
CREATE TABLE run_plans (
  run_id TEXT PRIMARY KEY REFERENCES runs (id) ON DELETE CASCADE,
  plan_json TEXT NOT NULL
) WITHOUT ROWID;

CREATE TABLE steps (
  run_id TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  step_id TEXT NOT NULL,
  position INTEGER NOT NULL,
  status TEXT NOT NULL,
  attempt INTEGER NOT NULL DEFAULT 0,
  tries INTEGER NOT NULL DEFAULT 0,
  due_at INTEGER,
  lease_owner TEXT,
  lease_expires_at INTEGER,
  started_at INTEGER,
  last_error TEXT,
  last_failure_class TEXT,
  fingerprint TEXT,
  fingerprint_repeats INTEGER NOT NULL DEFAULT 0,
  result_json TEXT,
  blocked_reason TEXT,
  pid INTEGER,
  host TEXT,
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (run_id, step_id)
) WITHOUT ROWID;
-- Only due work and live leases are indexed, so claims stay fast whatever the history holds.
CREATE INDEX steps_due ON steps (due_at) WHERE status IN ('ready', 'retry_wait');
CREATE INDEX steps_leased ON steps (lease_expires_at) WHERE status = 'running';

CREATE TABLE attempts (
  run_id TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  step_id TEXT NOT NULL,
  attempt INTEGER NOT NULL,
  owner TEXT,
  started_at INTEGER,
  ended_at INTEGER,
  outcome TEXT NOT NULL,
  failure_class TEXT,
  exit_code INTEGER,
  fingerprint TEXT,
  message TEXT,
  summary TEXT,
  log_path TEXT,
  outputs_json TEXT NOT NULL DEFAULT '[]',
  PRIMARY KEY (run_id, step_id, attempt)
) WITHOUT ROWID;

CREATE TABLE events (
  seq INTEGER PRIMARY KEY,
  run_id TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  at INTEGER NOT NULL,
  type TEXT NOT NULL,
  step_id TEXT,
  data_json TEXT NOT NULL
);
CREATE INDEX events_by_run ON events (run_id, seq);

CREATE TABLE artifacts (
  run_id TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  step_id TEXT NOT NULL,
  attempt INTEGER NOT NULL,
  path TEXT NOT NULL,
  size INTEGER NOT NULL,
  sha256 TEXT NOT NULL,
  PRIMARY KEY (run_id, step_id, attempt, path)
) WITHOUT ROWID;
