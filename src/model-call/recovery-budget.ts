/**
 * One recovery budget shared by every layer of a model call. A call's budget is a child of the
 * run's: taking from the child also takes from the run, and nothing can reset a counter, so a
 * retry loop in one layer cannot multiply with a loop in another (SDK x router x agent).
 */
export interface RecoveryLimits {
  /** Retries of transient failures (429, 5xx, timeouts, resets) on the primary model. Default 3. */
  transientRetries: number;
  /** Retries of transient failures on the fallback model, which gets fewer. Default 1. */
  fallbackTransientRetries: number;
  /** Compactions of the history after an input overflow. Default 1. */
  compactions: number;
  /** Lowerings of the output budget after an input + output overflow. Default 1. */
  outputReductions: number;
  /** Reissues of a truncated response with a larger output budget. Default 1. */
  reissues: number;
  /** Continuations of truncated plain text. Default 1. */
  continuations: number;
  /** Switches to the fallback model. Default 1. */
  fallbacks: number;
  /** Requests sent in all, first attempts included. Default 10. */
  requests: number;
  /** Milliseconds spent waiting between requests, in all. Default 120,000. */
  waitMs: number;
}

type RecoveryCounter = keyof RecoveryLimits;

const DEFAULT_CALL_LIMITS: Readonly<RecoveryLimits> = Object.freeze({
  transientRetries: 3,
  fallbackTransientRetries: 1,
  compactions: 1,
  outputReductions: 1,
  reissues: 1,
  continuations: 1,
  fallbacks: 1,
  requests: 10,
  waitMs: 120_000,
});

/** A run (an agent loop, a Baton step) allows many calls, each within its own call limits. */
const DEFAULT_RUN_LIMITS: Readonly<RecoveryLimits> = Object.freeze({
  transientRetries: 30,
  fallbackTransientRetries: 10,
  compactions: 5,
  outputReductions: 5,
  reissues: 10,
  continuations: 10,
  fallbacks: 10,
  requests: 200,
  waitMs: 600_000,
});

const COUNTERS = Object.keys(DEFAULT_CALL_LIMITS) as RecoveryCounter[];

export class RecoveryBudget {
  readonly limits: Readonly<RecoveryLimits>;
  private readonly used: Record<RecoveryCounter, number>;

  constructor(
    limits: Partial<RecoveryLimits> = {},
    private readonly parent: RecoveryBudget | null = null,
    defaults: Readonly<RecoveryLimits> = parent === null ? DEFAULT_RUN_LIMITS : DEFAULT_CALL_LIMITS,
  ) {
    const merged = { ...defaults };
    for (const key of COUNTERS) {
      const value = limits[key];
      if (value !== undefined) {
        if (!Number.isFinite(value) || value < 0) {
          throw new RangeError(`recovery limit ${key} must be a non-negative number, got ${value}`);
        }
        merged[key] = value;
      }
    }
    this.limits = Object.freeze(merged);
    this.used = Object.fromEntries(COUNTERS.map((key) => [key, 0])) as Record<RecoveryCounter, number>;
  }

  /** A budget for one call that also draws on this one. */
  child(limits: Partial<RecoveryLimits> = {}): RecoveryBudget {
    return new RecoveryBudget(limits, this, DEFAULT_CALL_LIMITS);
  }

  /** How much of `counter` is left here and in every parent. */
  remaining(counter: RecoveryCounter): number {
    const own = this.limits[counter] - this.used[counter];
    return this.parent === null ? own : Math.min(own, this.parent.remaining(counter));
  }

  /** Takes `amount` of `counter` if this budget and every parent allow it; false (and nothing taken) otherwise. */
  take(counter: RecoveryCounter, amount = 1): boolean {
    if (this.remaining(counter) < amount) return false;
    for (let budget: RecoveryBudget | null = this; budget !== null; budget = budget.parent) {
      budget.used[counter] += amount;
    }
    return true;
  }

  usedOf(counter: RecoveryCounter): number {
    return this.used[counter];
  }

  snapshot(): Readonly<Record<RecoveryCounter, number>> {
    return { ...this.used };
  }
}
