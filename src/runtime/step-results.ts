import { redactValue } from '../core/redact.js';
import type { StepResult } from '../core/run-state.js';
import { hasOffloadedResults, resolveResults } from '../engine/result-artifacts.js';
import type { RunWithSteps } from '../store/store.js';
import type { CommandContext } from './commands/context.js';
import { planSecrets } from './plan-secrets.js';

/**
 * The results of a run's steps as a person reads them whole (`baton diff`, `Baton.result`): read through the
 * masking boundary, and a large result, which the store keeps as a reference to a file of the
 * artifact store, read back from that file and masked here with the run's secrets (the masked
 * reads see only the reference).
 */
export async function readStepResults(
  ctx: CommandContext,
  run: Pick<RunWithSteps, 'id' | 'plan'>,
  stepIds: readonly string[],
): Promise<Record<string, StepResult>> {
  const stored = await ctx.store.getStepResults(run.id, stepIds);
  if (!hasOffloadedResults(stored)) return stored;
  return redactValue(await resolveResults(stored, ctx.home), planSecrets(ctx, run.plan));
}
