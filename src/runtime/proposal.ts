import type { Plan, PlanStep } from '../core/plan/types.js';
import type { RunDetail } from '../store/store.js';
import type { CommandContext } from './commands/context.js';
import { type PreparedRun, startRun } from './commands/start-commands.js';
import { formatDuration } from './format.js';
import { planNotes, stepNotes } from './plan-notes.js';
import { requireRun } from './run-reads.js';

/**
 * A proposal: a run stored awaiting a person's approval, and the summary an agent shows them
 * (`baton propose`, the MCP server's `propose`). The summary is made from the run as the masked
 * reads return it, so a secret a plan's text holds is never shown.
 */

/** The question a proposal ends with: the person's answer is the approval's delay. */
export const DELAY_QUESTION =
  'Should Baton wait between steps (for example 2 minutes, for rate-limited APIs)?';

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

/** How a person's answer is given: the commands (CLI) or the tool calls (MCP) that approve or drop it. */
export interface ProposalAnswers {
  approve: string;
  approveWithDelay: string;
  reject: string;
}

export const cliAnswers = (runId: string): ProposalAnswers => ({
  approve: `baton approve ${runId}`,
  approveWithDelay: `baton approve ${runId} --delay 2m`,
  reject: `baton reject ${runId}`,
});

/**
 * What a plan will do, as a proposal's and a schedule's summary list it: its steps in order with
 * what each does (and its waits, conditions, fan-outs, fallbacks and side effects: plan-notes.ts),
 * its inputs, its workspace and how often a step may be tried.
 */
export function describePlanWork(plan: Plan, inputs: Record<string, string>, workspace: string): string[] {
  const lines: string[] = [];
  if (plan.description) lines.push(`  ${plan.description}`);
  plan.steps.forEach((step, index) => {
    const after = step.dependsOn.length > 0 ? ` (after ${step.dependsOn.join(', ')})` : '';
    lines.push(`  ${index + 1}. ${step.title}${after}`);
    const action = shorten(stepAction(step));
    if (action) lines.push(`     ${action}`);
    for (const note of stepNotes(step)) lines.push(`     ${note}`);
    if (step.requiredOutputs.length > 0) lines.push(`     produces: ${step.requiredOutputs.join(', ')}`);
    if (step.delayBeforeMs > 0)
      lines.push(`     waits ${formatDuration(step.delayBeforeMs)} before starting`);
  });
  lines.push(...planNotes(plan));
  const given = Object.entries(inputs);
  if (given.length > 0) lines.push(`Inputs: ${given.map(([k, v]) => `${k}=${shorten(v, 60)}`).join(', ')}`);
  lines.push(`Workspace: ${workspace}`);
  lines.push(
    `Each step may be tried up to ${Math.max(...plan.steps.map((s) => s.retry.maxAttempts))} times; at most ${plan.limits.maxSteps} attempts in all.`,
  );
  return lines;
}

/** A summary an agent can show its user as is: what will run, in what order, and the one question. */
export function describeProposal(run: RunDetail, answers: ProposalAnswers = cliAnswers(run.id)): string {
  const lines = [
    `Proposed plan "${run.planName}" (run ${run.id}), ${run.steps.length} steps:`,
    ...describePlanWork(run.plan, run.inputs, run.workspace),
  ];
  lines.push('');
  lines.push(DELAY_QUESTION);
  lines.push(`  approve without waiting:  ${answers.approve}`);
  lines.push(`  approve with a pause:     ${answers.approveWithDelay}`);
  lines.push(`  drop it:                  ${answers.reject}`);
  return lines.join('\n');
}

/**
 * `baton propose`, the MCP server's `propose`: stores `prepared` (made with `awaitingApproval`) and
 * returns the run as the masking boundary answers it, with its summary.
 */
export async function proposeRun(
  ctx: CommandContext,
  prepared: Pick<PreparedRun, 'run' | 'idGiven'>,
  answers?: ProposalAnswers,
): Promise<{ run: RunDetail; summary: string }> {
  const started = await startRun(ctx, prepared);
  const run = await requireRun(ctx.store, started.run.id);
  return { run, summary: describeProposal(run, answers) };
}
