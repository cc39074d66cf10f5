import { redactValue } from '../core/redact.js';
import { planSecretEnv } from '../core/run-secrets.js';
import { RunSecretsCache } from '../engine/run-secrets-cache.js';
import type { Store } from '../store/store.js';

/**
 * A store whose reads (runs, events, attempts) come back with this process's secrets of each run
 * masked (see runSecrets), for the commands that print them: what was recorded before masking, or
 * by a process that lacked a secret, is printed masked too. Writes are untouched.
 */
export function maskedReads(store: Store, env: NodeJS.ProcessEnv, values: readonly string[] = []): Store {
  const secrets = new RunSecretsCache(env, values);
  // A run's plan never changes: its secrets are looked up once (a watch reads events every 300 ms).
  const known = new Map<string, readonly string[]>();
  const forRun = async (runId: string) => {
    const cached = known.get(runId);
    if (cached) return cached;
    const run = await store.getRun(runId);
    if (!run) return secrets.secretsFor(undefined);
    const values = secrets.secretsFor(planSecretEnv(run.plan));
    known.set(runId, values);
    return values;
  };
  /** `forRun` for one read's many rows: each run's plan is read once. */
  const forRows = () => {
    const seen = new Map<string, Promise<readonly string[]>>();
    return (runId: string) => {
      let secretsOfRun = seen.get(runId);
      if (!secretsOfRun) {
        secretsOfRun = forRun(runId);
        seen.set(runId, secretsOfRun);
      }
      return secretsOfRun;
    };
  };
  const reads: Partial<Store> = {
    getRun: async (runId) => {
      const run = await store.getRun(runId);
      return run && redactValue(run, secrets.secretsFor(planSecretEnv(run.plan)));
    },
    getRunSteps: async (runId, selection) => {
      const run = await store.getRunSteps(runId, selection);
      return run && redactValue(run, secrets.secretsFor(planSecretEnv(run.plan)));
    },
    // A summary's only free text is its blocked reason: only those runs' plans are read.
    listRuns: async (options) =>
      Promise.all(
        (await store.listRuns(options)).map(async (run) =>
          run.blockedReason === null ? run : redactValue(run, await forRun(run.id)),
        ),
      ),
    listRunPage: async (query) => {
      const page = await store.listRunPage(query);
      const runs = await Promise.all(
        page.runs.map(async (run) =>
          run.blockedReason === null ? run : redactValue(run, await forRun(run.id)),
        ),
      );
      return { ...page, runs };
    },
    listBlockedSteps: async (limit) => {
      const secretsOf = forRows();
      return Promise.all(
        (await store.listBlockedSteps(limit)).map(async (step) =>
          redactValue(step, await secretsOf(step.runId)),
        ),
      );
    },
    listWaitingSteps: async (limit) => {
      const secretsOf = forRows();
      const found = await store.listWaitingSteps(limit);
      const steps = await Promise.all(
        found.steps.map(async (step) => redactValue(step, await secretsOf(step.runId))),
      );
      return { ...found, steps };
    },
    listEventsAfter: async (afterSeq, limit) => {
      const secretsOf = forRows();
      return Promise.all(
        (await store.listEventsAfter(afterSeq, limit)).map(async (event) =>
          redactValue(event, await secretsOf(event.runId)),
        ),
      );
    },
    getEvents: async (runId, options) =>
      redactValue(await store.getEvents(runId, options), await forRun(runId)),
    getAttempts: async (runId, stepId) =>
      redactValue(await store.getAttempts(runId, stepId), await forRun(runId)),
  };
  return new Proxy(store, {
    get(target, name, receiver) {
      if (typeof name === 'string' && Object.hasOwn(reads, name)) return reads[name as keyof Store];
      const value = Reflect.get(target, name, receiver);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}
