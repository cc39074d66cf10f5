import { BatonError } from '../../core/errors.js';
import type { StoredEvent } from '../../core/events.js';
import type { StepResult } from '../../core/run-state.js';
import type { CommandContext } from '../../runtime/commands/context.js';
import { withCommandContext } from '../../runtime/open-store.js';
import { requireRun } from '../../runtime/run-reads.js';
import { readStepResults } from '../../runtime/step-results.js';
import type { RunDetail } from '../../runtime/types.js';
import { EXIT } from '../exit-codes.js';
import { printJson, table } from '../format.js';
import type { GlobalOptions } from '../global-options.js';

/** What a shadow run put in place of a step's real work (from its `step.would_execute` events). */
interface ShadowStandIn {
  /** The step was not run (it has a side effect): its `shadowResult` stood in for its result. */
  result: boolean;
  /** The keys of its `ctx.effect` calls that were not performed (their stand-in was returned). */
  effects: string[];
}

interface StepDifference {
  stepId: string;
  statusA: string | null;
  statusB: string | null;
  same: boolean;
  /** The first line where the results differ (1-based), with both lines; absent when the same. */
  line?: number;
  a?: string;
  b?: string;
  /** Set when run A (B) is a shadow run and something stood in for this step's work. */
  shadowA?: ShadowStandIn;
  shadowB?: ShadowStandIn;
}

/** One side of a diff: the run, its steps' results and what its shadow stand-ins were, by step. */
interface DiffSide {
  run: RunDetail;
  results: Record<string, StepResult>;
  standIns: Record<string, ShadowStandIn>;
}

/** How two runs' results differ, step by step (a shadow run against a reference run, two models, ...). */
function diffRuns(sideA: DiffSide, sideB: DiffSide): StepDifference[] {
  const ids = [
    ...new Set([...sideA.run.steps.map((s) => s.stepId), ...sideB.run.steps.map((s) => s.stepId)]),
  ];
  return ids.map((stepId) => {
    const statusA = sideA.run.steps.find((s) => s.stepId === stepId)?.status ?? null;
    const statusB = sideB.run.steps.find((s) => s.stepId === stepId)?.status ?? null;
    const shadow = {
      ...(sideA.standIns[stepId] ? { shadowA: sideA.standIns[stepId] } : {}),
      ...(sideB.standIns[stepId] ? { shadowB: sideB.standIns[stepId] } : {}),
    };
    const textA = resultText(sideA.results[stepId]);
    const textB = resultText(sideB.results[stepId]);
    if (textA === textB && statusA !== null && statusB !== null)
      return { stepId, statusA, statusB, same: true, ...shadow };
    const linesA = (textA ?? '').split('\n');
    const linesB = (textB ?? '').split('\n');
    let line = 0;
    while (line < Math.max(linesA.length, linesB.length) && linesA[line] === linesB[line]) line++;
    return {
      stepId,
      statusA,
      statusB,
      same: false,
      line: line + 1,
      a: textA === null ? '(no result)' : (linesA[line] ?? '(end)'),
      b: textB === null ? '(no result)' : (linesB[line] ?? '(end)'),
      ...shadow,
    };
  });
}

/** By step: what stood in for real work in a shadow run (empty for a real run). */
function shadowStandIns(events: readonly StoredEvent[]): Record<string, ShadowStandIn> {
  const standIns: Record<string, ShadowStandIn> = {};
  for (const event of events) {
    if (event.type !== 'step.would_execute') continue;
    standIns[event.stepId] ??= { result: false, effects: [] };
    const standIn = standIns[event.stepId]!;
    if (event.effect === undefined) standIn.result = true;
    else if (!standIn.effects.includes(event.effect)) standIn.effects.push(event.effect);
  }
  return standIns;
}

function resultText(result: StepResult | undefined): string | null {
  if (!result) return null;
  return result.value !== undefined ? JSON.stringify(result.value, null, 2) : result.summary;
}

/**
 * `baton diff <runA> <runB>`: exit 0 when every step's result is the same, 1 when any differs. A
 * shadow run is marked as such, and so are its steps whose result or effects were stood in for; a
 * fork (`baton fork`) says which run and step it came from.
 */
