import { hostname } from 'node:os';
import type { RandomSource } from '../core/backoff.js';
import { ENGINE_DEFAULTS } from '../core/engine-defaults.js';
import { SLOT_RUNS_PER_CHECK } from '../core/schedule/schedule-rules.js';
import {
  type AttemptKey,
  type ClaimedStep,
  type Completion,
  type CycleResult,
  NO_STEPS,
  type Store,
} from '../store/store.js';
import { attemptKeyText } from '../store/store-rows.js';
import { AttemptAbort } from './attempt-abort.js';
import type { EngineMeter } from './engine-meter.js';
import { HookDispatcher } from './hook-dispatcher.js';
import { stopOrphanedAttempt } from './orphans.js';
import type { Executors } from './run-attempt.js';
import { RunSecretsCache } from './run-secrets-cache.js';
import { SubPlanExecutor } from './sub-plan-executor.js';

/** How long the engine keeps going. */
type EngineMode =
  /**
   * `baton check`: do what is due when it starts, and what that makes due without a timer, then
   * return (core/check-horizon.ts: timers that come due later, and schedule slots after its start,
   * are left for the next heartbeat; it starts at most SLOT_RUNS_PER_CHECK runs of schedules).
   */
  | { kind: 'drain' }
  /** `baton run`: drive one run until it succeeds, blocks, fails or is cancelled, waiting for its timers. */
  | { kind: 'until-settled'; runId: string }
  /** `baton worker`: until `stop()`. */
  | { kind: 'forever' };

export interface EngineOptions {
  store: Store;
  /** Who runs each kind of step; a model step without a `model` executor fails as `invalid`. */
  executors: Executors;
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
  /** A hook call failed for good (its retries are used up). Default: `onError`. */
  onHookFailure?: (message: string) => void;
  /**
   * Values masked wherever an attempt or a hook call records text (failure messages, summaries,
   * events), on top of each run's secrets (see runSecrets: the store's, the plan's hook URLs and
   * model keys, BATON_SECRET_ENV, secret-looking variables of `env`): e.g. the `--store` URL.
   */
  secrets?: readonly string[];
  /** The environment whose secrets are masked. Default process.env. */
  env?: NodeJS.ProcessEnv;
  /** Tallies for `/metrics`: each store cycle's latency (engine-meter.ts). */
  meter?: EngineMeter;
}

export interface EngineReport {
  attemptsStarted: number;
  attemptsCommitted: number;
  attemptsDiscarded: number;
  reclaimed: number;
  /** Runs started from schedule slots. */
  scheduleRunsStarted: number;
  /** A check left due schedule slots for the next one: their runs would pass SLOT_RUNS_PER_CHECK. */
  scheduleSlotsLeft: boolean;
}

/** A report of an engine that ran nothing. */
export function emptyEngineReport(): EngineReport {
  return {
    attemptsStarted: 0,
    attemptsCommitted: 0,
    attemptsDiscarded: 0,
    reclaimed: 0,
    scheduleRunsStarted: 0,
    scheduleSlotsLeft: false,
  };
}

interface InFlight {
  claim: ClaimedStep;
  abort: AttemptAbort;
}

