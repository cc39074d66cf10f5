import { FAILURE_CLASSES, type StepUsage } from '../core/failure.js';
import { ModelSeries } from '../core/model-label.js';
import { RUN_STATUSES, STEP_STATUSES } from '../core/run-state.js';
import { CYCLE_SECONDS_BUCKETS, type EngineMeter } from '../engine/engine-meter.js';
import type { EndedAttempts, EndedUsage, MetricsSnapshot, Store } from '../store/store.js';
import { maskedReads } from './masked-reads.js';
import { MetricsText } from './metrics-text.js';
import { PlanModelLabels } from './model-labels.js';

/** This process's engine tallies, made by the door that serves `/metrics` beside its engine. */
export { EngineMeter } from '../engine/engine-meter.js';
export { METRICS_CONTENT_TYPE } from './metrics-text.js';

interface MetricsOptions {
  /** Default Date.now. */
  now?: () => number;
  /**
   * How long an event seq must have been the newest before the attempts up to it are counted (ms).
   * PostgreSQL gives seqs when a transaction writes, not when it commits, so a lower one can still
   * appear (as the console's event-cursor.ts waits at gaps). Default: 0 on SQLite (one writer at a
   * time), 5000 on PostgreSQL.
   */
  settleMs?: number;
  /** This process's engine tallies (claim-cycle latency); absent: not exported. */
  meter?: EngineMeter;
  /**
   * What the store's answers are masked with (its model labels come from plan text), when it is
   * not a masked store already (a door's `CommandContext.store`). Default process.env, no values.
   */
  masking?: { env: NodeJS.ProcessEnv; secretValues: readonly string[] };
}

const OUTCOMES = ['succeeded', 'degraded'] as const;

/**
 * `/metrics` of `baton serve --metrics` and `Baton.metrics()`: each scrape reads one
 * `Store.metricsSnapshot` (gauges of every worker's runs, steps, leases and hook calls) and adds the
 * attempts ended since the last scrape to counters that start at this process's first scrape (the
 * event log is every worker's, so any one process exports them all; a restart resets them, which
 * Prometheus' rate() and increase() expect of a counter). Tokens and cost by model are counted the
 * same way, from the attempt rows of those attempts: every process that exports them (serve, a
 * worker, a service) says the same of every worker's attempts, those of `baton run` and `check`
 * too. The engine's claim-cycle latency, a property of each process, is added when it runs one.
 * Labels are bounded: statuses, outcomes, failure classes, and model labels, which come from plan
 * text: cut to MAX_MODEL_LABEL_CHARS, and past MAX_MODEL_LABELS models counted as `other`
 * (core/model-label.ts).
 */
export class BatonMetrics {
  private readonly now: () => number;
  private readonly settleMs: number;
  /** Events up to this seq are counted (null: before the first scrape). */
  private counted: number | null = null;
  /** The newest seq seen at each scrape not yet settled, oldest first. */
  private readonly seen: { at: number; seq: number }[] = [];
  private readonly attempts = new Map<string, number>();
  /** Per model label (core/model-label.ts), at most MAX_MODEL_LABELS and `other`. */
  private readonly usage = new Map<string, StepUsage>();
  private readonly labels: PlanModelLabels;
  private readonly modelSeries = new ModelSeries();
  private leasesReclaimed = 0;
  private attemptsStalled = 0;
  private scraping: Promise<string> | null = null;
  /** The store behind the masking boundary. */
  private readonly store: Store;

  constructor(
    store: Store,
    private readonly options: MetricsOptions = {},
  ) {
    // Read through the masking boundary, as every answer is: labels come from plan text.
    this.store = maskedReads(store, options.masking?.env ?? process.env, options.masking?.secretValues);
    this.now = options.now ?? Date.now;
    this.settleMs = options.settleMs ?? (store.kind === 'postgres' ? 5000 : 0);
    this.labels = new PlanModelLabels(this.store);
  }

  /** The exposition (Prometheus text format 0.0.4). Scrapes at the same time share one read. */
  async text(): Promise<string> {
    this.scraping ??= this.scrape().finally(() => {
      this.scraping = null;
    });
    return this.scraping;
  }

  private async scrape(): Promise<string> {
    const started = performance.now();
    const now = this.now();
    const newest = await this.store.lastEventSeq();
    this.counted ??= newest;
    this.seen.push({ at: now, seq: newest });
    let upToSeq = this.counted;
    while (this.seen.length > 0 && this.seen[0]!.at <= now - this.settleMs)
      upToSeq = Math.max(upToSeq, this.seen.shift()!.seq);
    const snapshot = await this.store.metricsSnapshot({ now, events: { afterSeq: this.counted, upToSeq } });
    // Labelled before any counter moves: a scrape that fails reading a plan counts nothing, and the
    // next one counts the same range again.
    const usage: [string, EndedUsage][] = [];
    for (const ended of snapshot.usageEnded) {
      // Null: the run was deleted since the snapshot (retention); its usage goes uncounted.
      const label = await this.labels.labelOf(ended);
      if (label !== null) usage.push([label, ended]);
    }
    for (const [model, ended] of usage) {
      const label = this.modelSeries.seriesOf(model);
      const total = this.usage.get(label) ?? { inputTokens: 0, outputTokens: 0, costUsd: 0 };
      total.inputTokens += ended.inputTokens;
      total.outputTokens += ended.outputTokens;
      total.costUsd += ended.costUsd;
      this.usage.set(label, total);
    }
    for (const ended of snapshot.attemptsEnded)
      this.attempts.set(attemptKey(ended), (this.attempts.get(attemptKey(ended)) ?? 0) + ended.count);
    this.leasesReclaimed += snapshot.leasesReclaimed;
    this.attemptsStalled += snapshot.attemptsStalled;
    this.counted = upToSeq;
    const out = new MetricsText();
    this.writeStore(out, snapshot, now);
    writeUsage(out, this.usage);
    if (this.options.meter) writeCycles(out, this.options.meter);
    out
      .family('baton_metrics_scrape_seconds', 'gauge', 'How long this scrape read the store.')
      .sample('baton_metrics_scrape_seconds', (performance.now() - started) / 1000);
    return out.text();
  }

