import { hostname } from 'node:os';
import type { BatonEvent } from '../core/events.js';
import type { PlanStep } from '../core/plan/types.js';
import { redactOutcome, redactSecrets, redactValue } from '../core/redact.js';
import { stallingEvent } from '../core/stall-message.js';
import { shadowExecutor } from '../executors/shadow-executor.js';
import type { StepExecutor } from '../executors/step-executor.js';
import type { EffectLedger } from '../model-call/tools.js';
import type { ClaimedStep, Completion, Store } from '../store/store.js';
import type { AttemptAbort } from './attempt-abort.js';
import { runWithDeadline, timedOutAttempt } from './attempt-deadline.js';
import {
  fitsInline,
  hasOffloadedResults,
  offloadEffectResult,
  offloadLargeResult,
  resolveEffectResult,
  resolveResults,
} from './result-artifacts.js';
import { endAttemptSpan, recordRecoverySpans, recordStepSpan, startAttemptSpan } from './telemetry.js';

/** Who runs each kind of step; a model step without a `model` executor fails as `invalid`. */
export interface Executors {
  agent: StepExecutor;
  fn: StepExecutor;
  model?: StepExecutor;
  /** Sub-plan steps (engine/sub-plan-executor.ts): the engine adds its own. */
  plan?: StepExecutor;
}

interface AttemptDeps {
  store: Store;
  home: string;
  executors: Executors;
  now: () => number;
  /** Masked in what the attempt records (see EngineOptions.secrets). */
  secrets?: readonly string[];
}

/**
 * Runs one claimed attempt outside any transaction and returns its completion: the results it may
 * read (large ones read back from the artifact store), the executor for its kind (or the shadow
 * stand-in for a step with a side effect in a shadow run), its deadline (see attempt-deadline.ts),
 * its events and effects wired to the store, its span, and a large result moved to the artifact
 * store. Never throws.
 */
export async function runAttempt(
  deps: AttemptDeps,
  claim: ClaimedStep,
  /** The attempt's abort: by the engine (stop, a lost lease), and here at its deadline. */
  abort: AttemptAbort,
): Promise<Completion> {
  const { store, home, now } = deps;
  const startedAt = now();
  const shadowed = claim.shadow === true && (claim.step.sideEffect ?? 'none') !== 'none';
  const executor = shadowed ? shadowExecutor : executorFor(deps.executors, claim.step.kind);
  const span = startAttemptSpan(claim);
  const key = { runId: claim.runId, stepId: claim.stepId, attempt: claim.attempt, owner: claim.owner };
  let completion: Completion;
  try {
    // Awaited only when there is something to read: each await is a promise per attempt.
    const results = hasOffloadedResults(claim.results)
      ? await resolveResults(claim.results, home)
      : claim.results;
    // Past its deadline an attempt begins no effect; once it is over, what it records is dropped.
    let expired = false;
    let over = false;
    const recordEvents = async (recorded: readonly BatonEvent[]): Promise<void> => {
      if (over) return;
      // An executor's own events (recovery, tool failures) quote providers' and tools' texts.
      const events = redactValue(recorded, deps.secrets ?? []);
      recordRecoverySpans(span, events);
      return store.appendEvents(claim.runId, events, now());
    };
    const ended = await runWithDeadline(
      claim,
      abort,
      (attemptSignal, heartbeat) =>
        executor.execute({
          claim,
          results,
          home,
          storeId: store.id,
          signal: attemptSignal,
          heartbeat,
          onProcess: (pid) =>
            void store.recordAttemptProcess(claim, { pid, host: hostname() }).catch(() => undefined),
          recordEvents,
          readEvents: (afterSeq) => store.getEvents(claim.runId, { afterSeq }),
          effects: stepEffects(store, claim, home, now, () => expired),
        }),
      {
        onExpired: () => {
          expired = true;
        },
        onStalling: (silentMs) => {
          const event = stallingEvent(claim, silentMs, claim.step.heartbeatTimeoutMs ?? 0);
          void recordEvents([event]).catch(() => undefined);
        },
        now,
      },
    );
    over = true;
    const attempt = ended.timedOut
      ? timedOutAttempt(claim, home, ended.settled, ended.stalled)
      : ended.result;
    const finished =
      claim.fallback && attempt.outcome.ok && !attempt.outcome.degraded
        ? { ...attempt.outcome, degraded: 'finished by its fallback' }
        : attempt.outcome;
    // Masked once, here: before a large result goes to the artifact store (later steps read it
    // back) and before the store, the events, the span and the next troubleshoot prompt see it.
    const masked = redactOutcome(finished, deps.secrets ?? []);
    const outcome = fitsInline(masked) ? masked : await offloadLargeResult(masked, home);
    completion = { ...key, outcome, startedAt, endedAt: now(), logPath: attempt.logPath };
  } catch (error) {
    // A bug or an I/O failure at the edge: record it as a failure rather than lose the attempt.
    const message = redactSecrets(
      `internal error while running the step: ${error instanceof Error ? error.message : String(error)}`,
      deps.secrets ?? [],
    );
    completion = {
      ...key,
      outcome: { ok: false, failureClass: 'transient', message },
      startedAt,
      endedAt: now(),
      logPath: null,
    };
  }
  endAttemptSpan(span, completion.outcome, completion.endedAt - startedAt);
  if (completion.outcome.ok) {
    recordStepSpan(
      claim,
      claim.firstStartedAt ?? startedAt,
      completion.endedAt,
      completion.outcome.degraded !== undefined,
    );
  }
  return completion;
}

/**
 * The store's effect table seen from one step, for SQLite and Postgres alike: a large result is
 * kept as an artifact (see offloadEffectResult) and read back when a retry finds it done. An
 * attempt past its deadline may still record the result of an effect it had begun, but begins none.
 */
function stepEffects(
  store: Store,
  claim: ClaimedStep,
  home: string,
  now: () => number,
  expired: () => boolean,
): EffectLedger {
  const at = (key: string) => ({ runId: claim.runId, stepId: claim.stepId, key });
  return {
    begin: async (key) => {
      if (expired()) {
        throw new Error(
          `effect "${key}" not begun: attempt ${claim.attempt} of step ${claim.stepId} is past its timeout of ${claim.step.timeoutMs} ms`,
        );
      }
      const existing = await store.beginEffect(at(key), now());
      return existing?.state === 'done'
        ? { state: 'done', result: await resolveEffectResult(existing.result, home) }
        : existing;
    },
    complete: async (key, result) =>
      store.completeEffect(at(key), await offloadEffectResult(result, home), now()),
    clear: (key) => store.clearEffect(at(key)),
  };
}

const missingModelExecutor: StepExecutor = {
  execute: async () => ({
    outcome: { ok: false, failureClass: 'invalid', message: 'this worker has no model executor configured' },
    logPath: null,
  }),
};

const missingPlanExecutor: StepExecutor = {
  execute: async () => ({
    outcome: { ok: false, failureClass: 'invalid', message: 'this worker runs no sub-plan steps' },
    logPath: null,
  }),
};

function executorFor(executors: Executors, kind: PlanStep['kind']): StepExecutor {
  if (kind === 'fn') return executors.fn;
  if (kind === 'model') return executors.model ?? missingModelExecutor;
  if (kind === 'plan') return executors.plan ?? missingPlanExecutor;
  return executors.agent;
}
