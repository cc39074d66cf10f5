import type { Plan } from '../core/plan/types.js';
import { redactValue } from '../core/redact.js';
import { planSecretEnv } from '../core/run-secrets.js';
import { RunSecretsCache } from '../engine/run-secrets-cache.js';
import { NO_STEPS, type Store } from '../store/store.js';

/**
 * The masking boundary: a store whose every answer comes back with this process's secrets masked,
 * each run's and each schedule's with the secret variables of its own plan too (a hook's `urlEnv`,
 * a model's `apiKeyEnv`; see runSecrets), whatever was recorded before masking or by a process that
 * lacked a secret. Every door (the CLI, the API, the console, the MCP server) reads through it.
 *
 * It is a contract, not a list of some reads: MASKING names a rule for EVERY method of `Store`
 * (a method added to the interface without one does not compile), and the answer of every method,
 * a write's included (a summary carries its blocked reason), passes its rule. What it decides by:
 * - `run`: the run the first argument names (its plan read once and kept);
 * - `rows`: a list (or `{ runs }`, `{ steps }`) of rows, each by its own run (`runId`, else `id`);
 * - `schedule`: the schedule the first argument names (a new one: the plan it is given);
 * - `schedule-rows`: a list of schedules, each by its own plan;
 * - `process`: this process's secrets only (the answer names no plan, or only counts);
 * - `plans`: a record of plans by run id, each by its own secrets.
 */
type MaskRule =
  | { by: 'plans' }
  | { by: 'run' }
  | { by: 'rows' }
  | { by: 'schedule' }
  | { by: 'schedule-rows' }
  | { by: 'new-run' }
  | { by: 'process' };

const RUN: MaskRule = { by: 'run' };
const ROWS: MaskRule = { by: 'rows' };
const SCHEDULE: MaskRule = { by: 'schedule' };
const PROCESS: MaskRule = { by: 'process' };

/** The rule of every method (and property) of Store: the contract above. */
export const MASKING: { readonly [K in keyof Required<Store>]: MaskRule } = {
  kind: PROCESS,
  id: PROCESS,
  createRun: { by: 'new-run' },
  cycle: ROWS,
  renewLeases: PROCESS,
  recordAttemptProcess: PROCESS,
  nextWakeAt: PROCESS,
  getRun: RUN,
  getRunSteps: RUN,
  listRuns: ROWS,
  listRunPage: ROWS,
  listBlockedSteps: ROWS,
  selectRuns: ROWS,
  retryRunSteps: ROWS,
  cancelRuns: ROWS,
  getRunLabels: PROCESS,
  getRunPlans: { by: 'plans' },
  listWaitingSteps: ROWS,
  listLeases: ROWS,
  listEventsAfter: ROWS,
  metricsSnapshot: PROCESS,
  lastEventSeq: PROCESS,
  getEvents: RUN,
  getAttempts: RUN,
  getStepResults: RUN,
  retryStep: RUN,
  skipStep: RUN,
  cancelRun: RUN,
  approveRun: RUN,
  rejectRun: RUN,
  resolveStep: RUN,
  resumeRun: RUN,
  approveStep: RUN,
  rejectStep: RUN,
  rerunFrom: RUN,
  sendEvent: ROWS,
  appendEvents: RUN,
  beginEffect: PROCESS,
  completeEffect: PROCESS,
  clearEffect: PROCESS,
  deleteFinishedRuns: PROCESS,
  vacuum: PROCESS,
  referencedResultArtifacts: PROCESS,
  claimHookDeliveries: ROWS,
  finishHookDelivery: PROCESS,
  setFlowLimit: PROCESS,
  removeFlowLimit: PROCESS,
  listFlowLimits: PROCESS,
  waitForWork: PROCESS,
  addSchedule: SCHEDULE,
  replaceSchedule: SCHEDULE,
  getSchedule: SCHEDULE,
  listSchedules: { by: 'schedule-rows' },
  pauseSchedule: SCHEDULE,
  resumeSchedule: SCHEDULE,
  removeSchedule: PROCESS,
  triggerSchedule: ROWS,
  listScheduleSlots: SCHEDULE,
  scheduleSlotOfRun: RUN,
  // A trigger names the variable of its secret, never the secret; its inputs are templates.
  addTrigger: PROCESS,
  getTrigger: PROCESS,
  listTriggers: PROCESS,
  setTriggerPaused: PROCESS,
  removeTrigger: PROCESS,
  recordTriggerDelivery: PROCESS,
  listTriggerDeliveries: PROCESS,
  close: PROCESS,
};

/** What a masked store is built from: the process's environment and its other secret values. */
export interface Masking {
  env: NodeJS.ProcessEnv;
  secretValues: readonly string[];
}

const MASKED = Symbol('masked store');
/** The runs whose secrets a long-lived masked store (the console's) keeps before it starts again. */
const RUNS_KEPT = 10_000;

/** Whether `store` is already a masked one (masking twice is harmless but costs a walk). */
export function isMaskedStore(store: Store): boolean {
  return (store as unknown as Record<symbol, unknown>)[MASKED] === true;
}

/** The plan of `value` when it is the run `runId` as read (getRun, getRunSteps), else undefined. */
function ownPlanOf(runId: unknown, value: unknown): Plan | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  const run = value as { id?: unknown; plan?: Plan };
  return typeof runId === 'string' && run.id === runId && run.plan !== undefined ? run.plan : undefined;
}

