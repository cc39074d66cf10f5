import type { Plan } from './plan/types.js';
import { environmentSecrets } from './redact.js';

/**
 * The secrets of a run: which variables hold them (Baton's own, the plan's, the operator's) and
 * the values masked wherever Baton records or prints text. One place decides, for the engine, the
 * hook calls, the legacy state file and the child environments (see child-env.ts).
 */

/** The key a model step reads when it names no `apiKeyEnv`. */
export const DEFAULT_API_KEY_ENV = { openai: 'OPENAI_API_KEY', anthropic: 'ANTHROPIC_API_KEY' } as const;

/**
 * Variables that carry Baton's store location or password: the store URL, and the password the
 * PostgreSQL driver reads when the URL has none.
 */
export const STORE_SECRET_ENV: readonly string[] = ['BATON_DATABASE_URL', 'PGPASSWORD'];

/** The operator's own list of secret variables: names separated by commas or colons. */
const SECRET_ENV_LIST = 'BATON_SECRET_ENV';

/** Names of the variables a plan declares secret. */
export interface PlanSecretEnv {
  /** `hooks[].urlEnv`: webhook URLs, tokens included. */
  hookUrlEnv: readonly string[];
  /** `apiKeyEnv` of model steps and model fallbacks (the provider's default when none is named). */
  apiKeyEnv: readonly string[];
}

export const NO_PLAN_SECRETS: PlanSecretEnv = { hookUrlEnv: [], apiKeyEnv: [] };

const planSecretsCache = new WeakMap<Plan, PlanSecretEnv>();

/** The variables `plan` names as holding secrets (computed once per plan object). */
export function planSecretEnv(plan: Plan): PlanSecretEnv {
  const cached = planSecretsCache.get(plan);
  if (cached) return cached;
  const hookUrlEnv = new Set<string>();
  for (const hook of plan.hooks ?? []) if (hook.urlEnv !== undefined) hookUrlEnv.add(hook.urlEnv);
  const apiKeyEnv = new Set<string>();
  for (const step of plan.steps) {
    for (const model of [step.model, step.fallback?.model]) {
      if (!model) continue;
      for (const target of [model, model.fallback]) {
        if (target) apiKeyEnv.add(target.apiKeyEnv ?? DEFAULT_API_KEY_ENV[target.provider]);
      }
    }
  }
  const names = { hookUrlEnv: [...hookUrlEnv], apiKeyEnv: [...apiKeyEnv] };
  planSecretsCache.set(plan, names);
  return names;
}

/** The names listed in BATON_SECRET_ENV (`A,B` or `A:B`; blanks ignored). */
export function operatorSecretEnv(env: Readonly<Record<string, string | undefined>>): string[] {
  return (env[SECRET_ENV_LIST] ?? '')
    .split(/[,:]/)
    .map((name) => name.trim())
    .filter((name) => name !== '');
}

/**
 * Baton's own secrets, which never reach an agent or a hook command (even when `agent.env.pass`
 * names them): the store's variables, the plan's hook URLs and what the operator lists.
 */
export function batonOwnSecretEnv(
  env: Readonly<Record<string, string | undefined>>,
  plan: PlanSecretEnv = NO_PLAN_SECRETS,
): Set<string> {
  return new Set([...STORE_SECRET_ENV, ...plan.hookUrlEnv, ...operatorSecretEnv(env)]);
}

interface RunSecretsRequest {
  env: Readonly<Record<string, string | undefined>>;
  /** The run's plan's secret variables; none for the legacy state file. */
  plan?: PlanSecretEnv;
  /** Other secret values: the `--store` URL, values given through the API. */
  values?: readonly string[];
}

/**
 * Every value masked for a run: the named secrets (store, hook URLs, model keys, BATON_SECRET_ENV),
 * the values of secret-looking variables (see environmentSecrets) and of any variable holding a
 * URL with a password, each with its token parts (see urlSecretParts). Longest first.
 */
export function runSecrets(request: RunSecretsRequest): string[] {
  const { env } = request;
  const plan = request.plan ?? NO_PLAN_SECRETS;
  const named = new Set([...batonOwnSecretEnv(env, plan), ...plan.apiKeyEnv]);
  const whole = new Set<string>(environmentSecrets(env));
  for (const value of request.values ?? []) whole.add(value);
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined || value === '') continue;
    if (named.has(name) || urlPassword(value) !== null) whole.add(value);
  }
  const all = new Set<string>();
  for (const value of whole) {
    all.add(value);
    for (const part of urlSecretParts(value)) all.add(part);
  }
  // Longest first: a secret that contains another is masked whole. Short values are never masked.
  return [...all].filter((value) => value.length >= MIN_SECRET_CHARS).sort((a, b) => b.length - a.length);
}

/** Values shorter than this are not masked: they would garble ordinary words. */
const MIN_SECRET_CHARS = 6;

const URL_START = /^[A-Za-z][A-Za-z0-9+.-]*:\/\//;

/** The password of `scheme://user:password@host` (up to the last `@`, parsable or not), or null. */
function urlPassword(value: string): string | null {
  if (!URL_START.test(value)) return null;
  const match = /^[^:]+:\/\/[^/?#:@\s]*:(\S*)@/.exec(value);
  return match?.[1] ? match[1] : null;
}

/**
 * The parts of a URL secret that are secrets on their own, so that a message showing only the
 * token is masked too: the password of `user:password@`, and every path segment, query value and
 * fragment of 8 characters or more that mixes letters and digits, or of 16 characters or more
 * (`/services/T0123ABCD/B0456EFGH/xoxoXOXO1234abcd`, `?token=…`), in the form written and decoded.
 * Words such as `services` or `webhooks` are left alone. Not a URL: no parts.
 */
export function urlSecretParts(value: string): string[] {
  if (!URL_START.test(value)) return [];
  const parts = new Set<string>();
  const password = urlPassword(value);
  if (password !== null) addForms(parts, password);
  let parsed: URL | null = null;
  try {
    parsed = new URL(password === null ? value : value.replace(`:${password}@`, '@'));
  } catch {
    // Unparsable (an unencoded character in the password): only the password is known.
  }
  if (parsed) {
    const candidates = [
      ...parsed.pathname.split('/'),
      ...[...parsed.searchParams.values()],
      ...parsed.search
        .slice(1)
        .split('&')
        .map((pair) => pair.slice(pair.indexOf('=') + 1)),
      parsed.hash.slice(1),
    ];
    for (const candidate of candidates) if (isTokenLike(candidate)) addForms(parts, candidate);
  }
  return [...parts];
}

function isTokenLike(text: string): boolean {
  if (text.length >= 16) return true;
  return text.length >= 8 && /[A-Za-z]/.test(text) && /[0-9]/.test(text);
}

function addForms(parts: Set<string>, text: string): void {
  parts.add(text);
  try {
    parts.add(decodeURIComponent(text));
  } catch {
    // not percent-encoded
  }
}