/** Consecutive failed store transactions before the engine gives up. */
const MAX_FAILED_CYCLES = 10;

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
  /** When hook calls were last looked for (see run()). */
  private hooksLookedAt = Number.NEGATIVE_INFINITY;
  /** When this engine last ran a cycle: with no slot free it still runs one per poll interval. */
  private cycledAt = Number.NEGATIVE_INFINITY;
  /** New work was made due in this process (a run started, a function registered): look at once. */
  private nudged = false;
  private readonly hooks: HookDispatcher;
  /** Runs sub-plan steps' attempts: they wait on a child run, holding no slot (see slotsInUse). */
  private readonly subPlans: SubPlanExecutor;
  /** In-flight attempts of sub-plan steps. */
  private waitingOnChildren = 0;
  /** A sub-plan attempt started here: a process driving one run drives its children too. */
  private drivesChildren = false;
  private attempts: Promise<typeof import('./run-attempt.js')> | null = null;
  private readonly secrets: RunSecretsCache;
  private readonly report: EngineReport = emptyEngineReport();
  /** A check's horizon: its start, and the runs of schedule slots it may still start (undefined: not a check). */
  private horizon: { dueBy: number; slotRunsLeft: number } | undefined;

  constructor(private readonly options: EngineOptions) {
    this.store = options.store;
    this.concurrency = options.concurrency ?? ENGINE_DEFAULTS.concurrency;
    this.leaseMs = options.leaseMs ?? ENGINE_DEFAULTS.leaseMs;
    this.pollMs = options.pollMs ?? ENGINE_DEFAULTS.pollMs;
    this.now = options.now ?? Date.now;
    this.random = options.random ?? Math.random;
    this.secrets = new RunSecretsCache(options.env ?? process.env, options.secrets ?? []);
    this.subPlans = new SubPlanExecutor(this.store, {
      home: options.home,
      pollMs: this.pollMs,
      ...(options.env ? { env: options.env } : {}),
      onChildStarted: () => this.wake?.(),
    });
    this.hooks = new HookDispatcher(this.store, {
      owner: options.owner,
      home: options.home,
      now: this.now,
      secretsFor: (plan) => this.secrets.secretsFor(plan),
      onFailure: (delivery, error) => {
        const message = `hook ${delivery.hook} of run ${delivery.runId} failed for good: ${error}`;
        if (options.onHookFailure) options.onHookFailure(message);
        else options.onError?.(new Error(message));
      },
    });
  }

  /** Stop claiming; in-flight steps finish, and are aborted (then retried later) after `graceMs`. */
  stop(graceMs = 30_000): void {
    this.stopping = true;
    this.stopAbortAt = this.now() + graceMs;
    // An attempt waiting on a child run has nothing to finish: it stops now, and the worker that
    // takes the step over waits on the same child.
    for (const entry of this.inFlight.values())
      if (graceMs <= 0 || entry.claim.step.kind === 'plan') entry.abort.abort();
    this.wake?.();
  }

  /**
   * Something this process did made work due (a run started, a workflow registered): an idle
   * engine looks at once instead of at its next poll.
   */
  nudge(): void {
    this.nudged = true;
    this.wake?.();
  }

  async run(mode: EngineMode): Promise<EngineReport> {
    this.horizon =
      mode.kind === 'drain' ? { dueBy: this.now(), slotRunsLeft: SLOT_RUNS_PER_CHECK } : undefined;
    const renewTimer = setInterval(() => void this.renewLeases(), Math.max(50, Math.floor(this.leaseMs / 3)));
    renewTimer.unref();
    try {
      for (;;) {
        if (this.stopAbortAt !== null && this.now() >= this.stopAbortAt) {
          for (const entry of this.inFlight.values()) entry.abort.abort();
        }
        // A sub-plan attempt waits on its child and takes no slot: the child's steps need them.
        const claimLimit = this.stopping
          ? 0
          : this.concurrency - (this.inFlight.size - this.waitingOnChildren);
        let progressed = false;
        this.nudged = false;
        // With every slot busy, a cycle per poll interval still fires the timeouts of waits (and
        // reclaims other workers' expired leases): they take no slot.
        const noSlotLook = !this.stopping && this.now() - this.cycledAt >= this.pollMs;
        if (this.completions.length > 0 || claimLimit > 0 || noSlotLook) {
          this.cycledAt = this.now();
          const result = await this.cycle(claimLimit, mode);
          for (const claim of result.claimed) this.start(claim);
          // Child runs this cycle ended: the sub-plan attempts waiting on them look now.
          if (this.waitingOnChildren > 0 && result.endedRuns) this.subPlans.ended(result.endedRuns);
          this.kickHooks(result.hooksOwed === true);
          progressed =
            result.claimed.length > 0 || result.reclaimed.length > 0 || result.settledUnclaimed === true;
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
    // Hook calls owed for what this run did are made before returning (check and run exit after).
    await this.hooks.drain().catch((error: unknown) => this.options.onError?.(error));
    if (mode.kind === 'until-settled') {
      const run = await this.store.getRun(mode.runId).catch(() => null);
      if (run && run.status !== 'running') (await import('./telemetry.js')).recordRunSpan(run);
    }
    return { ...this.report };
  }

  /**
   * Hook calls this cycle wrote are made at once. Others (owed by another process, or a retry
   * coming due) are looked for at the poll interval, not after every cycle: that look is a query.
   */
  private kickHooks(owedNow: boolean): void {
    const now = this.now();
    if (!owedNow && now - this.hooksLookedAt < this.pollMs) return;
    this.hooksLookedAt = now;
    this.hooks.kick();
  }

  /** With nothing in flight: decide whether to return, or how long to sleep. */
  private async idleWait(mode: EngineMode, progressed: boolean): Promise<'done' | 'again'> {
    const filter = mode.kind === 'until-settled' ? { runId: mode.runId } : {};
    let wakeAt: number | null;
    try {
      if (mode.kind === 'until-settled') {
        // Its status only: a run of 10,000 steps waiting on a timer is looked at every poll.
        const run = await this.store.getRunSteps(mode.runId, NO_STEPS);
        if (!run || run.status !== 'running') return 'done';
      }
      wakeAt = await this.store.nextWakeAt(filter);
    } catch (error) {
      // The store is unreachable for now (a database restarting): look again after the poll interval.
      if (mode.kind === 'drain') throw error;
      this.options.onError?.(error);
      await this.sleep(this.pollMs);
      return 'again';
    }
    const now = this.now();
    if (mode.kind === 'drain') {
      if (!progressed || wakeAt === null || wakeAt > now) return 'done';
      // Back to the event loop between cycles: a check's --max-time (a timer) and signals are heard
      // even when every cycle moves work without starting an attempt (schedule ticks, waits, skips).
      await new Promise((resolve) => setImmediate(resolve));
      return 'again';
    }
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
    // stop() or nudge() during the awaits above found no sleep to cut short.
    if (this.stopping || this.nudged) return 'again';
    if (delay > 0 && this.store.waitForWork) {
      // A store that notifies new work: a worker sleeps until the next due time (the store caps it with
      // its own slow poll), woken early by a notification, a finished attempt or stop(). `run` still
      // looks at its run every poll interval: a run ending in another process notifies nothing.
      const wait = new AbortController();
      this.wake = () => wait.abort();
      const sleepMs =
        mode.kind !== 'forever'
          ? delay
          : wakeAt === null
            ? Number.POSITIVE_INFINITY
            : wakeAt > now
              ? wakeAt - now
              : delay;
      await this.store.waitForWork(Date.now() + sleepMs, wait.signal);
      this.wake = null;
    } else await this.sleep(delay);
    return 'again';
  }

  private async cycle(claimLimit: number, mode: EngineMode): Promise<CycleResult> {
    const completions = this.completions;
    this.completions = [];
    let result: CycleResult;
    const meter = this.options.meter;
    const startedAt = meter === undefined ? 0 : performance.now();
    try {
      result = await this.store.cycle({
        owner: this.options.owner,
        now: this.now(),
        leaseMs: this.leaseMs,
        completions,
        claimLimit,
        random: this.random,
        // Read every cycle: functions registered after the worker started are claimed too.
        ...this.functionsFilter(),
        ...(mode.kind === 'until-settled' && !this.drivesChildren ? { runId: mode.runId } : {}),
        // A check waiting on a child run drives the child's steps, due after the check began.
        ...(this.horizon && this.drivesChildren ? { ...this.horizon, dueBy: this.now() } : this.horizon),
      });
      this.failedCycles = 0;
      meter?.cycleEnded(performance.now() - startedAt);
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
      stopOrphanedAttempt(reclaimed, hostname(), this.store.id);
    }
    this.report.scheduleRunsStarted += result.slotRunsStarted ?? 0;
    if (this.horizon) {
      this.horizon.slotRunsLeft -= result.slotRunsStarted ?? 0;
      // The check's bound is reached: the next check decides the slots left, this one no more.
      if (result.slotsLeft) {
        this.horizon.slotRunsLeft = 0;
        this.report.scheduleSlotsLeft = true;
      }
    }
    return result;
  }

  private functionsFilter(): { functions?: readonly string[] } {
    const names = this.options.executors.fn.functionNames?.();
    return names ? { functions: names } : {};
  }

  private start(claim: ClaimedStep): void {
    const abort = new AttemptAbort();
    this.inFlight.set(attemptKeyText(claim), { claim, abort });
    if (claim.step.kind === 'plan') {
      this.waitingOnChildren++;
      this.drivesChildren = true;
    }
    this.report.attemptsStarted++;
    this.options.onClaim?.(claim);
    void this.execute(claim, abort);
  }

  private async execute(claim: ClaimedStep, abort: AttemptAbort): Promise<void> {
    // Loaded on the first attempt: `check` with nothing due does not pay for executors and tracing.
    this.attempts ??= import('./run-attempt.js');
    const { runAttempt } = await this.attempts;
    const completion = await runAttempt(
      {
        store: this.store,
        home: this.options.home,
        executors: { ...this.options.executors, plan: this.subPlans },
        now: this.now,
        secrets: this.secrets.secretsFor(claim.secretEnv),
      },
      claim,
      abort,
    );
    this.inFlight.delete(attemptKeyText(claim));
    if (claim.step.kind === 'plan') this.waitingOnChildren--;
    this.completions.push(completion);
    this.wake?.();
  }

  private async renewLeases(): Promise<void> {
    if (this.inFlight.size === 0) return;
    const attempts = [...this.inFlight.values()].map((entry) => attemptKey(entry.claim));
    try {
      const lost = await this.store.renewLeases(this.options.owner, attempts, this.leaseMs, this.now());
      for (const attempt of lost) this.inFlight.get(attemptKeyText(attempt))?.abort.abort();
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

function attemptKey(claim: AttemptKey): AttemptKey {
  return { runId: claim.runId, stepId: claim.stepId, attempt: claim.attempt };
}
