import { fallbackPlanStep } from '../core/fallback.js';
import { modelLabel } from '../core/model-label.js';
import { type EndedUsage, NO_STEPS, type Store } from '../store/store.js';

/** Steps whose labels are held at most (every plan's, added up): beyond it, the cache starts again. */
const CACHE_LIMIT_STEPS = 100_000;

/**
 * The `model` label of the attempts a metrics snapshot reports usage of (`EndedUsage`), as the
 * engine that ran them gives it (core/model-label.ts of the step it claimed: the plan's
 * step, or its fallback once that took over). Plans are immutable for a hash (a fan-out's
 * expansion stores its run's plan under a new hash, items included: sqlite/run-rows.ts,
 * postgres/write-batch.ts): each plan is read (`getRunSteps` without step rows) and labelled once
 * per hash, not once per attempt or scrape.
 */
export class PlanModelLabels {
  /** Per plan hash: per step id, its own label and its fallback's. */
  private readonly plans = new Map<string, Map<string, readonly [own: string, fallback: string]>>();
  private steps = 0;

  constructor(private readonly store: Store) {}

  /** The label of `usage`'s attempts; null when its run is gone (deleted since the snapshot). */
  async labelOf(usage: EndedUsage): Promise<string | null> {
    let labels = this.plans.get(usage.planHash);
    if (labels === undefined) {
      const run = await this.store.getRunSteps(usage.runId, NO_STEPS);
      if (run === null) return null;
      labels = new Map(
        run.plan.steps.map(
          (step) => [step.id, [modelLabel(step), modelLabel(fallbackPlanStep(step))]] as const,
        ),
      );
      if (this.steps + labels.size > CACHE_LIMIT_STEPS) {
        this.plans.clear();
        this.steps = 0;
      }
      this.plans.set(usage.planHash, labels);
      this.steps += labels.size;
    }
    const step = labels.get(usage.stepId);
    return step === undefined ? null : step[usage.onFallback ? 1 : 0];
  }
}
