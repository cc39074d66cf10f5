import { hostname } from 'node:os';
import type { RandomSource } from '../core/backoff.js';
import { listTemplateRefs } from '../core/plan/template.js';
import type { PlanStep } from '../core/plan/types.js';
import type { StepExecutor } from '../executors/step-executor.js';
import type { EffectLedger } from '../harness/tools.js';
import type { AttemptKey, ClaimedStep, Completion, CycleResult, Store } from '../store/store.js';
import { stopOrphanedAttempt } from './orphans.js';

/** How long the engine keeps going. */
export type EngineMode =
  /** `baton check`: do everything due now, then return (timers left for the next heartbeat). */
  | { kind: 'drain' }
  /** `baton run`: drive one run until it succeeds, blocks, fails or is cancelled, waiting for its timers. */
  | { kind: 'until-settled'; runId: string }
  /** `baton worker`: until `stop()`. */
  | { kind: 'forever' };

export interface EngineOptions {
  store: Store;
  /** Who runs each kind of step; a model step without a `model` executor fails as `invalid`. */
  executors: { agent: StepExecutor; fn: StepExecutor; model?: StepExecutor };
  home: string;
  /** Lease owner id; unique per process. */
  owner: string;
  /** Steps executing at once in this process. Default 8. */
  concurrency?: number;
  /** Lease length in ms; renewed every third of it while a step runs. Default 30 000. */
  leaseMs?: number;
  /** Longest sleep while idle, so runs created by other processes are seen. Default 1000 ms. */
  pollMs?: number;
  now?: () => number;
  random?: RandomSource;
  /** Observers for progress output. */
  onClaim?: (claim: ClaimedStep) => void;
  onSettle?: (completion: Completion, accepted: boolean) => void;
  /** A store transaction failed and will be retried (the engine stops after 10 in a row). */
  onError?: (error: unknown) => void;
}

export interface EngineReport {
  attemptsStarted: number;
  attemptsCommitted: number;
  attemptsDiscarded: number;
  reclaimed: number;
}

interface InFlight {
  claim: ClaimedStep;
  abort: AbortController;
}

/** Consecutive failed store transactions before the engine gives up. */
const MAX_FAILED_CYCLES = 10;

const key = (k: AttemptKey): string => `${k.runId}\u0000${k.stepId}\u0000${k.attempt}`;

/**
 * The worker loop: one store transaction commits every finished attempt, reclaims expired leases
 * and claims due steps; executors run outside transactions; leases are renewed while they run.
 */
export class Engine {
  private readonly store: Store;
  private readonly concurrency: number;
  private readonly leaseMs: number;
  private readonly pollMs: number;
  private readonly now: () => number;
  private readonly random: RandomSource;
  private readonly inFlight = new Map<string, InFlight>();
  private completions: Completion[] = [];
  private wake: (() => void) | null = null;
  private stopping = false;
  private stopAbortAt: number | null = null;
  private failedCycles = 0;
  private readonly functionNames: readonly string[] | undefined;
  private readonly report: EngineReport = {
    attemptsStarted: 0,
    attemptsCommitted: 0,
    attemptsDiscarded: 0,
    reclaimed: 0,
  };

  constructor(private readonly options: EngineOptions) {
    this.store = options.store;
    this.concurrency = options.concurrency ?? 8;
    this.leaseMs = options.leaseMs ?? 30_000;
    this.pollMs = options.pollMs ?? 1000;
    this.now = options.now ?? Date.now;
    this.random = options.random ?? Math.random;
    this.functionNames = options.executors.fn.functionNames?.();
  }

  /** Stop claiming; in-flight steps finish, and are aborted (then retried later) after `graceMs`. */
  stop(graceMs = 30_000): void {
    this.stopping = true;
    this.stopAbortAt = this.now() + graceMs;
    if (graceMs <= 0) for (const entry of this.inFlight.values()) entry.abort.abort();
    this.wake?.();
  }

