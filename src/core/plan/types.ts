import type { DeclarableClass } from '../declared-failure.js';
import type { HookFormat } from '../hook-format.js';
/**
 * The normalized plan: what the rest of Baton works with once a plan file (or a plan built in
 * code) has been validated, defaults applied and cross-references checked. Every field is
 * filled in; durations are milliseconds.
 */

/**
 * How the prompt reaches an agent CLI:
 * - `arg`: appended as the last argv element (default);
 * - `placeholder`: replaces the argv element `"{prompt}"`, which must appear exactly once;
 * - `stdin`: written to the child's standard input.
 */
export type PromptVia = 'arg' | 'placeholder' | 'stdin';

/** The agent CLIs Baton knows (see executors/agent-profiles), and `generic` for any other program. */
export const AGENT_PROFILE_NAMES = [
  'claude',
  'codex',
  'gemini',
  'openclaw',
  'opencode',
  'aider',
  'generic',
] as const;

export type AgentProfileName = (typeof AGENT_PROFILE_NAMES)[number];

/** An agent CLI invocation: argv (never a shell string) and how the prompt is passed. */
/** The name of an environment variable (`urlEnv`, `apiKeyEnv`, `agent.env`). */
export const ENV_NAME_PATTERN = /^[A-Za-z_][A-Za-z0-9_]*$/;

export interface AgentSpec {
  command: string[];
  promptVia: PromptVia;
  /** How Baton reads the CLI's output; undefined: chosen from the program's name. */
  profile?: AgentProfileName;
  /**
   * Whether Baton caps the CLI's own retries to one (the default), so that Baton's backoff, budgets
   * and no-progress detection decide; false leaves the CLI's own retry settings alone.
   */
  capRetries?: boolean;
  /** Which variables of Baton's environment the agent gets (see core/child-env.ts); undefined: the default policy. */
  env?: AgentEnvSpec;
  /**
   * `agent.stallTimeoutMs`: how long the agent may print nothing before its attempt is stopped as
   * stalled (undefined: DEFAULT_STALL_TIMEOUT_MS; 0: never).
   */
  stallTimeoutMs?: number;
  /** What the agent's exit codes mean (`agent.exitCodes`): an exit listed ends the attempt with that class. */
  exitCodes?: Readonly<Record<string, DeclarableClass>>;
  /**
   * `agent.resume`: `never` starts every attempt in a fresh session of the CLI; absent (`on-retry`,
   * the default, left out so that plans without it keep their hash): a retry continues the session
   * of the attempt before, where the CLI's profile knows how (executors/agent-session.ts).
   */
  resume?: 'never';
  /**
   * `agent.approve`: the tool calls of the running agent a person approves first (with
   * `approveTimeout` and `onTimeout`); absent: none asked, and the key is left out so that plans
   * without it keep their hash.
   */
  approve?: ToolApprovalSpec;
}

/** One rule of `agent.approve`: a tool, and optionally which of its calls. */
export interface ToolApprovalRule {
  /** The CLI's own name of the tool, e.g. Bash, Write. */
  tool: string;
  /** A glob (`*` any text, `?` one character) over the command a shell tool runs. */
  match?: string;
  /** A glob over the path a file tool writes, relative to the workspace. */
  path?: string;
}

export interface ToolApprovalSpec {
  rules: ToolApprovalRule[];
  /** How long a call waits for a person; then `onTimeout` decides. */
  timeoutMs: number;
  onTimeout: 'deny';
}

/** The default `agent.approveTimeout`. */
export const DEFAULT_APPROVE_TIMEOUT_MS = 3_600_000;

/** `agent.env`: the agent's environment as a policy. */
export interface AgentEnvSpec {
  /** Only these variables (and the baseline: PATH, HOME, …) are passed; undefined: all but Baton's secrets. */
  pass?: string[];
  /** Literal values set for the agent; never a variable that makes programs load code. */
  set?: Record<string, string>;
}

/**
 * Where an agent step's processes run: `none` (as Baton itself, the default) or `workspace`
 * (under bubblewrap: the workspace and the CLI's own config folders writable, a private /tmp, the
 * rest of the filesystem read-only, the Baton home and database hidden; see executors/sandbox.ts).
 */
export const SANDBOX_MODES = ['none', 'workspace'] as const;

export type SandboxMode = (typeof SANDBOX_MODES)[number];

