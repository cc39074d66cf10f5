import type { FailureClass, ResultRef, StepUsage, Verification } from './failure.js';
import type { Plan } from './plan/types.js';

export const RUN_STATUSES = [
  'awaiting_approval',
  'running',
  'blocked',
  'succeeded',
  'failed',
  'cancelled',
] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];

export const STEP_STATUSES = [
  'pending',
  'ready',
  'running',
  'succeeded',
  'retry_wait',
  'waiting',
  'blocked',
  'skipped',
  'degraded',
  'cancelled',
] as const;
export type StepStatus = (typeof STEP_STATUSES)[number];

/** Steps in these states let their dependents start. */
export const SATISFIED_STEP_STATUSES: ReadonlySet<StepStatus> = new Set(['succeeded', 'skipped', 'degraded']);
/** Steps in these states never change again (unless a human retries a blocked one). */
export const FINAL_STEP_STATUSES: ReadonlySet<StepStatus> = new Set([
  'succeeded',
  'skipped',
  'degraded',
  'cancelled',
]);
/** Steps a worker may claim once `dueAt` has passed. */
export const DUE_STEP_STATUSES: ReadonlySet<StepStatus> = new Set(['ready', 'retry_wait']);
/**
 * Steps that something happens to once `dueAt` has passed: the claimable ones, and a `waiting` step
 * whose timeout has come (its `dueAt`; null: it waits with no timeout). What a cycle looks at.
 */
export const TIMED_STEP_STATUSES: ReadonlySet<StepStatus> = new Set(['ready', 'retry_wait', 'waiting']);
export const FINAL_RUN_STATUSES: ReadonlySet<RunStatus> = new Set(['succeeded', 'failed', 'cancelled']);

/** The materialized state of one step. Times are milliseconds since the epoch. */
export interface StepState {
  stepId: string;
  status: StepStatus;
  /** Number of attempts started so far; the current or last attempt's number. */
  attempt: number;
  /**
   * Attempts since the step was last (re)started by a human that count against `retry.maxAttempts`:
   * the running one, and every earlier one that did not end `interrupted`.
   */
  tries: number;
  /**
   * Attempts since the step was last (re)started by a human that ended `interrupted`: they count
   * against `retry.maxInterruptions` instead (absent: none).
   */
  interruptions?: number;
  /** When a `ready` or `retry_wait` step becomes due. */
  dueAt: number | null;
  leaseOwner: string | null;
  leaseExpiresAt: number | null;
  /** When the current or last attempt started. */
  startedAt: number | null;
  lastError: string | null;
  lastFailureClass: FailureClass | null;
  fingerprint: string | null;
  /** How many consecutive failures had `fingerprint`. */
  fingerprintRepeats: number;
  /** The step's result as stored JSON (`StepResult`), kept opaque here: the core never needs its content. */
  resultJson: string | null;
  blockedReason: string | null;
  updatedAt: number;
  /** Tokens and cost of all the step's attempts (absent: none reported). */
  usage?: StepUsage;
  /** When the step's first attempt started: its `budget.maxWallMs` counts from here. */
  firstStartedAt?: number | null;
  /** The step's own executor gave up: its attempts now run its `fallback`, and success is `degraded`. */
  onFallback?: boolean;
  /**
   * A wait step that waits (or waited, then timed out): what for, rendered when it started waiting:
   * its event's name, or its approval's prompt (core/waits.ts).
   */
  waitingFor?: string;
}

/**
 * A step that has not run: `ready` when `dueAt` is given (due then), else `pending`; the one place a
 * step state is made from nothing (a new run, a fan-out's items, a run's cleanup steps).
 */
export function freshStepState(stepId: string, dueAt: number | null, now: number): StepState {
  return {
    stepId,
    status: dueAt === null ? 'pending' : 'ready',
    attempt: 0,
    tries: 0,
    dueAt,
    leaseOwner: null,
    leaseExpiresAt: null,
    startedAt: null,
    lastError: null,
    lastFailureClass: null,
    fingerprint: null,
    fingerprintRepeats: 0,
    resultJson: null,
    blockedReason: null,
    updatedAt: now,
  };
}

/** What a successful step leaves for its successors. */
export interface StepResult {
  summary: string;
  outputs: { path: string; size: number; sha256: string }[];
  value?: unknown;
  /** Set when the full summary and value are in the artifact store; `summary` is then cut. */
  ref?: ResultRef;
  /** A fan-out's items that failed within `toleratedFailures`: their index and error. */
  failedItems?: { item: number; error: string }[];
  /** The step's `verify:` gate passed: how many checks it took. */
  verification?: Verification;
}

export interface RunState {
  id: string;
  status: RunStatus;
  plan: Plan;
  /** Attempts started in this run, all steps together (the `maxSteps` guardrail). */
  attemptsTotal: number;
  /** Tokens and cost reported by the run's attempts (the `maxTokens` / `maxCostUsd` guardrails). */
  usage?: StepUsage;
  blockedReason: string | null;
  createdAt: number;
  updatedAt: number;
  finishedAt: number | null;
  /** One state per plan step, in the plan's order (arrays copy fast: a transition copies them). */
  steps: readonly StepState[];
  /** The run's inputs, as a step's `when` reads them (absent: none). */
  inputs?: Readonly<Record<string, string>>;
}

