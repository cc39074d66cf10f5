import { type PlanSecretEnv, runSecrets } from '../core/run-secrets.js';

/**
 * The values masked for each run this process drives (see runSecrets): the same environment for
 * all of them, plus the secret variables each run's plan names. Kept per set of names, so a worker
 * does not walk its environment for every attempt.
 */
export class RunSecretsCache {
  private readonly byNames = new Map<string, readonly string[]>();

  constructor(
    private readonly env: Readonly<Record<string, string | undefined>>,
    private readonly values: readonly string[] = [],
  ) {}

  secretsFor(plan: PlanSecretEnv | undefined): readonly string[] {
    const key = plan === undefined ? '' : `${plan.hookUrlEnv.join(',')}|${plan.apiKeyEnv.join(',')}`;
    let secrets = this.byNames.get(key);
    if (secrets === undefined) {
      secrets = runSecrets({ env: this.env, values: this.values, ...(plan ? { plan } : {}) });
      this.byNames.set(key, secrets);
    }
    return secrets;
  }
}