/** Exponential backoff between attempts of one step. */
export interface RetryPolicy {
  /** Attempts in total, the first one included (1..100). */
  maxAttempts: number;
  /** Delay before the second attempt, in ms (<= maxDelayMs). */
  initialDelayMs: number;
  /** Multiplier applied to the delay after each failed attempt (>= 1). */
  factor: number;
  /** Upper bound of any single delay, in ms. */
  maxDelayMs: number;
  /**
   * Attempts ended `interrupted` (a dead worker, an expired lease, an orphan found at recovery)
   * allowed before the step is blocked (0..1000). They do not spend `maxAttempts`: the step was
   * not at fault. Absent in snapshots stored before it existed: DEFAULT_RETRY's.
   */
  maxInterruptions: number;
}

/** A provider and model a model step sends to. */
export interface ModelTargetSpec {
  provider: 'openai' | 'anthropic';
  model: string;
  baseUrl?: string;
  /** The environment variable holding the API key; the key itself is never stored. */
  apiKeyEnv?: string;
  /** Context window, output limit and tool support over the built-in table. */
  capabilities?: { contextWindow?: number; maxOutputTokens?: number; supportsTools?: boolean };
  /** US dollars per million tokens, over the built-in price table. */
  price?: { inputPerMTok: number; outputPerMTok: number };
}

/** A model step: one prompt through the recovery harness, with optional tools. */
export interface ModelStepSpec extends ModelTargetSpec {
  system?: string;
  /** With `{{...}}` references still unrendered. */
  prompt: string;
  tools: string[];
  maxOutputTokens: number;
  maxTurns: number;
  stream: boolean;
  /**
   * With `stream`: the longest a streamed response may send no event before its request is stopped
   * as stalled. Absent: no such watch (also for `0`, so that plans without it keep their hash).
   */
  stallTimeoutMs?: number;
  requestTimeoutMs: number;
  fallback?: ModelTargetSpec;
}

export type SideEffect = 'none' | 'idempotent' | 'unsafe';

/** The model that grades a rubric: where to call it, and the bounds of its one call. */
export interface VerifyModelSpec extends ModelTargetSpec {
  maxOutputTokens: number;
  requestTimeoutMs: number;
}

/**
 * A step's verification gate: a trusted program that must exit 0 in the workspace, a rubric a
 * model grades the outputs against, or both (the program first).
 */
export interface VerifySpec {
  /** Argv of a trusted program (never a shell), run in the workspace. */
  command?: string[];
  /** Of the program, in ms. */
  timeoutMs: number;
  /** A file in the run workspace holding the criteria, one per line or paragraph (with `model`). */
  rubric?: string;
  model?: VerifyModelSpec;
  /** Checks that may fail before the step is blocked; absent: the step's `retry.maxAttempts`. */
  maxIterations?: number;
}

/** The default `verify.timeoutMs`: a test suite may take a while. */
export const DEFAULT_VERIFY_TIMEOUT_MS = 10 * 60_000;

/**
 * Another executor for a step that could not be done: run when its retries are used up (or it
 * is blocked by its budget). A step finished by its fallback ends `degraded` and the run goes on.
 */
export interface FallbackSpec {
  kind: 'agent' | 'fn' | 'model';
  instruction?: string;
  agent?: AgentSpec;
  fn?: string;
  args?: unknown;
  model?: ModelStepSpec;
}

