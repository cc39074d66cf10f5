import type { Plan } from '../core/plan/types.js';
import { planSecretEnv } from '../core/run-secrets.js';
import { RunSecretsCache } from '../engine/run-secrets-cache.js';
import type { CommandContext } from './commands/context.js';

/**
 * The values masked in what a door reads beside the store (an attempt's log, its own error
 * messages): this process's secrets (its environment, BATON_SECRET_ENV, the store URL's password)
 * and, for a run's plan, the secret variables that plan names (a hook's `urlEnv`, a model's
 * `apiKeyEnv`): the same values the masked store masks with (masked-reads.ts). Kept per context,
 * so a door does not walk its environment for every read.
 */

const CACHES = new WeakMap<object, RunSecretsCache>();

export function planSecrets(
  ctx: Pick<CommandContext, 'env' | 'secretValues'>,
  plan?: Plan,
): readonly string[] {
  let cache = CACHES.get(ctx);
  if (cache === undefined) {
    cache = new RunSecretsCache(ctx.env, ctx.secretValues);
    CACHES.set(ctx, cache);
  }
  return cache.secretsFor(plan ? planSecretEnv(plan) : undefined);
}
