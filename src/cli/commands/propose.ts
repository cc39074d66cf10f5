import { runNotFound } from '../../core/errors.js';
import type { PlanStep } from '../../core/plan/types.js';
import { startRun } from '../../engine/start-run.js';
import { formatDuration } from '../../runtime/format.js';
import { openStore } from '../../runtime/open-store.js';
import { parseDurationOption } from '../../runtime/parse-values.js';
import type { RunDetail } from '../../store/store.js';
import { EXIT } from '../exit-codes.js';
import { printJson } from '../format.js';
import type { GlobalOptions } from '../global-options.js';
import { prepareRunFromCli } from '../prepare-run.js';
import type { RunOptions } from './run.js';

function shorten(text: string, max = 160): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > max ? `${line.slice(0, max - 3)}...` : line;
}

function stepAction(step: PlanStep): string {
  if (step.kind === 'fn') return `function ${step.fn}`;
  if (step.kind === 'model' && step.model)
    return `${step.model.provider} ${step.model.model}: ${step.model.prompt}`;
  return step.instruction ?? '';
}

/** A summary an agent can show its user as is: what will run, in what order, and the one question. */
function describeProposal(run: RunDetail): string {
  const lines = [`Proposed plan "${run.planName}" (run ${run.id}), ${run.steps.length} steps:`];
  if (run.plan.description) lines.push(`  ${run.plan.description}`);
  run.plan.steps.forEach((step, index) => {
    const after = step.dependsOn.length > 0 ? ` (after ${step.dependsOn.join(', ')})` : '';
    lines.push(`  ${index + 1}. ${step.title}${after}`);
    lines.push(`     ${shorten(stepAction(step))}`);
    if (step.requiredOutputs.length > 0) lines.push(`     produces: ${step.requiredOutputs.join(', ')}`);
    if (step.delayBeforeMs > 0)
      lines.push(`     waits ${formatDuration(step.delayBeforeMs)} before starting`);
  });
  const inputs = Object.entries(run.inputs);
  if (inputs.length > 0) lines.push(`Inputs: ${inputs.map(([k, v]) => `${k}=${shorten(v, 60)}`).join(', ')}`);
  lines.push(`Workspace: ${run.workspace}`);
  lines.push(
    `Each step may be tried up to ${Math.max(...run.plan.steps.map((s) => s.retry.maxAttempts))} times; at most ${run.plan.limits.maxSteps} attempts in all.`,
  );
  lines.push('');
  lines.push('Should Baton wait between steps (for example 2 minutes, for rate-limited APIs)?');
  lines.push(`  approve without waiting:  baton approve ${run.id}`);
  lines.push(`  approve with a pause:     baton approve ${run.id} --delay 2m`);
  lines.push(`  drop it:                  baton reject ${run.id}`);
  return lines.join('\n');
}

/** `baton propose <plan>`: validate and store a run that waits for a human's approval. */
export async function proposeCommand(planPath: string, options: RunOptions): Promise<number> {
  const { prepared } = await prepareRunFromCli(planPath, options, { awaitingApproval: true });
  const store = await openStore(options);
  try {
    const created = await startRun(store, prepared);
    const run = (await store.getRun(created.id))!;
    if (options.json) printJson({ ...run, summary: describeProposal(run) });
    else process.stdout.write(`${describeProposal(run)}\n`);
    return EXIT.ok;
  } finally {
    await store.close();
  }
}

/** `baton approve <run> [--delay 2m]` and `baton reject <run>`. */
export async function decideCommand(
  decision: 'approve' | 'reject',
  runId: string,
  options: GlobalOptions & { delay?: string },
): Promise<number> {
  const store = await openStore(options, 'read');
  try {
    if (!(await store.getRun(runId))) throw runNotFound(runId);
    const delayMs = options.delay ? parseDurationOption(options.delay, '--delay') : 0;
    const summary =
      decision === 'approve'
        ? await store.approveRun(runId, Date.now(), delayMs)
        : await store.rejectRun(runId, Date.now());
    if (options.json) printJson(summary);
    else if (decision === 'approve') {
      const pause = delayMs > 0 ? `, waiting ${formatDuration(delayMs)} between steps` : '';
      process.stdout.write(`run ${runId} approved${pause}; drive it with baton check (or baton worker)\n`);
    } else process.stdout.write(`run ${runId} rejected; nothing of it will run\n`);
    return EXIT.ok;
  } finally {
    await store.close();
  }
}
