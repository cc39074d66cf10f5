import type { Plan } from '../../core/plan/types.js';
import { trustedPrograms } from '../../executors/trusted-programs.js';
import type { RerunSummary } from '../../store/store.js';
import { type ForkedRun, forkRun as storeFork } from '../fork-run.js';
import { defaultAgent } from '../settings.js';
import { decidedBy } from '../wait-inputs.js';
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
  /** Who asks, recorded on the timeline; default the OS user. */
  by?: string;
}

/** `baton rerun <run> --from <step>`: the step and the steps after it run again, in one transaction. */
export async function rerunRun(ctx: CommandContext, request: RerunRequest): Promise<RerunSummary> {
  const summary = await ctx.store.rerunFrom(
    request.runId,
    {
      from: request.from,
      only: request.only === true,
      redoEffects: request.redoEffects === true,
      by: decidedBy(request.by),
    },
    ctx.now(),
  );
  ctx.nudge();
  return summary;
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
}

/**
 * `baton fork <run> --from <step>`: a new run that keeps the results of the steps before `from`.
 * The old run is read as stored (its kept results are copied as they are); the answer is masked.
 */
export async function forkRun(ctx: CommandContext, request: ForkRequest): Promise<ForkedRun> {
  const agent = defaultAgent(request.agent, ctx.env);
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
    batonHome: ctx.home,
    trust: () => trustedPrograms(ctx.home, ctx.env),
    now: ctx.now(),
  });
  ctx.nudge();
  const summary =
    (await ctx.store.getRunSteps(forked.summary.id, { statuses: [], everyStepUpTo: 0 })) ?? forked.summary;
  return { ...forked, summary };
}
