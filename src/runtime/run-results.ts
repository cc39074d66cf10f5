import { runNotFound } from '../core/errors.js';
import { redactValue } from '../core/redact.js';
import { planSecretEnv } from '../core/run-secrets.js';
import type { StepResult } from '../core/run-state.js';
import { resolveResults } from '../engine/result-artifacts.js';
import { RunSecretsCache } from '../engine/run-secrets-cache.js';
import type { CommandContext } from './commands/context.js';

/**
 * The results of a run's steps as `Baton.result` returns them: each step's stored result with a
 * large one read back from the artifact store, masked as every answer of the runtime (the files
 * read back included, which the masked store cannot see).
 */
export async function runResults(
  ctx: CommandContext,
  runId: string,
  stepIds: readonly string[],
): Promise<Record<string, StepResult>> {
  const run = await ctx.unmasked.getRunSteps(runId, { statuses: [], everyStepUpTo: 0 });
  if (!run) throw runNotFound(runId);
  const resolved = await resolveResults(await ctx.unmasked.getStepResults(runId, stepIds), ctx.home);
  const secrets = new RunSecretsCache(ctx.env, ctx.secretValues).secretsFor(planSecretEnv(run.plan));
  return redactValue(resolved, secrets);
}