  private writeStore(out: MetricsText, snapshot: MetricsSnapshot, now: number): void {
    out.family('baton_runs', 'gauge', 'Stored runs, by status.');
    for (const status of RUN_STATUSES) out.sample('baton_runs', snapshot.runs[status] ?? 0, { status });
    out.family(
      'baton_steps',
      'gauge',
      'Steps of runs not finished (awaiting approval, running, blocked), by status.',
    );
    for (const status of STEP_STATUSES) out.sample('baton_steps', snapshot.steps[status] ?? 0, { status });
    out
      .family('baton_steps_due', 'gauge', 'Steps of running runs due now: what workers would claim next.')
      .sample('baton_steps_due', snapshot.dueSteps)
      .family(
        'baton_oldest_due_step_age_seconds',
        'gauge',
        'How long the step due longest has been due (0: none due). Rising: no worker claims.',
      )
      .sample(
        'baton_oldest_due_step_age_seconds',
        snapshot.oldestDueAt === null ? 0 : Math.max(0, now - snapshot.oldestDueAt) / 1000,
      )
      .family('baton_steps_waiting', 'gauge', 'Steps waiting for a person or an event.')
      .sample('baton_steps_waiting', snapshot.steps.waiting ?? 0)
      .family(
        'baton_leases_expired',
        'gauge',
        'Running steps whose lease ran out (a worker died or stalled), not yet reclaimed.',
      )
      .sample('baton_leases_expired', snapshot.expiredLeases);
    out.family(
      'baton_attempts_total',
      'counter',
      "Attempts ended (every worker's, from the event log), by outcome and failure class.",
    );
    for (const outcome of OUTCOMES)
      out.sample('baton_attempts_total', this.attempts.get(`${outcome}/`) ?? 0, { outcome, class: '' });
    for (const failureClass of FAILURE_CLASSES)
      out.sample('baton_attempts_total', this.attempts.get(`failed/${failureClass}`) ?? 0, {
        outcome: 'failed',
        class: failureClass,
      });
    out
      .family(
        'baton_leases_reclaimed_total',
        'counter',
        "Expired leases reclaimed (every worker's, from the event log): attempts of a worker that died or stalled.",
      )
      .sample('baton_leases_reclaimed_total', this.leasesReclaimed)
      .family(
        'baton_attempts_stalled_total',
        'counter',
        "Attempts stopped as stalled (every worker's, from the event log): agents with no output and no workspace change for agent.stallTimeoutMs, functions without ctx.heartbeat() for heartbeatTimeoutMs, model steps whose stream was silent for model.stallTimeoutMs. Each also counts in baton_attempts_total (transient, or unknown_outcome for an unsafe step).",
      )
      .sample('baton_attempts_stalled_total', this.attemptsStalled)
      .family(
        'baton_hook_deliveries',
        'gauge',
        'Hook calls of stored runs: owed (pending), owed after failing (retrying), given up (failed).',
      )
      .sample('baton_hook_deliveries', snapshot.hookDeliveries.pending, { state: 'pending' })
      .sample('baton_hook_deliveries', snapshot.hookDeliveries.retrying, { state: 'retrying' })
      .sample('baton_hook_deliveries', snapshot.hookDeliveries.failed, { state: 'failed' });
  }
}

function attemptKey(ended: EndedAttempts): string {
  return `${ended.outcome}/${ended.failureClass ?? ''}`;
}

function writeCycles(out: MetricsText, meter: EngineMeter): void {
  out
    .family(
      'baton_claim_cycle_seconds',
      'histogram',
      "This process's store cycles (commit finished attempts, reclaim leases, claim due steps).",
    )
    .histogram('baton_claim_cycle_seconds', CYCLE_SECONDS_BUCKETS, meter.cycleBuckets, meter.cycleSeconds);
}

/**
 * Usage by model, from the store alone, even in a process whose engine saw its own attempts' usage:
 * one source, so an attempt is counted once, and every process's figure is every worker's (as
 * `baton_attempts_total`), whichever process a dashboard reads, attempts of processes that export
 * nothing (`baton run`, `check`) included.
 */
function writeUsage(out: MetricsText, usage: ReadonlyMap<string, StepUsage>): void {
  out.family(
    'baton_tokens_total',
    'counter',
    "Tokens reported by attempts ended (every worker's, from the attempt rows), by model and direction.",
  );
  for (const [model, total] of usage) {
    out.sample('baton_tokens_total', total.inputTokens, { model, direction: 'input' });
    out.sample('baton_tokens_total', total.outputTokens, { model, direction: 'output' });
  }
  out.family(
    'baton_cost_usd_total',
    'counter',
    "Cost in US dollars reported by attempts ended (every worker's, from the attempt rows), by model.",
  );
  for (const [model, total] of usage) out.sample('baton_cost_usd_total', total.costUsd, { model });
}
