import type { AgentEnvSpec } from './plan/types.js';
import { batonOwnSecretEnv, NO_PLAN_SECRETS, type PlanSecretEnv } from './run-secrets.js';

/**
 * What an agent or a hook command gets of Baton's environment (docs/safety.md, "What an agent
 * receives"):
 * - by default, everything except Baton's own secrets (the store's variables, the plan's hook
 *   URLs, the variables listed in BATON_SECRET_ENV) and the model steps' API keys the program does
 *   not read itself (its profile says which it does: claude ANTHROPIC_API_KEY, …);
 * - with `agent.env.pass`, only the baseline below and the variables named, Baton's own secrets
 *   still excepted;
 * - then `agent.env.set` (literal values from the plan), then the `BATON_*` variables of the
 *   attempt, which the caller adds last.
 */

/** Always passed when set: what any program needs to find itself, its home, its locale and a temp folder. */
const BASELINE_ENV: readonly string[] = [
  'PATH',
  'HOME',
  'USER',
  'LOGNAME',
  'SHELL',
  'LANG',
  'LANGUAGE',
  'TZ',
  'TMPDIR',
  'TERM',
];

/** Locale categories (`LC_ALL`, `LC_CTYPE`, …) are part of the baseline too. */
const isBaseline = (name: string) => BASELINE_ENV.includes(name) || name.startsWith('LC_');

interface ChildEnvRequest {
  /** Baton's own environment. */
  env: NodeJS.ProcessEnv;
  /** The secret variables the run's plan names; none for the legacy state file. */
  plan?: PlanSecretEnv;
  /** Variables the program reads itself (its profile's `readsEnv`): model keys it keeps. */
  reads?: readonly string[];
  /** The agent's `env` from the plan. */
  spec?: AgentEnvSpec;
}

export function childEnvironment(request: ChildEnvRequest): NodeJS.ProcessEnv {
  const { env, spec } = request;
  const plan = request.plan ?? NO_PLAN_SECRETS;
  const own = batonOwnSecretEnv(env, plan);
  const out: NodeJS.ProcessEnv = {};
  if (spec?.pass !== undefined) {
    const named = new Set(spec.pass);
    for (const [name, value] of Object.entries(env)) {
      if (value !== undefined && (isBaseline(name) || named.has(name))) out[name] = value;
    }
  } else {
    const reads = new Set(request.reads ?? []);
    const withheld = new Set(plan.apiKeyEnv.filter((name) => !reads.has(name)));
    for (const [name, value] of Object.entries(env)) {
      if (value !== undefined && !withheld.has(name)) out[name] = value;
    }
  }
  for (const name of own) delete out[name];
  for (const [name, value] of Object.entries(spec?.set ?? {})) out[name] = value;
  return out;
}
