-- Baton schema 1 (PostgreSQL): runs with their plan snapshot, materialized step state, attempts,
-- events, artifacts, effects. Same tables and meaning as the SQLite schema (its versions 1 and 2). Runs inside the migrating
-- transaction with search_path set to the Baton schema, so no name here is qualified.
-- Times are milliseconds since the epoch (bigint). Ids compare byte-wise (COLLATE "C"), as in SQLite.
-- Documents are `json`, which keeps their text (key order) exactly; attempt outputs are `jsonb`.

CREATE TABLE runs (
  id text COLLATE "C" PRIMARY KEY,
  plan_name text NOT NULL,
  plan_hash text NOT NULL,
  inputs json NOT NULL,
  workspace text NOT NULL,
  status text NOT NULL CHECK (
    status IN ('awaiting_approval', 'running', 'blocked', 'succeeded', 'failed', 'cancelled')
  ),
  attempts_total integer NOT NULL DEFAULT 0,
  blocked_reason text,
  created_at bigint NOT NULL,
  updated_at bigint NOT NULL,
  finished_at bigint,
  -- Bumped by every write to the run or its steps.
  version bigint NOT NULL DEFAULT 0,
  -- Kept with every write of the run, so that claims find due work from the run rows alone: the
  -- earliest due time of its ready and retry_wait steps (null: none), the plan's
  -- limits.concurrency and how many of its steps run now.
  next_due_at bigint,
  concurrency integer NOT NULL,
  running_count integer NOT NULL DEFAULT 0,
  -- Tokens and cost reported by the run's attempts (discarded ones too).
  input_tokens bigint NOT NULL DEFAULT 0,
  output_tokens bigint NOT NULL DEFAULT 0,
  cost_usd double precision NOT NULL DEFAULT 0
);
CREATE INDEX runs_by_status ON runs (status, created_at);
-- Due work, earliest first, of running runs only: a claim costs what is due, not what is stored.
CREATE INDEX runs_due ON runs (next_due_at, id) WHERE status = 'running';

-- The plan snapshot lives apart from the run row, which is rewritten at every transition.
CREATE TABLE run_plans (
  run_id text COLLATE "C" PRIMARY KEY REFERENCES runs (id) ON DELETE CASCADE,
  plan json NOT NULL
);

CREATE TABLE steps (
  run_id text COLLATE "C" NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  step_id text COLLATE "C" NOT NULL,
  position integer NOT NULL,
  -- The function of a `fn` step (claims filter on the functions a worker has); null for other kinds.
  fn text,
  status text NOT NULL CHECK (
    status IN ('pending', 'ready', 'running', 'succeeded', 'retry_wait', 'blocked', 'skipped', 'degraded', 'cancelled')
  ),
  attempt integer NOT NULL DEFAULT 0,
  tries integer NOT NULL DEFAULT 0,
  due_at bigint,
  lease_owner text,
  lease_expires_at bigint,
  started_at bigint,
  last_error text,
  last_failure_class text,
  fingerprint text,
  fingerprint_repeats integer NOT NULL DEFAULT 0,
  result json,
  blocked_reason text,
  pid integer,
  host text,
  updated_at bigint NOT NULL,
  -- Tokens and cost of all the step's attempts, when its first attempt started (step budgets),
  -- and whether its fallback runs instead of its own executor.
  input_tokens bigint NOT NULL DEFAULT 0,
  output_tokens bigint NOT NULL DEFAULT 0,
  cost_usd double precision NOT NULL DEFAULT 0,
  first_started_at bigint,
  on_fallback boolean NOT NULL DEFAULT false,
  PRIMARY KEY (run_id, step_id)
);
-- Live leases only, so looking for expired ones costs what runs now, whatever the history holds.
-- (Due steps are found through runs_due: a run's row carries its earliest due time.)
CREATE INDEX steps_leased ON steps (lease_expires_at) WHERE status = 'running';

CREATE TABLE attempts (
  run_id text COLLATE "C" NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  step_id text COLLATE "C" NOT NULL,
  attempt integer NOT NULL,
  owner text,
  started_at bigint,
  ended_at bigint,
  outcome text NOT NULL CHECK (outcome IN ('succeeded', 'failed', 'interrupted', 'discarded')),
  failure_class text,
  exit_code integer,
  fingerprint text,
  message text,
  summary text,
  log_path text,
  outputs jsonb NOT NULL DEFAULT '[]',
  -- Null when the attempt reported no usage.
  input_tokens bigint,
  output_tokens bigint,
  cost_usd double precision,
  PRIMARY KEY (run_id, step_id, attempt)
);

CREATE TABLE events (
  seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  run_id text COLLATE "C" NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  at bigint NOT NULL,
  type text NOT NULL,
  step_id text COLLATE "C",
  data json NOT NULL,
  -- Indexes of the plan's hooks this event calls (null: none); see hook_deliveries.
  hooks smallint[]
);
CREATE INDEX events_by_run ON events (run_id, seq);

-- Hook calls owed, written in the statement that writes their event: each is made once (leased
-- while in flight, retried with backoff), also after a crash or restart.
CREATE TABLE hook_deliveries (
  run_id text COLLATE "C" NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  event_seq bigint NOT NULL,
  hook smallint NOT NULL,
  state text NOT NULL CHECK (state IN ('pending', 'done', 'failed')),
  attempts integer NOT NULL DEFAULT 0,
  due_at bigint NOT NULL,
  lease_owner text,
  lease_expires_at bigint,
  last_error text,
  PRIMARY KEY (run_id, event_seq, hook)
);
CREATE INDEX hook_deliveries_due ON hook_deliveries (due_at) WHERE state = 'pending';

CREATE TABLE artifacts (
  run_id text COLLATE "C" NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  step_id text COLLATE "C" NOT NULL,
  attempt integer NOT NULL,
  path text NOT NULL,
  size bigint NOT NULL,
  sha256 text NOT NULL,
  PRIMARY KEY (run_id, step_id, attempt, path)
);

-- Recorded effects: an intent written before a side effect, its result after (exactly-once effects).
CREATE TABLE effects (
  run_id text COLLATE "C" NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  step_id text COLLATE "C" NOT NULL,
  key text COLLATE "C" NOT NULL,
  state text NOT NULL CHECK (state IN ('intent', 'done')),
  result json,
  created_at bigint NOT NULL,
  completed_at bigint,
  PRIMARY KEY (run_id, step_id, key)
);
