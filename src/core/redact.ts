import type { StepOutcome } from './failure.js';

/**
 * Masks secrets before anything reaches an event, a log or the state: API keys in the shapes the
 * common providers issue, bearer tokens, `api_key=...` pairs, and any secret the caller names.
 * Each pattern comes with a text every match of it contains (`anchor`, matched ignoring case):
 * a text holding none of them is left as it is without running the patterns, which is what most
 * texts are (ids, statuses, summaries), and what keeps masking a 10,000-step run cheap.
 */
const SECRET_PATTERNS: readonly { anchor: string; pattern: RegExp }[] = [
  { anchor: 'sk-', pattern: /\bsk-(?:ant-|proj-|or-)?[A-Za-z0-9_-]{8,}/g },
  { anchor: 'bearer', pattern: /\bBearer\s+[A-Za-z0-9._~+/=-]{8,}/gi },
  { anchor: 'akia', pattern: /\bAKIA[0-9A-Z]{16}\b/g },
  { anchor: 'aiza', pattern: /\bAIza[0-9A-Za-z_-]{20,}/g },
  { anchor: 'gh[pousr]_', pattern: /\bgh[pousr]_[A-Za-z0-9]{20,}/g },
  { anchor: 'xox[abprs]-', pattern: /\bxox[abprs]-[A-Za-z0-9-]{10,}/g },
  {
    anchor: 'api[_-]?key|authorization|access[_-]?token|secret',
    pattern:
      /\b((?:x-)?api[_-]?key|authorization|access[_-]?token|secret)(["']?\s*[:=]\s*["']?)[^\s"',}]{6,}/gi,
  },
];
const ANY_ANCHOR = new RegExp(SECRET_PATTERNS.map(({ anchor }) => anchor).join('|'), 'i');

const MAX_RECORDED_MESSAGE = 300;

export function redactSecrets(text: string, extraSecrets: readonly string[] = []): string {
  let out = text;
  for (const secret of extraSecrets) {
    // Most texts hold no secret: looking is much cheaper than splitting.
    if (secret.length >= 6 && out.includes(secret)) out = out.split(secret).join('[redacted]');
  }
  if (!ANY_ANCHOR.test(out)) return out;
  for (const { pattern } of SECRET_PATTERNS) {
    out = out.replace(pattern, (match, name?: string, separator?: string) =>
      typeof name === 'string' && typeof separator === 'string' && !match.startsWith('sk-')
        ? `${name}${separator}[redacted]`
        : '[redacted]',
    );
  }
  return out;
}

/** Redacted and cut to 300 characters: what an event may say about a provider's error. */
export function recordableMessage(text: string, extraSecrets: readonly string[] = []): string {
  const redacted = redactSecrets(text, extraSecrets);
  return redacted.length > MAX_RECORDED_MESSAGE
    ? `${redacted.slice(0, MAX_RECORDED_MESSAGE - 1)}…`
    : redacted;
}

/**
 * Environment variables whose values are masked wherever they show up in recorded text. A webhook
 * URL (`SLACK_WEBHOOK_URL`, `DISCORD_WEBHOOK`) is a bearer credential: whoever holds it posts.
 */
const SECRET_NAME = /KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|WEBHOOK|(^|_)AUTH(_|$)|DATABASE_URL/i;
/** ... unless the variable names where a secret is kept (a file, a socket), not the secret. */
const LOCATION_NAME = /(_FILE|_PATH|_DIR|_SOCK|_HOME)$/i;

/**
 * The values of an environment's secret-looking variables (`ANTHROPIC_API_KEY`, `GITHUB_TOKEN`,
 * `PGPASSWORD`, `BATON_DATABASE_URL`, `SLACK_WEBHOOK_URL`, …), 8 characters or more: an agent that echoes one in an
 * error must not get it stored, whatever its shape. Paths (`SSH_AUTH_SOCK`, a key file) are left
 * alone: masking them would only garble messages that name files.
 */
export function environmentSecrets(env: Readonly<Record<string, string | undefined>>): string[] {
  const secrets: string[] = [];
  for (const [name, value] of Object.entries(env)) {
    // BATON_SECRET_ENV holds names of secrets, not one (run-secrets.ts reads it).
    if (name === 'BATON_SECRET_ENV') continue;
    if (value === undefined || value.length < 8 || value.startsWith('/') || value.startsWith('~')) continue;
    if (SECRET_NAME.test(name) && !LOCATION_NAME.test(name)) secrets.push(value);
  }
  // Longest first: a secret that contains another is masked whole.
  return secrets.sort((a, b) => b.length - a.length);
}

/** An attempt's outcome as it may be stored: its texts (failure message, summary) masked. */
export function redactOutcome(outcome: StepOutcome, secrets: readonly string[]): StepOutcome {
  if (!outcome.ok) return { ...outcome, message: redactSecrets(outcome.message, secrets) };
  const summary = redactSecrets(outcome.summary, secrets);
  const degraded = outcome.degraded === undefined ? undefined : redactSecrets(outcome.degraded, secrets);
  // A structured result (a function's return value, an agent's result file) is stored and read by
  // later steps' templates like the summary: its strings are masked too.
  // A function that returned a text has it as both: masked once.
  const value =
    outcome.value === undefined
      ? undefined
      : outcome.value === outcome.summary
        ? summary
        : redactValue(outcome.value, secrets);
  // A passed check keeps no failures today; masked all the same, like every text it stores.
  const verification =
    outcome.verification === undefined ? undefined : redactValue(outcome.verification, secrets);
  if (
    summary === outcome.summary &&
    degraded === outcome.degraded &&
    value === outcome.value &&
    verification === outcome.verification
  )
    return outcome;
  return {
    ...outcome,
    summary,
    ...(degraded === undefined ? {} : { degraded }),
    ...(value === undefined ? {} : { value }),
    ...(verification === undefined ? {} : { verification }),
  };
}

/**
 * A JSON-like value (an event, a hook payload, a run read back) with every string in it masked.
 * What holds nothing to mask is shared with `value`, not copied: a run of 10,000 steps read for
 * `baton status` allocates only where a secret was found. (`for ... in` rather than
 * `Object.entries`: no array of pairs per object walked.)
 */
export function redactValue<T>(value: T, secrets: readonly string[]): T {
  if (typeof value === 'string') return redactSecrets(value, secrets) as T;
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) {
    let out: unknown[] | undefined;
    for (let index = 0; index < value.length; index++) {
      const item: unknown = value[index];
      const masked = redactValue(item, secrets);
      if (masked !== item) {
        out ??= [...value];
        out[index] = masked;
      }
    }
    return (out ?? value) as T;
  }
  const record = value as Record<string, unknown>;
  let out: Record<string, unknown> | undefined;
  for (const key in record) {
    if (!Object.hasOwn(record, key)) continue;
    const item = record[key];
    const masked = redactValue(item, secrets);
    if (masked !== item) {
      out ??= { ...record };
      out[key] = masked;
    }
  }
  return (out ?? value) as T;
}