/** `store` behind the masking boundary (see above): every answer masked by its method's rule. */
export function maskedReads(store: Store, env: NodeJS.ProcessEnv, values: readonly string[] = []): Store {
  if (isMaskedStore(store)) return store;
  const secrets = new RunSecretsCache(env, values);
  const processSecrets = secrets.secretsFor(undefined);
  const ofPlan = (plan: Plan | undefined) => secrets.secretsFor(plan ? planSecretEnv(plan) : undefined);
  // A run's plan never changes: its secrets are looked up once (a watch reads events every 300 ms).
  // A run not found (yet) is not kept: it may be stored next, by this process or another, with a
  // plan of its own secrets.
  const byRun = new Map<string, Promise<readonly string[]>>();
  const forget = (runId: string, looked: Promise<readonly string[]>) => {
    if (byRun.get(runId) === looked) byRun.delete(runId);
  };
  const ofRun = (runId: unknown): Promise<readonly string[]> => {
    if (typeof runId !== 'string') return Promise.resolve(processSecrets);
    let found = byRun.get(runId);
    if (!found) {
      if (byRun.size >= RUNS_KEPT) byRun.clear();
      const looked: Promise<readonly string[]> = store.getRunSteps(runId, NO_STEPS).then(
        (run) => {
          if (run) return ofPlan(run.plan);
          forget(runId, looked);
          return processSecrets;
        },
        () => {
          forget(runId, looked);
          return processSecrets;
        },
      );
      found = looked;
      byRun.set(runId, found);
    }
    return found;
  };
  const ofSchedule = async (name: unknown, given: unknown): Promise<readonly string[]> => {
    const plan = (given as { plan?: Plan } | undefined)?.plan;
    if (plan) return ofPlan(plan);
    if (typeof name !== 'string') return processSecrets;
    const detail = await store.getSchedule(name).catch(() => null);
    return detail ? ofPlan(detail.plan) : processSecrets;
  };
  const ownPlan = (runId: unknown, value: unknown): Promise<readonly string[]> | undefined => {
    const plan = ownPlanOf(runId, value);
    if (plan === undefined) return undefined;
    // Kept as the lookup would keep it, so the run's next read (its schedule slot) needs none.
    const found = Promise.resolve(ofPlan(plan));
    if (!byRun.has(runId as string)) {
      if (byRun.size >= RUNS_KEPT) byRun.clear();
      byRun.set(runId as string, found);
    }
    return found;
  };
  /** The secrets of many runs not looked up yet, from one read of their plans. */
  const prefetch = async (runIds: readonly unknown[]): Promise<void> => {
    const missing = [...new Set(runIds)].filter(
      (id): id is string => typeof id === 'string' && !byRun.has(id),
    );
    if (missing.length < 2) return;
    const plans = await store.getRunPlans(missing).catch(() => ({}) as Record<string, Plan>);
    for (const [runId, plan] of Object.entries(plans)) {
      if (byRun.size >= RUNS_KEPT) byRun.clear();
      byRun.set(runId, Promise.resolve(ofPlan(plan)));
    }
  };
  const maskRows = async (rows: readonly unknown[]): Promise<unknown[]> => {
    await prefetch(rows.map(runIdOf));
    return Promise.all(rows.map(async (row) => redactValue(row, await ofRun(runIdOf(row)))));
  };
  const mask = async (rule: MaskRule, args: unknown[], value: unknown): Promise<unknown> => {
    switch (rule.by) {
      case 'process':
        return redactValue(value, processSecrets);
      case 'plans':
        return Object.fromEntries(
          Object.entries(value as Record<string, Plan>).map(([runId, plan]) => [
            runId,
            redactValue(plan, ofPlan(plan)),
          ]),
        );
      case 'run':
        // A read that answers the run itself carries its plan: no second read for its secrets.
        return redactValue(value, await (ownPlan(args[0], value) ?? ofRun(args[0])));
      case 'new-run':
        return redactValue(value, ofPlan((args[0] as { plan?: Plan } | undefined)?.plan));
      case 'schedule':
        return redactValue(
          value,
          await ofSchedule(typeof args[0] === 'string' ? args[0] : nameOf(args[0]), args[0]),
        );
      case 'rows':
        return maskRowsOf(value, maskRows, processSecrets);
      case 'schedule-rows':
        return Array.isArray(value)
          ? Promise.all(value.map(async (row) => redactValue(row, await ofSchedule(nameOf(row), undefined))))
          : redactValue(value, processSecrets);
    }
  };
  return new Proxy(store, {
    get(target, name, receiver) {
      if (name === MASKED) return true;
      const value = Reflect.get(target, name, receiver);
      if (typeof value !== 'function') return value;
      const rule = MASKING[name as keyof Store] ?? PROCESS;
      return (...args: unknown[]) => {
        const answer = value.apply(target, args) as unknown;
        return answer instanceof Promise ? answer.then((resolved) => mask(rule, args, resolved)) : answer;
      };
    },
  });
}

function runIdOf(row: unknown): unknown {
  if (row === null || typeof row !== 'object') return undefined;
  const record = row as { runId?: unknown; id?: unknown };
  return record.runId ?? record.id;
}

function nameOf(spec: unknown): unknown {
  return (spec as { name?: unknown } | undefined)?.name;
}

/** A list's rows by their runs; one row likewise; `{ runs }` / `{ steps }` lists likewise; else by the process. */
async function maskRowsOf(
  value: unknown,
  maskRows: (rows: readonly unknown[]) => Promise<unknown[]>,
  processSecrets: readonly string[],
): Promise<unknown> {
  if (Array.isArray(value)) return maskRows(value);
  if (value === null || typeof value !== 'object') return redactValue(value, processSecrets);
  // One row (a run's summary): by its run.
  if (runIdOf(value) !== undefined) return (await maskRows([value]))[0];
  const record = value as Record<string, unknown>;
  const out: Record<string, unknown> = { ...record };
  for (const [key, item] of Object.entries(record)) {
    out[key] = Array.isArray(item) ? await maskRows(item) : redactValue(item, processSecrets);
  }
  return out;
}