export async function diffCommand(
  runIdA: string,
  runIdB: string | undefined,
  options: GlobalOptions & { files?: boolean },
): Promise<number> {
  if (options.files) return (await import('./diff-files.js')).diffFilesCommand(runIdA, runIdB, options);
  return withCommandContext(options, async (ctx) => {
    const runB = runIdB === undefined ? await sameSlotRun(ctx, runIdA) : { runId: runIdB };
    const sideA = await loadSide(ctx, runIdA);
    const sideB = await loadSide(ctx, runB.runId);
    if (runB.note && !options.json) process.stdout.write(`${runB.note}\n`);
    const differences = diffRuns(sideA, sideB);
    const shadowA = sideA.run.plan.shadow === true;
    const shadowB = sideB.run.plan.shadow === true;
    const forkedFrom = { forkedFromA: sideA.run.plan.forkedFrom, forkedFromB: sideB.run.plan.forkedFrom };
    if (options.json)
      printJson({ runA: runIdA, runB: runB.runId, shadowA, shadowB, ...forkedFrom, steps: differences });
    else {
      // A fork and its origin: which run came from which, and from where it ran again.
      for (const [id, fork] of [
        [runIdA, forkedFrom.forkedFromA],
        [runB.runId, forkedFrom.forkedFromB],
      ] as const) {
        if (fork) process.stdout.write(`${id} was forked from run ${fork.runId} at step ${fork.stepId}\n`);
      }
      const name = (id: string, shadow: boolean) => (shadow ? `${id} (shadow)` : id);
      const rows = [['STEP', name(runIdA, shadowA), name(runB.runId, shadowB), 'RESULT']];
      for (const d of differences) {
        const what = d.same ? 'same' : `differs at line ${d.line}: ${clip(d.a)} | ${clip(d.b)}`;
        const notes = [standInNote(runIdA, d.shadowA), standInNote(runB.runId, d.shadowB)].filter(Boolean);
        const noted = notes.length > 0 ? `${what} (${notes.join('; ')})` : what;
        rows.push([d.stepId, d.statusA ?? '(none)', d.statusB ?? '(none)', noted]);
      }
      process.stdout.write(`${table(rows)}\n`);
    }
    return differences.every((d) => d.same) ? EXIT.ok : EXIT.workFailed;
  });
}

function standInNote(runId: string, standIn: ShadowStandIn | undefined): string {
  if (!standIn) return '';
  const parts = [
    ...(standIn.result ? ['shadowResult stood in'] : []),
    ...(standIn.effects.length > 0 ? [`effects not performed: ${standIn.effects.join(', ')}`] : []),
  ];
  return `${runId}: ${parts.join(', ')}`;
}

/**
 * `baton diff <run>` without a second run: the run of the same schedule slot on the other side (the
 * live run of a shadow run's slot, or the reverse), with a line saying which it is.
 */
async function sameSlotRun(ctx: CommandContext, runId: string): Promise<{ runId: string; note?: string }> {
  await requireRun(ctx.store, runId);
  const { slotCounterpart } = await import('../../runtime/schedule-view.js');
  const counterpart = await slotCounterpart(ctx.store, runId);
  const usage =
    'give the run to compare with (baton diff <runA> <runB>), or one run with --files (baton diff <run> --files [<step>])';
  if (counterpart === null)
    throw new BatonError('INVALID_ARGUMENT', `run ${runId} was not started by a schedule slot: ${usage}`);
  const at = new Date(counterpart.slot.slotAt).toISOString();
  const other = counterpart.shadow ? 'live' : 'shadow';
  if (counterpart.runId === null)
    throw new BatonError(
      'INVALID_ARGUMENT',
      `no ${other} run has the slot ${at} of run ${runId} (schedule ${counterpart.slot.schedule}): add a ${other} schedule of the same plan on the same timing, or ${usage}`,
    );
  return {
    runId: counterpart.runId,
    note: `comparing with ${counterpart.runId}, the ${other} run of the same slot ${at} (schedule ${counterpart.schedule})`,
  };
}

/** One run, read through the masking boundary (its large results compared whole). */
async function loadSide(ctx: CommandContext, runId: string): Promise<DiffSide> {
  const run = await requireRun(ctx.store, runId);
  const results = await readStepResults(
    ctx,
    run,
    run.steps.map((s) => s.stepId),
  );
  const standIns = run.plan.shadow === true ? shadowStandIns(await ctx.store.getEvents(runId)) : {};
  return { run, results, standIns };
}

function clip(text: string | undefined): string {
  const line = text ?? '';
  return line.length > 60 ? `${line.slice(0, 57)}...` : line;
}
