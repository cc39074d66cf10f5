import { runNotFound } from '../../core/errors.js';
import type { StepResult } from '../../core/run-state.js';
import type { RunDetail, Store } from '../../store/store.js';
import { EXIT } from '../exit-codes.js';
import { printJson, table } from '../format.js';
import type { GlobalOptions } from '../home.js';
import { openStore } from '../open-store.js';

export interface StepDifference {
  stepId: string;
  statusA: string | null;
  statusB: string | null;
  same: boolean;
  /** The first line where the results differ (1-based), with both lines; absent when the same. */
  line?: number;
  a?: string;
  b?: string;
}

/** How two runs' results differ, step by step (a shadow run against a reference run, two models, ...). */
export function diffRuns(
  runA: RunDetail,
  resultsA: Record<string, StepResult>,
  runB: RunDetail,
  resultsB: Record<string, StepResult>,
): StepDifference[] {
  const ids = [...new Set([...runA.steps.map((s) => s.stepId), ...runB.steps.map((s) => s.stepId)])];
  return ids.map((stepId) => {
    const statusA = runA.steps.find((s) => s.stepId === stepId)?.status ?? null;
    const statusB = runB.steps.find((s) => s.stepId === stepId)?.status ?? null;
    const textA = resultText(resultsA[stepId]);
    const textB = resultText(resultsB[stepId]);
    if (textA === textB && statusA !== null && statusB !== null)
      return { stepId, statusA, statusB, same: true };
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
    };
  });
}

function resultText(result: StepResult | undefined): string | null {
  if (!result) return null;
  return result.value !== undefined ? JSON.stringify(result.value, null, 2) : result.summary;
}

/** `baton diff <runA> <runB>`: exit 0 when every step's result is the same, 1 when any differs. */
export async function diffCommand(runIdA: string, runIdB: string, options: GlobalOptions): Promise<number> {
  const store = await openStore(options, 'read');
  try {
    const [runA, resultsA] = await loadRun(store, runIdA);
    const [runB, resultsB] = await loadRun(store, runIdB);
    const differences = diffRuns(runA, resultsA, runB, resultsB);
    if (options.json) printJson({ runA: runIdA, runB: runIdB, steps: differences });
    else {
      const rows = [['STEP', runIdA, runIdB, 'RESULT']];
      for (const d of differences) {
        const what = d.same ? 'same' : `differs at line ${d.line}: ${clip(d.a)} | ${clip(d.b)}`;
        rows.push([d.stepId, d.statusA ?? '(none)', d.statusB ?? '(none)', what]);
      }
      process.stdout.write(`${table(rows)}\n`);
    }
    return differences.every((d) => d.same) ? EXIT.ok : EXIT.workFailed;
  } finally {
    await store.close();
  }
}

async function loadRun(store: Store, runId: string): Promise<[RunDetail, Record<string, StepResult>]> {
  const run = await store.getRun(runId);
  if (!run) throw runNotFound(runId);
  const results = await store.getStepResults(
    runId,
    run.steps.map((s) => s.stepId),
  );
  return [run, results];
}

function clip(text: string | undefined): string {
  const line = text ?? '';
  return line.length > 60 ? `${line.slice(0, 57)}...` : line;
}
