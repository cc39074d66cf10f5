import type { FailureClass } from '../../core/failure.js';

/**
 * What agent CLIs say when they fail in their own words: login state, refused flags, local
 * permissions, their own connection and retry messages. Providers' texts (quota, billing, rate
 * limit, overloaded, auth, unknown model, overflow, ...) are not here but in the one table both
 * classifiers share, core/provider-error-texts.ts, which classify-agent-run asks first. These rules
 * only ever see an extracted error message or the last lines a CLI printed, never whole JSON records,
 * so a number in an unrelated field (`"duration_ms":401`) cannot match.
 */
interface TextRule {
  pattern: RegExp;
  failureClass: FailureClass;
}

const RULES: readonly TextRule[] = [
  {
    // claude's login state, codex's missing provider key.
    pattern: /not logged in|please run \/login|missing environment variable: `?\w*(KEY|TOKEN)\b/i,
    failureClass: 'fatal',
  },
  { pattern: /cannot be used with root\/sudo privileges/i, failureClass: 'invalid' },
  { pattern: /\bEACCES\b|permission denied/i, failureClass: 'fatal' },
  {
    // codex's "exceeded retry limit, last status: …" (the status words, when known, decide first),
    // claude's and codex's words for a dropped connection.
    pattern:
      /exceeded retry limit|connection_failed|can't reach the api|stream disconnected|error sending request/i,
    failureClass: 'transient',
  },
];

/** The class an agent CLI's failure text names, or undefined when no rule knows it. */
export function classOfAgentText(message: string): FailureClass | undefined {
  return RULES.find((rule) => rule.pattern.test(message))?.failureClass;
}

const UNIT_MS: ReadonlyArray<readonly [RegExp, number]> = [
  [/^(ms|milliseconds?)$/, 1],
  [/^(s|secs?|seconds?)$/, 1000],
  [/^(m|mins?|minutes?)$/, 60_000],
  [/^(h|hrs?|hours?)$/, 3_600_000],
  [/^(d|days?)$/, 86_400_000],
];
/** "20s", "1m30s", "2 hours 5 minutes", "3 days 2 hours": a run of amounts with units. */
const DURATION = String.raw`(?:\d+(?:\.\d+)?\s*(?:ms|milliseconds?|s|secs?|seconds?|m|mins?|minutes?|h|hrs?|hours?|d|days?)(?![a-z])[\s,]*(?:and\s+)?)+`;
const RETRY_IN = new RegExp(String.raw`(?:retrying|try again|retry)\s+(?:in|after)\s+(${DURATION})`, 'i');
/** `Retry-After: 30` (seconds when no unit is given, as the HTTP header). */
const RETRY_AFTER = /retry-after:\s*(\d+(?:\.\d+)?)\s*(ms|milliseconds?|s|secs?|seconds?)?\b/i;

/** A wait a message asks for ("Please try again in 20s", "Retrying in 1m30s…", "Retry-After: 30"), in ms. */
export function retryAfterInText(text: string): number | undefined {
  const spelled = RETRY_IN.exec(text);
  if (spelled) return durationMs(spelled[1]!);
  const header = RETRY_AFTER.exec(text);
  if (!header) return undefined;
  return Math.round(Number(header[1]) * (header[2] && /^m/i.test(header[2]) ? 1 : 1000));
}

function durationMs(text: string): number | undefined {
  let total = 0;
  let found = false;
  for (const [, amount, unit] of text.matchAll(/(\d+(?:\.\d+)?)\s*([a-z]+)/gi)) {
    const factor = UNIT_MS.find(([pattern]) => pattern.test(unit!.toLowerCase()))?.[1];
    if (factor === undefined) continue;
    total += Number(amount) * factor;
    found = true;
  }
  return found ? Math.round(total) : undefined;
}