export interface PlanStep {
  /** Unique within the plan, `[A-Za-z0-9_-]{1,64}`. */
  id: string;
  /** Human title; defaults to the id. */
  title: string;
  /**
   * `agent`: an instruction run by an agent CLI; `fn`: a registered TypeScript function; `model`: a
   * model call; `wait`: no body, it waits for a person or an event (`wait`).
   */
  kind: 'agent' | 'fn' | 'model' | 'wait' | 'plan';
  /** Kind `agent`: the prompt, with `{{...}}` references still unrendered. */
  instruction?: string;
  /** Kind `fn`: the registered function name. */
  fn?: string;
  /** Kind `fn`: any JSON value, passed to the function. */
  args?: unknown;
  /** Kind `model`: the call, with defaults applied. */
  model?: ModelStepSpec;
  /** Kind `agent`: from the step or from `defaults.agent`; undefined when neither sets it. */
  agent?: AgentSpec;
  /** Kind `wait`: what it waits for (core/waits.ts). */
  wait?: WaitSpec;
  /** Kind `plan`: the plan its child run runs (core/sub-plans.ts). */
  subPlan?: SubPlanSpec;
  /** Ids of steps that must succeed first (a DAG, checked). */
  dependsOn: string[];
  /**
   * A CEL condition over `inputs` and `steps.<id>.result` / `.status` of its dependencies, decided
   * when the step is due (core/when-condition.ts); false skips it. Absent: the step always runs.
   */
  when?: string;
  /** Paths relative to the run workspace that must exist for the step to count as done. */
  requiredOutputs: string[];
  /**
   * Kind `agent`: a JSON file relative to the run workspace that the agent writes; once it exits,
   * the file's value is the step's result `value` (see executors/result-file.ts). Absent: none,
   * and the key is left out so that plans without it keep their hash.
   */
  resultFile?: string;
  /** Kind `agent`, with `resultFile`: the JSON Schema (draft-07) the result file must match. */
  resultSchema?: Record<string, unknown>;
  /**
   * What repeating the step would do: `none` (safe), `idempotent` (harmless), `unsafe` (an attempt
   * interrupted mid-way is an unknown outcome, blocked for a human instead of retried).
   */
  sideEffect: SideEffect;
  /** Limits of this step across its attempts; reaching one blocks the step (class `budget`). */
  budget?: Budget;
  /**
   * The flow-control key its attempts count against (`baton flow set <key>`); unset: the executor's
   * own key (see core/flow.ts `flowKeyOf`). Its fallback counts against the fallback's executor.
   */
  flowKey?: string;
  fallback?: FallbackSpec;
  /**
   * `workspace`: its agent (and an agent fallback) runs confined (see SandboxMode); from the step,
   * else `defaults.sandbox`. Absent: not confined (`none`), and the key is left out so that plans
   * without it keep their hash.
   */
  sandbox?: 'workspace';
  /**
   * Workspace checkpoints (`checkpoint:` of the step, else of `defaults`), agent steps only: the
   * patterns left out, `.git/` and `node_modules/` first. Absent: none (the key is left out so
   * that plans without it keep their hash).
   */
  checkpoint?: { exclude: string[] };
  /** In a shadow run, what this step (if it has a side effect) passes on instead of running. */
  shadowResult?: unknown;
  /**
   * Agent steps: the check an attempt must pass once the agent exited 0 and its outputs and schema
   * passed (executors/verify-gate.ts). Absent: none, and the key is left out so that plans without
   * it keep their hash.
   */
  verify?: VerifySpec;
  retry: RetryPolicy;
  /** Per-attempt timeout in ms (>= 1). */
  timeoutMs: number;
  /**
   * A function step: the longest it may go without `ctx.heartbeat()` (from the attempt's start)
   * before its attempt is stopped as stalled. Absent: no such watch (also for `0`, so that plans
   * without it keep their hash).
   */
  heartbeatTimeoutMs?: number;
  /** Durable delay before the step's first attempt, in ms. */
  delayBeforeMs: number;
  /**
   * The step's first attempt is not due before this instant: an ISO 8601 date-time with an offset,
   * or a template rendered when the step becomes ready (core/not-before.ts). The later of this and
   * `delayBeforeMs` wins.
   */
  notBefore?: string;
  /** Claim priority, 0 to 9, higher first (core/priority.ts); absent: the run's. */
  priority?: number;
  /**
   * Keyed flow control (`flow:`): `key` is a template rendered per run and item (its flow key);
   * `concurrency` and `rate` the limit of every key it renders to, unless an operator set one.
   */
  flow?: StepFlow;
  /** The step runs once per element of a list (core/for-each.ts): it is a group of item steps. */
  forEach?: ForEachSpec;
  /** Set on an item step, which a group's expansion appended to the run's plan snapshot. */
  forEachItem?: ForEachItem;
  /**
   * `compensate:`: what undoes this step once it completed, run (in reverse order, once) when the
   * run is cancelled with compensation or given up under `onFailure: compensate` (core/cleanup.ts).
   */
  compensate?: FallbackSpec;
  /** Set on a cleanup step (a compensation or a `finally:` step), appended when the run ended. */
  cleanup?: CleanupMark;
}

/**
 * A step that runs another plan (`plan: { path | name, inputs }`): each attempt waits on one child
 * run of that plan, created once (core/sub-plans.ts); the step's result is the child's output.
 */
export interface SubPlanSpec {
  /** A plan file, as written, relative to the plan file's folder (one of `path` and `name`). */
  path?: string;
  /**
   * A plan Baton already knows, by its name: a workflow the program registered, a schedule's plan,
   * else the plan of the newest run of that name (runtime/known-plans.ts), found when the run starts.
   */
  name?: string;
  /** The child's inputs: templates over this run's inputs, its dependencies' results and `{{item}}`. */
  inputs: Record<string, string>;
  /** The child plan, read and validated when the plan file was loaded or the run started (absent: not yet). */
  plan?: Plan;
}

