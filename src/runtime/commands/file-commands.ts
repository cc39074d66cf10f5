import { BatonError, runNotFound } from '../../core/errors.js';
import { type FileChangesRequest, readFileChanges, type StepFileChanges } from '../file-changes.js';
import { decidedBy } from '../wait-inputs.js';
import {
  checkpointOfStep,
  type FilesRestored,
  finishInterruptedRestores,
  restoreRunFiles,
} from '../workspace-restore.js';
import type { CommandContext } from './context.js';

/**
 * A run's workspace checkpoints (`checkpoint: workspace`), the same for every front door: what each
 * step changed (`baton diff --files`), and putting the files back as they were before a step
 * (`baton rollback`). Reruns and forks restore through runtime/commands/rerun-commands.ts.
 */

export interface RollbackRequest {
  runId: string;
  /** The files go back to how they were before this step's first attempt (of its latest rerun). */
  stepId: string;
  /** Who asks, recorded on the event; default the OS user. */
  by?: string;
}

/**
 * `baton rollback <run> <step>`: the workspace as it was before the step, recorded as a
 * `run.files_restored` event; the steps keep their state. Refused while the run may start a step.
 */
export async function rollbackRun(ctx: CommandContext, request: RollbackRequest): Promise<FilesRestored> {
  const run = await ctx.unmasked.getRun(request.runId);
  if (!run) throw runNotFound(request.runId);
  const checkpoint = await checkpointOfStep(ctx.unmasked, run, request.stepId);
  if (!checkpoint) {
    throw new BatonError(
      'INVALID_ARGUMENT',
      `run ${run.id}: no checkpoint was recorded before step ${request.stepId} (checkpoint: workspace in the plan records one before each agent step)`,
    );
  }
  const by = decidedBy(request.by);
  return restoreRunFiles(ctx.unmasked, ctx.home, run, checkpoint, 'rollback', null, (restored) =>
    ctx.unmasked.appendEvents(
      run.id,
      [{ type: 'run.files_restored', ...restored, cause: 'rollback', by }],
      ctx.now(),
    ),
  );
}

/** What each checkpointed step of a run changed in its workspace (masked). */
export async function fileChanges(
  ctx: CommandContext,
  request: FileChangesRequest,
): Promise<{ runId: string; steps: StepFileChanges[] }> {
  // An interrupted restore is finished first: the trees a diff compares are then the only truth.
  await finishInterruptedRestores(ctx.unmasked, ctx.home);
  return readFileChanges(ctx, request);
}
