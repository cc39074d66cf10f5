import { redactValue } from '../core/redact.js';
import { planSecretEnv, runSecrets } from '../core/run-secrets.js';
import { currentCheckpoints, isStepOrItemOf } from '../core/workspace-checkpoint.js';
import { changedFiles, type FileChange, unifiedDiff } from '../executors/workspace-checkpoints.js';
import type { CommandContext } from './commands/context.js';
import { requireRun, requireStepOf } from './run-reads.js';

/**
 * `baton diff <run> --files [<step>]`: what each checkpointed step (`checkpoint: workspace`) added,
 * changed and removed in the workspace, from the tree before its current execution's first attempt
 * to the tree after its latest, with a unified diff of the text files. Names and diffs are masked
 * with the secrets of the process and of the run's plan, like a step's log.
 */

/** How a change is marked in lists: added, changed (modified), removed (deleted). */
export const CHANGE_MARKS = { added: 'A', changed: 'M', removed: 'D' } as const;

export interface StepFileChanges {
  stepId: string;
  /** The latest attempt whose end was recorded; null: none ended with a record (no changes known). */
  attempt: number | null;
  before: string;
  after: string | null;
  changes: FileChange[];
  /** The unified diff (git's `Binary files ... differ` for binary files), at most `maxBytes`. */
  patch: string;
  truncated: boolean;
}

export interface FileChangesRequest {
  runId: string;
  /** One step (or a fan-out group: its items); default every checkpointed step. */
  stepId?: string;
  /** The unified diff of each step, at most this many bytes. Default 256 KiB. */
  maxBytes?: number;
}

export async function readFileChanges(
  ctx: CommandContext,
  request: FileChangesRequest,
): Promise<{ runId: string; steps: StepFileChanges[] }> {
  const run = await requireRun(ctx.store, request.runId);
  if (request.stepId !== undefined) requireStepOf(run, request.stepId);
  const wanted = (stepId: string) =>
    request.stepId === undefined || isStepOrItemOf(run.plan, stepId, request.stepId);
  const secrets = runSecrets({ env: ctx.env, values: ctx.secretValues, plan: planSecretEnv(run.plan) });
  const steps: StepFileChanges[] = [];
  for (const [stepId, entry] of currentCheckpoints(run.plan, await ctx.store.getEvents(run.id))) {
    if (!wanted(stepId) || entry.before === null) continue;
    const after = entry.after && entry.after.seq > entry.before.seq ? entry.after : null;
    const changes = after ? await changedFiles(ctx.home, entry.before.tree, after.tree) : [];
    const patch = after
      ? await unifiedDiff(ctx.home, entry.before.tree, after.tree, [], request.maxBytes)
      : { text: '', truncated: false };
    steps.push(
      redactValue(
        {
          stepId,
          attempt: after?.attempt ?? null,
          before: entry.before.tree,
          after: after?.tree ?? null,
          changes,
          patch: patch.text,
          truncated: patch.truncated,
        },
        secrets,
      ),
    );
  }
  const order = new Map(run.steps.map((step, index) => [step.stepId, index]));
  steps.sort((a, b) => (order.get(a.stepId) ?? 0) - (order.get(b.stepId) ?? 0));
  return { runId: run.id, steps };
}