/** The most plans one run may nest: a plan, its sub-plans, theirs, ... */
export const MAX_PLAN_NESTING = 5;

/** The statuses a run ends in, and that cleanup steps see as `{{run.status}}`. */
export type EndStatus = 'succeeded' | 'failed' | 'cancelled';

/** What a cleanup step is: which step it compensates (none: a `finally:` step), and how the run ended. */
export interface CleanupMark {
  runStatus: EndStatus;
  compensates?: string;
  /** A compensation of a fan-out's item: the item, for `{{<as>}}` in its texts. */
  item?: { as: string; value: unknown };
}

/** A run that ended and runs its cleanup steps first: it takes `status` once they are all done. */
export interface RunClosing {
  status: EndStatus;
  /** Why the run failed (`onFailure: compensate`): the blocked steps' reasons. */
  reason?: string;
  /** Position in the plan's steps of the first cleanup step; the cleanup steps are the rest. */
  from: number;
}

/** The most items one `forEach` may expand into. */
export const MAX_FOR_EACH_ITEMS = 10_000;

export interface ForEachSpec {
  /** A CEL expression over `inputs` and `steps.<dep>.result` that gives a list. */
  items: string;
  /** The item's name in templates (`{{item}}`). */
  as: string;
  maxItems: number;
  /** The most items running at once; absent: no cap of its own. */
  concurrency?: number;
  /** Items that may end blocked with the group still succeeding: a count, or a percentage ("10%"). */
  toleratedFailures: number | string;
}

/** What an item step knows of its group. */
export interface ForEachItem {
  group: string;
  index: number;
  /** The element of the list, as JSON (the fn step's `ctx.item`). */
  value: unknown;
  /**
   * The item's name in templates: the step's texts keep their `{{<as>}}` references, filled with
   * `value` in the same pass as every other reference when the step runs, so an item's text is never
   * read as a template. Absent on item steps stored before it existed, whose texts were filled when
   * they were expanded.
   */
  as?: string;
}

/** What a wait step's timeout does: block it for a human, skip it, or count as a rejection. */
export type WaitTimeoutAction = 'block' | 'skip' | 'reject';

/**
 * A wait step: it holds no lease and no process while it waits for `baton approve`/`reject` (an
 * approval) or `baton send <event>` (an event). Texts keep their `{{...}}` unrendered.
 */
export interface WaitSpec {
  for: 'approval' | 'event';
  /** Kind approval: what the person is asked (templated). */
  prompt?: string;
  /** Kind event: the event's name (templated). */
  event?: string;
  /** The timeout as a duration from when the step starts waiting, in ms. */
  timeoutMs?: number;
  /** The timeout as an absolute time, ms since the epoch (from an ISO 8601 date-time with offset). */
  deadlineAt?: number;
  /** What the timeout does; default `block`. */
  onTimeout: WaitTimeoutAction;
  /** Kind event: a JSON Schema the payload must match (checked by `send`, before anything is stored). */
  schema?: Record<string, unknown>;
}

/** A run input; without `default` it is required when a run starts. */
export interface PlanInput {
  default?: string;
  description?: string;
}

/** Limits that stop a run or a step when reached (class `budget`). Absent: no limit. */
export interface Budget {
  /** Wall-clock time in ms: from the run's creation, or from a step's first attempt. */
  maxWallMs?: number;
  /** Input + output tokens reported by model steps and agent CLIs. */
  maxTokens?: number;
  /** US dollars, from reported costs or the price table. */
  maxCostUsd?: number;
}

export interface PlanLimits extends Budget {
  /** Step attempts per run, all steps together (1..100000). */
  maxSteps: number;
  /** The same failure fingerprint this many times in a row blocks the step (>= 2). */
  noProgressAfter: number;
  /** Steps of one run that may execute in parallel (1..256). */
  concurrency: number;
}

/** What a hook is called on: a run blocked, an attempt failed, a run succeeded, a budget reached. */
export type HookTrigger = 'blocked' | 'failed' | 'succeeded' | 'budget' | 'waiting' | 'cancelled';

/**
 * Called once per matching event (also after a restart): a command (argv, no shell, the event as
 * JSON on stdin) or a URL (POST JSON), retried on failure with backoff.
 */
