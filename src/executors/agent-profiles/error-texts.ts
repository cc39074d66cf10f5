import type { FailureClass } from '../../core/failure.js';

/**
 * What agent CLIs say when they fail, beyond the provider's own errors (which the model-call
 * classifier knows): login and billing states, the CLIs' own limits and retry notices. These rules
 * only ever see an extracted error message or the last lines a CLI printed to stderr, never whole
 * JSON records, so a number in an unrelated field (`"duration_ms":401`) cannot match. Fatal rules
 * come first: "billing_error … rate limit" is still a billing problem.
 */
interface TextRule {
  pattern: RegExp;
  failureClass: FailureClass;
}

const RULES: readonly TextRule[] = [
  {
    pattern:
      /not logged in|please run \/login|invalid api key|invalid x-api-key|authentication_failed|authentication_error|incorrect api key|unauthori[sz]ed|missing environment variable: `?\w*(KEY|TOKEN)\b/i,
    failureClass: 'fatal',
  },
  {
    pattern: /billing_error|out of credits|spend cap|credit balance is too low|insufficient_quota/i,
    failureClass: 'fatal',
  },
  { pattern: /cannot be used with root\/sudo privileges/i, failureClass: 'invalid' },
  { pattern: /permission_error|\bEACCES\b|permission denied|\bforbidden\b/i, failureClass: 'fatal' },
  {
    pattern:
      /issue with the selected model|unknown model|model[^\n]{0,60}(is not supported|does not exist|not found)/i,
    failureClass: 'fatal',
  },
  {
    pattern: /you've hit your (usage )?limit|usage limit reached|monthly usage limit reached/i,
    failureClass: 'transient',
  },
  {
    pattern:
      /rate[ _-]?limit|too many requests|RESOURCE_EXHAUSTED|resource has been exhausted|quota exceeded|exceeded retry limit/i,
    failureClass: 'transient',
  },
  {
    pattern:
      /overloaded|service unavailable|bad gateway|gateway time-?out|internal server error|high demand|server had an error|api_error/i,
    failureClass: 'transient',
  },
  {
    pattern:
      /\b(ECONNRESET|ECONNREFUSED|ETIMEDOUT|EAI_AGAIN|EPIPE)\b|socket hang up|network error|fetch failed|stream disconnected|error sending request|connection (reset|refused|closed)|timed out/i,
    failureClass: 'transient',
  },
];

/** The class an agent CLI's failure text names, or undefined when no rule knows it. */
export function classOfAgentText(message: string): FailureClass | undefined {
  return RULES.find((rule) => rule.pattern.test(message))?.failureClass;
}

const RETRY_IN =
  /(?:retrying|try again|retry)(?: in| after|-after:) ?(\d+(?:\.\d+)?)\s*(ms|milliseconds?|s|sec(?:ond)?s?|m|min(?:ute)?s?|h|hours?)\b/i;

/** A wait a message asks for ("Please try again in 20s", "Retrying in 3 seconds…"), in ms. */
export function retryAfterInText(text: string): number | undefined {
  const match = RETRY_IN.exec(text);
  if (!match) return undefined;
  const amount = Number(match[1]);
  const unit = (match[2] ?? 's').toLowerCase();
  const factor =
    unit.startsWith('ms') || unit.startsWith('milli')
      ? 1
      : unit.startsWith('h')
        ? 3_600_000
        : unit.startsWith('m')
          ? 60_000
          : 1000;
  return Math.round(amount * factor);
}