interface PlanIndex {
  position: Map<string, number>;
  dependents: Map<string, string[]>;
  /** Whether any step is a fan-out's item (core/for-each.ts): a plan without is never settled as a group. */
  hasItems: boolean;
}

const planIndexes = new WeakMap<Plan, PlanIndex>();

/** Positions and dependents of a plan's steps, computed once per plan object. */
export function planIndex(plan: Plan): PlanIndex {
  let index = planIndexes.get(plan);
  if (!index) {
    index = { position: new Map(), dependents: new Map(), hasItems: false };
    for (const [i, step] of plan.steps.entries()) index.position.set(step.id, i);
    for (const step of plan.steps) {
      if (step.forEachItem) index.hasItems = true;
      for (const dep of step.dependsOn) {
        // Appended in place: copying the list per dependent is quadratic in a step's fan-out.
        const dependents = index.dependents.get(dep);
        if (dependents) dependents.push(step.id);
        else index.dependents.set(dep, [step.id]);
      }
    }
    planIndexes.set(plan, index);
  }
  return index;
}

/** The state of one step, or undefined for an id the plan does not have. */
export function stepOf(run: Pick<RunState, 'plan' | 'steps'>, stepId: string): StepState | undefined {
  const position = planIndex(run.plan).position.get(stepId);
  return position === undefined ? undefined : run.steps[position];
}

/**
 * A step waiting for its due time whose time has come: what a cycle acts on (a claim,
 * core/claim-rules.ts; a wait step starting to wait or timing out, core/waits.ts), and what the
 * stores' SQL says too (store/due-steps.ts, kept in step with this).
 */
export function isDueStep(step: Pick<StepState, 'status' | 'dueAt'>, now: number): boolean {
  return TIMED_STEP_STATUSES.has(step.status) && step.dueAt !== null && step.dueAt <= now;
}

/**
 * Whether the lease of a step's running attempt ran out by `now`: its worker died or stalled, and
 * whoever cycles next reclaims it (expireLease, core/transitions.ts). The stores' SQL says the
 * same (store/lease-rules.ts).
 */
export function leaseExpired(step: Pick<StepState, 'status' | 'leaseExpiresAt'>, now: number): boolean {
  return step.status === 'running' && step.leaseExpiresAt !== null && step.leaseExpiresAt <= now;
}

/** Whether a step still holds the lease of an attempt that is stopping (a rerun or a cancel): it may not start again yet. */
export function stoppingLease(
  step: Pick<StepState, 'status' | 'leaseOwner' | 'leaseExpiresAt'>,
  now: number,
): boolean {
  return step.status !== 'running' && step.leaseOwner !== null && (step.leaseExpiresAt ?? 0) > now;
}

/** What decides a run's status, counted over its steps (see deriveRunStatus in draft.ts). */
export interface StepTally {
  /** Steps not succeeded, skipped or degraded. */
  unsatisfied: number;
  /**
   * Steps running or due (ready, retry_wait): the run can still get further. A `waiting` step is
   * not counted: a run whose only work left waits stays running (nothing is blocked), but a blocked
   * step beside a waiting one blocks the run, so the blocked step is reported.
   */
  active: number;
  running: number;
  blocked: number;
}

/**
 * Tallies of step arrays, computed once per array: a transition derives its own from its base's and
 * the steps it changed, so settling a run's status does not walk every step of a long plan. Step
 * arrays are never changed once a run state holds them (a transition copies them).
 */
const tallies = new WeakMap<readonly StepState[], StepTally>();

/** Adds (sign 1) or removes (sign -1) one step in `status` to `tally`. */
export function countStep(tally: StepTally, status: StepStatus, sign: 1 | -1): void {
  if (!SATISFIED_STEP_STATUSES.has(status)) tally.unsatisfied += sign;
  if (status === 'running' || DUE_STEP_STATUSES.has(status)) tally.active += sign;
  if (status === 'running') tally.running += sign;
  if (status === 'blocked') tally.blocked += sign;
}

/** The tally of `steps`: counted the first time, remembered after. */
export function stepTally(steps: readonly StepState[]): StepTally {
  let tally = tallies.get(steps);
  if (!tally) {
    tally = { unsatisfied: 0, active: 0, running: 0, blocked: 0 };
    for (const step of steps) countStep(tally, step.status, 1);
    tallies.set(steps, tally);
  }
  return tally;
}

/** Remembers the tally of `steps`, known without counting (a draft's base tally and its changes). */
export function rememberTally(steps: readonly StepState[], tally: StepTally): void {
  tallies.set(steps, tally);
}

/** Forgets the tally of an array about to change in place (a draft's own copy). */
export function forgetTally(steps: readonly StepState[]): void {
  tallies.delete(steps);
}
