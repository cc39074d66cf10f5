import { runNotFound } from '../../core/errors.js';
import type { Plan } from '../../core/plan/types.js';
import { planHasCheckpoints } from '../../core/workspace-checkpoint.js';
import { trustedPrograms } from '../../executors/trusted-programs.js';
import type { RerunSummary } from '../../store/store.js';
import { type ForkedRun, forkRun as storeFork } from '../fork-run.js';
import { defaultAgent } from '../settings.js';
import { decidedBy } from '../wait-inputs.js';
import {
  checkpointOfStep,
  type FilesRestored,
  finishInterruptedRestores,
  restoreRunFiles,
} from '../workspace-restore.js';
import type { CommandContext } from './context.js';

/** Doing part of a run again, the same for every front door (`baton rerun` and `fork`, `Baton`, the console, MCP). */

export interface RerunRequest {
  runId: string;
  /** The step to run again, with every step that depends on it. */
  from: string;
  /** It alone: the steps after it keep their results (stale). */
  only?: boolean;
  /** Forget the effects the rerun steps recorded (`ctx.effect`), so they happen again. */
  redoEffects?: boolean;
  /** Steps after `from` that keep their results and do not run (what they did is not done again). */
  keep?: readonly string[];
  /** Keep every succeeded `idempotent` or `unsafe` step after `from`. */
  keepEffects?: boolean;
  /** Who asks, recorded on the timeline; default the OS user. */
  by?: string;
  /**
   * Leave the workspace as it is. Default: when the step's attempts were checkpointed
   * (`checkpoint: workspace`), its files are put back as they were before it first.
   */
  keepFiles?: boolean;
}

/** A rerun, with what became of the workspace. */
export interface RerunAnswer extends RerunSummary {
  /** The files put back as they were before `stepId`; null: left as they are (`filesKept` says why). */
  filesRestored: FilesRestored | null;
  filesKept: string | null;
}

/**
 * `baton rerun <run> --from <step>`: the step and the steps after it run again, in one transaction;
 * first, unless `keepFiles`, the workspace goes back to its checkpoint before the step
 * (runtime/workspace-restore.ts: refused while the run may start a step, safe against a crash).
 */
export async function rerunRun(ctx: CommandContext, request: RerunRequest): Promise<RerunAnswer> {
  const by = decidedBy(request.by);
  const rerun = () =>
    ctx.store.rerunFrom(
      request.runId,
      {
        from: request.from,
        only: request.only === true,
        redoEffects: request.redoEffects === true,
        ...(request.keep && request.keep.length > 0 ? { keep: request.keep } : {}),
        ...(request.keepEffects === true ? { keepEffects: true } : {}),
        by,
      },
      ctx.now(),
    );
  let filesKept: string | null = 'kept as they are (--keep-files)';
  let filesRestored: FilesRestored | null = null;
  let summary: RerunSummary | undefined;
  if (request.keepFiles !== true) {
    const run = await ctx.unmasked.getRun(request.runId);
    if (!run) throw runNotFound(request.runId);
    const checkpoint = await checkpointOfStep(ctx.unmasked, run, request.from);
    // A step that is not checkpointed keeps the files without a word (as before checkpoints).
    filesKept =
      checkpoint || !planHasCheckpoints(run.plan)
        ? null
        : `kept as they are: no checkpoint was recorded before ${request.from}`;
    if (checkpoint) {
      filesRestored = await restoreRunFiles(
        ctx.unmasked,
        ctx.home,
        run,
        checkpoint,
        'rerun',
        '--keep-files',
        async (restored) => {
          summary = await rerun();
          await ctx.unmasked.appendEvents(
            run.id,
            [{ type: 'run.files_restored', ...restored, cause: 'rerun', by }],
            ctx.now(),
          );
        },
      );
    }
  }
  summary ??= await rerun();
  ctx.nudge();
  return { ...summary, filesRestored, filesKept };
}

export interface ForkRequest {
  runId: string;
  from: string;
  /** An edited plan (its kept steps unchanged); default the old run's. */
  plan?: Plan;
  planPath?: string;
  /** Inputs that change; the others are the old run's. */
  inputs?: Record<string, string>;
  /** The new run's id; default `<old id>-fork-<random>`. */
  newRunId?: string;
  /** The new run's workspace, used as it is; default a copy of the old one under `<home>/workspaces/`. */
  workspace?: string;
  allowWorkspace?: string;
  /** The agent of steps whose plan sets none (`--agent`); default BATON_AGENT_CMD. */
  agent?: string;
  /** Copy the old workspace as it ended, not as it was before `from` (its checkpoint). */
  keepFiles?: boolean;
  /** Who asks, recorded on the timeline; default the OS user. */
  by?: string;
}

/**
 * `baton fork <run> --from <step>`: a new run that keeps the results of the steps before `from`.
 * The old run is read as stored (its kept results are copied as they are); the answer is masked.
 */
export async function forkRun(ctx: CommandContext, request: ForkRequest): Promise<ForkedRun> {
  const agent = defaultAgent(request.agent, ctx.env);
  // The old run's folder is copied: an interrupted restore of it is finished (or undone) first.
  await finishInterruptedRestores(ctx.unmasked, ctx.home);
  const forked = await storeFork(ctx.unmasked, {
    runId: request.runId,
    from: request.from,
    ...(request.plan ? { plan: request.plan } : {}),
    ...(request.planPath ? { planPath: request.planPath } : {}),
    ...(request.inputs ? { inputs: request.inputs } : {}),
    ...(request.newRunId ? { newRunId: request.newRunId } : {}),
    ...(request.workspace ? { workspace: request.workspace } : {}),
    ...(request.allowWorkspace ? { allowWorkspace: request.allowWorkspace } : {}),
    ...(agent ? { defaultAgent: agent } : {}),
    keepFiles: request.keepFiles === true,
    by: decidedBy(request.by),
    batonHome: ctx.home,
    trust: () => trustedPrograms(ctx.home, ctx.env),
    now: ctx.now(),
  });
  ctx.nudge();
  const summary =
    (await ctx.store.getRunSteps(forked.summary.id, { statuses: [], everyStepUpTo: 0 })) ?? forked.summary;
  return { ...forked, summary };
}