  async run(mode: EngineMode): Promise<EngineReport> {
    const renewTimer = setInterval(() => void this.renewLeases(), Math.max(50, Math.floor(this.leaseMs / 3)));
    renewTimer.unref();
    try {
      for (;;) {
        if (this.stopAbortAt !== null && this.now() >= this.stopAbortAt) {
          for (const entry of this.inFlight.values()) entry.abort.abort();
        }
        const claimLimit = this.stopping ? 0 : this.concurrency - this.inFlight.size;
        let progressed = false;
        if (this.completions.length > 0 || claimLimit > 0) {
          const result = await this.cycle(claimLimit, mode);
          for (const claim of result.claimed) this.start(claim);
          progressed = result.claimed.length > 0 || result.reclaimed.length > 0;
        }
        if (this.inFlight.size > 0 || this.completions.length > 0) {
          await this.sleep(this.completions.length > 0 ? 0 : this.pollMs);
          continue;
        }
        if (this.stopping) break;
        const next = await this.idleWait(mode, progressed);
        if (next === 'done') break;
      }
    } finally {
      clearInterval(renewTimer);
    }
    return { ...this.report };
  }

  /** With nothing in flight: decide whether to return, or how long to sleep. */
  private async idleWait(mode: EngineMode, progressed: boolean): Promise<'done' | 'again'> {
    const filter = mode.kind === 'until-settled' ? { runId: mode.runId } : {};
    if (mode.kind === 'until-settled') {
      const run = await this.store.getRun(mode.runId);
      if (!run || run.status !== 'running') return 'done';
    }
    const wakeAt = await this.store.nextWakeAt(filter);
    const now = this.now();
    if (mode.kind === 'drain') return progressed && wakeAt !== null && wakeAt <= now ? 'again' : 'done';
    // Due work that could not be claimed (its run is at its concurrency in another process, or it is a
    // function this process lacks) is looked at again at the poll interval, not in a hot loop.
    const delay =
      wakeAt === null
        ? this.pollMs
        : wakeAt > now
          ? Math.min(wakeAt - now, this.pollMs)
          : progressed
            ? 0
            : this.pollMs;
    await this.sleep(delay);
    return 'again';
  }

  private async cycle(claimLimit: number, mode: EngineMode): Promise<CycleResult> {
    const completions = this.completions;
    this.completions = [];
    let result: CycleResult;
    try {
      result = await this.store.cycle({
        owner: this.options.owner,
        now: this.now(),
        leaseMs: this.leaseMs,
        completions,
        claimLimit,
        random: this.random,
        ...(this.functionNames ? { functions: this.functionNames } : {}),
        ...(mode.kind === 'until-settled' ? { runId: mode.runId } : {}),
      });
      this.failedCycles = 0;
    } catch (error) {
      // Outcomes are not lost to a failed transaction (a busy database, a full disk): they are
      // committed by the next cycle. A store that keeps failing stops the engine.
      this.completions.unshift(...completions);
      this.failedCycles++;
      if (this.failedCycles >= MAX_FAILED_CYCLES) throw error;
      this.options.onError?.(error);
      await new Promise((resolve) => setTimeout(resolve, Math.min(5000, 100 * 2 ** this.failedCycles)));
      return { claimed: [], accepted: [], reclaimed: [] };
    }
    completions.forEach((completion, index) => {
      const accepted = result.accepted[index] ?? false;
      if (accepted) this.report.attemptsCommitted++;
      else this.report.attemptsDiscarded++;
      this.options.onSettle?.(completion, accepted);
    });
    for (const reclaimed of result.reclaimed) {
      this.report.reclaimed++;
      stopOrphanedAttempt(reclaimed, hostname());
    }
    return result;
  }

  private start(claim: ClaimedStep): void {
    const abort = new AbortController();
    this.inFlight.set(key(claim), { claim, abort });
    this.report.attemptsStarted++;
    this.options.onClaim?.(claim);
    void this.execute(claim, abort.signal);
  }

