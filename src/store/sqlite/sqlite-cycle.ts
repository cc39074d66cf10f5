import type { DueStep } from '../../core/due-order.js';
import { type StoredAttemptVerdict, storedAttemptSays } from '../../core/settle-report.js';
import { CycleRuns, type CycleSink } from '../cycle/cycle-runs.js';
import { RECLAIM_BATCH, ReclaimSchedule, WAIT_LOOK_INTERVAL_MS } from '../cycle/reclaim-schedule.js';
import { runningDelta } from '../flow-accounting.js';
import type { LoadedRun } from '../loaded-run.js';
import type { Completion, CycleRequest, CycleResult } from '../store.js';
import type { AttemptRow } from '../store-rows.js';
import { dueCandidates, dueStepsOf } from './claim-candidates.js';
import type { RunRows } from './run-rows.js';
import type { SqliteFlow } from './sqlite-flow.js';
import type { StoreStatements } from './store-statements.js';

/** Due steps read per query, and at most how many pages one cycle looks through. */
const CLAIM_PAGE = 64;
const CLAIM_MAX_PAGES = 20;

/**
 * The SQLite dialect of a cycle (the decisions are CycleRuns'): runs are loaded as the cycle
 * reaches them, expired leases and due steps come from the database's partial indexes, events and
 * attempts are written as transitions happen, and each changed run and step row once at the end.
 * Writers are serialized by the caller's BEGIN IMMEDIATE, so what it reads is what it changes.
 */
export class SqliteCycle {
  private readonly reclaims = new ReclaimSchedule();
  private readonly waitLooks = new ReclaimSchedule(WAIT_LOOK_INTERVAL_MS);
  private readonly sink: CycleSink;

  constructor(
    private readonly rows: RunRows,
    private readonly statements: StoreStatements,
    private readonly flow: SqliteFlow,
  ) {
    this.sink = {
      event: (runId, at, event, hooks) => this.rows.appendEvent(runId, at, event, hooks),
      attempt: (row) => this.insertAttempt(row),
      artifact: (key, output) =>
        this.statements.insertArtifact.run(
          key.runId,
          key.stepId,
          key.attempt,
          output.path,
          output.size,
          output.sha256,
        ),
      takeKeptEvent: (runId, event) => {
        const row = this.statements.takeKeptEvent.get(runId, event);
        return row ? { dataJson: row.data_json, at: row.sent_at } : null;
      },
    };
  }

  /** One cycle, inside the caller's write transaction (BEGIN IMMEDIATE). */
  run(request: CycleRequest): CycleResult {
    const runs = new CycleRuns<LoadedRun>(request, this.sink);
    const load = (runId: string): LoadedRun | null => {
      if (!runs.isHeld(runId)) runs.hold(runId, this.rows.loadForCycle(runId));
      return runs.entry(runId) ?? null;
    };

    for (const completion of request.completions) {
      load(completion.runId);
      runs.complete(completion, runs.mayRepeatUsage(completion) ? this.storedAttempt(completion) : 'none');
    }

    if (this.reclaims.take(request.now)) {
      for (const row of this.statements.expired.all(request.now, RECLAIM_BATCH)) {
        if (load(row.run_id)) runs.reclaim(row.run_id, row.step_id, row.attempt, row);
      }
    }

    if (request.claimLimit > 0) {
      // Limits of flow keys, read in this transaction (writers are serialized): null when none is set.
      runs.gate = this.flow.gate(request.now);
      this.claim(runs, load);
    }
    // Due waits in runs the claims do not reach (blocked, or no slot free): their runs held here,
    // then moved with the due waits of every run this cycle holds.
    if (this.waitLooks.take(request.now)) {
      for (const runId of this.statements.dueWaits.all(request.now, RECLAIM_BATCH))
        if (request.runId === undefined || runId === request.runId) load(runId);
    }
    runs.moveDueWaits();

    for (const slot of runs.changedRuns())
      this.rows.writeState(slot.entry.state, slot.changed, slot.planChanged, slot.loaded.status, slot.added);
    this.flow.saveStarts(runs.gate);
    this.flow.declare(runs.flowDeclarations.values(), request.now);
    return runs.result();
  }

  private claim(runs: CycleRuns<LoadedRun>, load: (runId: string) => LoadedRun | null): void {
    const { request } = runs;
    const tryClaim = (candidate: DueStep) =>
      load(candidate.runId) && runs.tryClaim(candidate.runId, candidate.stepId);
    // Driving one run that this cycle already loaded: its whole state is in memory, no query needed.
    const driven = request.runId === undefined ? null : (runs.entry(request.runId) ?? null);
    if (driven) {
      for (const candidate of dueStepsOf(driven, request.now)) {
        if (runs.claimsLeft <= 0) break;
        tryClaim(candidate);
      }
      return;
    }
    const seen = new Set<string>();
    let after: DueStep = {
      runId: '',
      stepId: '',
      dueAt: Number.MIN_SAFE_INTEGER,
      rank: Number.MIN_SAFE_INTEGER,
      position: -1,
    };
    for (let page = 0; page < CLAIM_MAX_PAGES && runs.claimsLeft > 0; page++) {
      const stored = this.duePage(runs, after);
      const candidates = page === 0 ? dueCandidates(stored, runs.changedRuns(), request) : stored;
      for (const candidate of candidates) {
        if (runs.claimsLeft <= 0) break;
        const key = `${candidate.runId}\u0000${candidate.stepId}`;
        if (seen.has(key)) continue;
        seen.add(key);
        tryClaim(candidate);
      }
      if (stored.length < CLAIM_PAGE) break;
      after = stored[stored.length - 1]!;
    }
  }

  /** The next page of due steps stored after `after`, leaving out keys at their flow limit. */
  private duePage(runs: CycleRuns<LoadedRun>, after: DueStep): DueStep[] {
    const { request, gate } = runs;
    if (request.runId !== undefined)
      return this.statements.dueCandidatesOfRun.all(
        request.runId,
        request.now,
        after.rank,
        after.dueAt,
        after.position,
        CLAIM_PAGE,
      );
    const saturated = gate ? gate.saturatedKeys((key) => runningDelta(key, runs.held())) : [];
    const from = [
      request.now,
      request.now,
      after.rank,
      after.rank,
      after.dueAt,
      after.runId,
      after.position,
    ] as const;
    return saturated.length > 0
      ? this.statements.dueCandidatesUnsaturated.all(...from, JSON.stringify(saturated), CLAIM_PAGE)
      : this.statements.dueCandidates.all(...from, CLAIM_PAGE);
  }

  /** Positional parameters, in the statement's column order: binding by name costs a lookup each. */
  private insertAttempt(row: AttemptRow): void {
    this.statements.insertAttempt.run(
      row.run_id,
      row.step_id,
      row.attempt,
      row.owner,
      row.started_at,
      row.ended_at,
      row.outcome,
      row.failure_class,
      row.exit_code,
      row.fingerprint,
      row.message,
      row.summary,
      row.log_path,
      JSON.stringify(row.outputs),
      row.input_tokens,
      row.output_tokens,
      row.cost_usd,
    );
  }

  /** What the attempt row of a report that would be discarded says of it (storedAttemptSays). */
  private storedAttempt(completion: Completion): StoredAttemptVerdict {
    const { runId, stepId, attempt } = completion;
    const row = this.statements.storedAttempt.get(runId, stepId, attempt) as
      | { owner: string | null; hasUsage: number }
      | undefined;
    return storedAttemptSays(completion, row && { owner: row.owner, hasUsage: row.hasUsage === 1 });
  }
}
