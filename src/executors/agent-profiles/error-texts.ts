import type { FailureClass } from '../../core/failure.js';

/**
 * What agent CLIs say when they fail in their own words, beyond the providers' texts that the
 * model-call classifier already knows (rate limit, overloaded, 5xx, connection, timeout, invalid
 * key, unknown model: classify-agent-run asks it next). These rules only ever see an extracted
 * error message or the last lines a CLI printed, never whole JSON records, so a number in an
 * unrelated field (`"duration_ms":401`) cannot match. Fatal rules come first: "billing_error …
 * rate limit" is still a billing problem.
 */
interface TextRule {
  pattern: RegExp;
  failureClass: FailureClass;
}

const RULES: readonly TextRule[] = [
  {
    // claude's login state and codex's missing provider key, OpenAI's "Incorrect API key".
    pattern:
      /not logged in|please run \/login|authentication_failed|incorrect api key|missing environment variable: `?\w*(KEY|TOKEN)\b/i,
    failureClass: 'fatal',
  },
  {
    pattern:
      /billing_error|out of credits|spend cap|credit balance is too low|insufficient_quota|quota exceeded\. check your plan/i,
    failureClass: 'fatal',
  },
  { pattern: /cannot be used with root\/sudo privileges/i, failureClass: 'invalid' },
  { pattern: /permission_error|\bEACCES\b|permission denied|\bforbidden\b/i, failureClass: 'fatal' },
  { pattern: /issue with the selected model|model[^\n]{0,60}is not supported/i, failureClass: 'fatal' },
  {
    pattern: /you've hit your (usage )?limit|usage limit reached|monthly usage limit reached/i,
    failureClass: 'transient',
  },
  {
    // Provider codes as CLIs print them (rate_limit_exceeded), gemini's and codex's own words.
    pattern:
      /rate[_-]limit|ratelimit|RESOURCE_EXHAUSTED|resource has been exhausted|quota exceeded|exceeded retry limit/i,
    failureClass: 'transient',
  },
  { pattern: /gateway time-?out|high demand|server had an error|api_error/i, failureClass: 'transient' },
  {
    pattern:
      /\b(ETIMEDOUT|EAI_AGAIN|ENOTFOUND)\b|connection_failed|can't reach the api|stream disconnected|error sending request|connection (reset|refused|closed)/i,
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