  private async execute(claim: ClaimedStep, signal: AbortSignal): Promise<void> {
    const startedAt = this.now();
    const executor = executorFor(this.options.executors, claim.step.kind);
    let completion: Completion;
    try {
      const results = await this.store.getStepResults(claim.runId, referencedSteps(claim));
      const attempt = await executor.execute({
        claim,
        results,
        home: this.options.home,
        signal,
        onProcess: (pid) =>
          void this.store.recordAttemptProcess(claim, { pid, host: hostname() }).catch(() => undefined),
        recordEvents: (events) => this.store.appendEvents(claim.runId, events, this.now()),
        effects: stepEffects(this.store, claim, () => this.now()),
      });
      completion = {
        ...attemptKey(claim),
        owner: claim.owner,
        outcome: attempt.outcome,
        startedAt,
        endedAt: this.now(),
        logPath: attempt.logPath,
      };
    } catch (error) {
      // A bug or an I/O failure at the edge: record it as a failure rather than lose the attempt.
      const message = `internal error while running the step: ${error instanceof Error ? error.message : String(error)}`;
      completion = {
        ...attemptKey(claim),
        owner: claim.owner,
        outcome: { ok: false, failureClass: 'transient', message },
        startedAt,
        endedAt: this.now(),
        logPath: null,
      };
    }
    this.inFlight.delete(key(claim));
    this.completions.push(completion);
    this.wake?.();
  }

  private async renewLeases(): Promise<void> {
    if (this.inFlight.size === 0) return;
    const attempts = [...this.inFlight.values()].map((entry) => attemptKey(entry.claim));
    try {
      const lost = await this.store.renewLeases(this.options.owner, attempts, this.leaseMs, this.now());
      for (const attempt of lost) this.inFlight.get(key(attempt))?.abort.abort();
    } catch {
      // The next renewal tries again; a lease that really runs out is reclaimed by the rules.
    }
  }

  /** Sleeps up to `ms`, waking early when an attempt finishes or stop() is called. */
  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.wake = null;
        // Let other attempts that finish in the same tick join this commit.
        setImmediate(resolve);
      };
      const timer = setTimeout(done, ms);
      this.wake = done;
    });
  }
}

/** The store's effect table seen from one step. */
function stepEffects(store: Store, claim: ClaimedStep, now: () => number): EffectLedger {
  const at = (key: string) => ({ runId: claim.runId, stepId: claim.stepId, key });
  return {
    begin: (key) => store.beginEffect(at(key), now()),
    complete: (key, result) => store.completeEffect(at(key), result, now()),
    clear: (key) => store.clearEffect(at(key)),
  };
}

function attemptKey(claim: AttemptKey): AttemptKey {
  return { runId: claim.runId, stepId: claim.stepId, attempt: claim.attempt };
}

const missingModelExecutor: StepExecutor = {
  execute: async () => ({
    outcome: { ok: false, failureClass: 'invalid', message: 'this worker has no model executor configured' },
    logPath: null,
  }),
};

function executorFor(executors: EngineOptions['executors'], kind: PlanStep['kind']): StepExecutor {
  if (kind === 'fn') return executors.fn;
  if (kind === 'model') return executors.model ?? missingModelExecutor;
  return executors.agent;
}

/** Steps whose results this attempt may read: template references for agents and models, dependencies for functions. */
function referencedSteps(claim: ClaimedStep): string[] {
  if (claim.step.kind === 'fn') return claim.step.dependsOn;
  const ids = new Set<string>();
  const texts = [
    claim.step.instruction ?? '',
    claim.step.model?.prompt ?? '',
    claim.step.model?.system ?? '',
  ];
  for (const ref of texts.flatMap((text) => listTemplateRefs(text))) {
    if (ref.path[0] === 'steps' && ref.path[1] !== undefined) ids.add(ref.path[1]);
  }
  return [...ids];
}
