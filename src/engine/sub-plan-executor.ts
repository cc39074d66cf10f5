import { isBatonError } from '../core/errors.js';
import type { StepOutcome } from '../core/failure.js';
import type { Plan } from '../core/plan/types.js';
import { childOutput, childPlan, childRunId } from '../core/sub-plans.js';
import { renderStepText } from '../executors/render-step-text.js';
import type { AttemptResult, ExecutionContext, StepExecutor } from '../executors/step-executor.js';
import { trustedPrograms } from '../executors/trusted-programs.js';
import { NO_STEPS, type RunDetail, type RunWithSteps, type Store } from '../store/store.js';
import { prepareRun } from './start-run.js';

export interface SubPlanExecutorOptions {
  home: string;
  /** How often a waiting attempt looks at its child when nothing pokes it. */
  pollMs: number;
  env?: NodeJS.ProcessEnv;
  /** A child run was stored: its first steps are due now (the engine cycles at once). */
  onChildStarted?: () => void;
}

/**
 * Runs the attempts of sub-plan steps (core/sub-plans.ts): starts the child run, once, then waits for
 * it to end, looking at it when a cycle of the engine ended it, else at the poll interval (another
 * process may end it). It holds the step's lease but no worker slot (the engine does not count it), so the
 * child's steps run beside it. An attempt stopped because its run was cancelled cancels the child.
 */
export class SubPlanExecutor implements StepExecutor {
  /** The attempts waiting, by the child they wait on. */
  private readonly waiting = new Map<string, () => void>();

  constructor(
    private readonly store: Store,
    private readonly options: SubPlanExecutorOptions,
  ) {}

  /** These runs ended (a cycle of this engine ended them): the attempts waiting on them look now. */
  ended(runIds: readonly string[]): void {
    for (const runId of runIds) this.waiting.get(runId)?.();
  }

  async execute(context: ExecutionContext): Promise<AttemptResult> {
    return { outcome: await this.attempt(context), logPath: null };
  }

  private async attempt(context: ExecutionContext): Promise<StepOutcome> {
    const { claim } = context;
    const spec = claim.step.subPlan;
    if (!spec?.plan) {
      return {
        ok: false,
        failureClass: 'invalid',
        message: `step ${claim.stepId}: its sub-plan ${spec?.path ?? ''} was not read with the plan: start the run from its plan file (baton run <file>, loadPlanFile)`,
      };
    }
    const childId = childRunId(claim.runId, claim.stepId, claim.firstStartedAt ?? 0);
    // Created at once: an attempt that finds its id taken (an earlier attempt of this step created
    // it, before its worker died) waits on the child it finds.
    const created = await this.create(context, childId, spec.plan);
    if (typeof created !== 'boolean') return created;
    // A child created just now has not ended: the first look is after the first nap.
    // After a nap the engine ended with news that the child ended, the child is read whole at once.
    for (let look: 'status' | 'whole' | null = created ? null : 'status'; ; ) {
      if (look !== null) {
        const child =
          look === 'whole'
            ? await this.store.getRun(childId)
            : await this.store.getRunSteps(childId, NO_STEPS);
        if (!child) return { ok: false, failureClass: 'fatal', message: `child run ${childId} is gone` };
        const ended = await this.outcomeOf(childId, child, look === 'whole' ? (child as RunDetail) : null);
        if (ended) return ended;
      }
      if (context.signal.aborted) {
        await this.cancelIfParentCancelled(claim.runId, claim.stepId, childId);
        return { ok: false, failureClass: 'interrupted', message: `stopped while child run ${childId} ran` };
      }
      look = (await this.nap(childId, context.signal)) ? 'whole' : 'status';
    }
  }

  /**
   * Stores the child run: true when this call did, false when it existed; an outcome when it cannot
   * be started.
   */
  private async create(
    context: ExecutionContext,
    childId: string,
    plan: Plan,
  ): Promise<StepOutcome | boolean> {
    const { claim } = context;
    const inputs: Record<string, string> = {};
    for (const [name, template] of Object.entries(claim.step.subPlan?.inputs ?? {})) {
      const rendered = renderStepText(template, context);
      if (!rendered.ok)
        return { ok: false, failureClass: 'invalid', message: `plan.inputs.${name}: ${rendered.message}` };
      inputs[name] = rendered.text;
    }
    try {
      const run = prepareRun({
        plan: childPlan(plan, { runId: claim.runId, stepId: claim.stepId }),
        runId: childId,
        inputs,
        workspace: claim.workspace,
        allowWorkspace: claim.workspace,
        batonHome: this.options.home,
        now: Date.now(),
        trust: () => trustedPrograms(this.options.home, this.options.env ?? process.env),
      });
      await this.store.createRun(run);
      this.options.onChildStarted?.();
      return true;
    } catch (error) {
      if (await this.store.getRunSteps(childId, NO_STEPS)) return false;
      if (!isBatonError(error)) throw error;
      return { ok: false, failureClass: 'invalid', message: `child run ${childId}: ${error.message}` };
    }
  }

  /** The outcome of the step once its child ended; null while it has not. */
  private async outcomeOf(
    childId: string,
    child: RunWithSteps,
    whole: RunDetail | null,
  ): Promise<StepOutcome | null> {
    const usage = child.usage;
    if (child.status === 'succeeded') {
      const detail = whole ?? (await this.store.getRun(childId));
      let value: unknown = {};
      try {
        value = detail ? childOutput(detail, detail.steps) : {};
      } catch (error) {
        if (!isBatonError(error)) throw error;
        return {
          ok: false,
          failureClass: 'invalid',
          message: `child run ${childId}: output: ${error.message}`,
          usage,
        };
      }
      const summary = typeof value === 'string' ? value : `child run ${childId} succeeded`;
      return { ok: true, summary, outputs: [], value, usage, childAttempts: child.attemptsTotal };
    }
    if (child.status === 'failed' || child.status === 'cancelled')
      return {
        ok: false,
        failureClass: 'fatal',
        message: `child run ${childId} ${child.status}${child.blockedReason ? `: ${child.blockedReason}` : ''}`,
        usage,
        childAttempts: child.attemptsTotal,
      };
    return null;
  }

  /** A parent cancelled cancels its children (a stopping worker or a lost lease leaves them running). */
  private async cancelIfParentCancelled(parentId: string, stepId: string, childId: string): Promise<void> {
    const parent = await this.store.getRunSteps(parentId, { statuses: ['cancelled'], everyStepUpTo: 0 });
    const stepCancelled = parent?.steps.some((step) => step.stepId === stepId) ?? false;
    if (parent?.status !== 'cancelled' && !stepCancelled) return;
    await this.store.cancelRun(childId, Date.now()).catch(() => undefined);
  }

  /**
   * Until the child ended in this engine (true), the attempt is stopped or the poll interval passed
   * (false: it may have ended elsewhere).
   */
  private nap(childId: string, signal: AbortSignal): Promise<boolean> {
    return new Promise((resolve) => {
      const done = (ended: boolean) => {
        clearTimeout(timer);
        signal.removeEventListener('abort', stopped);
        this.waiting.delete(childId);
        resolve(ended);
      };
      const stopped = () => done(false);
      const timer = setTimeout(stopped, this.options.pollMs);
      signal.addEventListener('abort', stopped);
      this.waiting.set(childId, () => done(true));
    });
  }
}