export interface HookSpec {
  on: HookTrigger[];
  command?: string[];
  url?: string;
  /** An environment variable holding the URL, read at each call (a token in the URL is never stored). */
  urlEnv?: string;
  /** The body's shape (see core/hook-format.ts); absent: json, Baton's own payload. */
  format?: HookFormat;
  /** Per call, in ms. Default 10,000. */
  timeoutMs: number;
  /** Calls after the first one fails. Default 3. */
  retries: number;
}

/** A step's `flow:`, normalised: the key template and the limit each rendered key gets. */
export interface StepFlow {
  key: string;
  concurrency?: number;
  rate?: { count: number; windowMs: number };
}

export interface Plan {
  version: 1;
  name: string;
  description?: string;
  /** As written in the plan, relative to the plan file's folder; resolved at the edge. */
  workspace?: string;
  inputs: Record<string, PlanInput>;
  limits: PlanLimits;
  /** Notifications on blocked, failed, succeeded and budget events. */
  hooks?: HookSpec[];
  /**
   * A shadow run: steps with a side effect are not executed; their rendered inputs are recorded
   * (`step.would_execute`) and their `shadowResult` (or null) flows on.
   */
  shadow?: boolean;
  /**
   * How a shadow run decides a wait for approval (`shadow: { approvals }`): absent, approved at once
   * by `shadow` (nobody approves a send that will not happen); `reject`, rejected by `shadow`;
   * `wait`, it waits for a person as a live run does.
   */
  shadowApprovals?: 'reject' | 'wait';
  /**
   * Set by `baton fork` on the new run's snapshot (never read from a plan file): the run and step it
   * was forked from (core/fork.ts).
   */
  forkedFrom?: { runId: string; stepId: string };
  /**
   * The run's claim priority, 0 to 9 (core/priority.ts): the plan's `priority`, or the one the run
   * was started with (`--priority`), kept in the snapshot. Absent: 0.
   */
  priority?: number;
  /** BATON_PRIORITY_AGING when the run started, kept in the snapshot when it is not the default. */
  priorityAgingMs?: number;
  /** In the order of the plan file. */
  steps: PlanStep[];
  /** `finally:`: steps run once when the run ends, in any state (core/cleanup.ts); absent: none. */
  finally?: PlanStep[];
  /**
   * `onFailure: compensate`: a step blocked for good gives the run up: the completed steps are
   * compensated, `finally:` runs, and the run ends `failed`. Absent: the run waits blocked for a person.
   */
  onFailure?: 'compensate';
  /** Set on the snapshot (never read from a plan file) once the run ended and runs its cleanup. */
  closing?: RunClosing;
  /**
   * `output:`: what a run of this plan gives the step that ran it as a sub-plan, a template over
   * its steps' results (`{{steps.report.result.url}}`); absent: its steps' results by id.
   */
  output?: string;
  /** Set on a child run's snapshot (never read from a plan file): the run and step that started it. */
  parent?: { runId: string; stepId: string };
}

/** Step ids and input names: `[A-Za-z0-9_-]{1,64}`, also safe inside `{{steps.<id>.summary}}`. */
export const STEP_ID_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;
/** Flow keys: 1-100 letters, digits and `._:@/-` (e.g. `claude`, `openai`, `fn:fetch`, `api/github`). */
export const FLOW_KEY_PATTERN = /^[A-Za-z0-9._:@/-]{1,100}$/;
/** Plan names: `[A-Za-z0-9._-]{1,100}`. */
export const PLAN_NAME_PATTERN = /^[A-Za-z0-9._-]{1,100}$/;
/** Refused as step ids and input names: they would reach object prototypes where ids are keys. */
export const RESERVED_NAMES: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);

// Frozen so that no caller can change the defaults of every later plan by accident.
export const DEFAULT_RETRY: RetryPolicy = Object.freeze({
  maxAttempts: 3,
  initialDelayMs: 1000,
  factor: 2,
  maxDelayMs: 300_000,
  maxInterruptions: 10,
});

export const DEFAULT_LIMITS: PlanLimits = Object.freeze({ maxSteps: 50, noProgressAfter: 3, concurrency: 4 });

/** One hour. */
export const DEFAULT_TIMEOUT_MS = 3_600_000;
/** An agent silent this long (no output, `agent.stallTimeoutMs`) is stopped and its attempt retried. */
export const DEFAULT_STALL_TIMEOUT_MS = 600_000;
