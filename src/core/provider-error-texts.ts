import { readContextOverflow } from './context-overflow-texts.js';

/**
 * The one table of what model providers say when a request fails, read by both the model-call
 * classifier (model-call/classify-model-error.ts) and the agent-exit classifier
 * (executors/agent-profiles/classify-agent-run.ts), so the same words get the same verdict whether
 * Baton called the model or an agent CLI printed them. Pure: text in, category out. Structured
 * facts (HTTP status, error type and code, headers) are the classifiers' and come first; this table
 * is for the words.
 */

const PROVIDER_ERROR_CATEGORIES = [
  /** The plan's or the account's quota is spent (insufficient_quota, a spend cap, a monthly limit). */
  'quota',
  /** No credit or no payment method: the account must be topped up. */
  'billing',
  /** The request does not fit the model's context window. */
  'context_overflow',
  /** One request larger than the whole tokens-per-minute window: waiting never makes it fit. */
  'rate_window_too_large',
  /** Refused by a content policy or safety system: the same request is refused again. */
  'content_policy',
  /** The key or the login is missing or wrong. */
  'auth',
  /** The key may not use this model or resource. */
  'permission',
  /** The model does not exist or is not offered to this account. */
  'model_not_found',
  /** Too many requests or tokens per window, or a usage limit that resets at a stated time. */
  'rate_limit',
  /** The provider is overloaded (Anthropic 529, "high demand"). */
  'overloaded',
  /** A 5xx in words: internal error, bad gateway, service unavailable. */
  'server_error',
  'timeout',
  /** The connection dropped, was refused, or the host did not resolve. */
  'connection',
] as const;

export type ProviderErrorCategory = (typeof PROVIDER_ERROR_CATEGORIES)[number];

/**
 * Provider texts, first match wins, so spent credit beats the "rate limit" or "retry limit" words
 * that wrap it ("exceeded retry limit, last status: 429 … You exceeded your current quota").
 */
const TEXT_RULES: ReadonlyArray<readonly [RegExp, ProviderErrorCategory]> = [
  // OpenAI/Groq 429 "Request too large for gpt-4o in organization org-… on tokens per min (TPM):
  // Limit 30000, Requested 342389." (vanna-ai/vanna-flask#11, continuedev/continue#10602).
  [/request too large for .{0,300}?tokens per min/is, 'rate_window_too_large'],
  // Azure "… triggering Azure OpenAI's content management policy"; OpenAI "… rejected by our safety system".
  [/content (management )?policy|safety system/i, 'content_policy'],
  // OpenAI 429 insufficient_quota "You exceeded your current quota, please check your plan and billing
  // details."; codex "Quota exceeded. Check your plan and billing details."; codex "spend cap"; opencode
  // "Monthly usage limit reached".
  [
    /exceeded your current quota|insufficient_quota|quota exceeded\. check your plan|spend cap|monthly usage limit reached/i,
    'quota',
  ],
  // Anthropic 400 "Your credit balance is too low to access the Anthropic API. Please go to Plans &
  // Billing …"; claude `billing_error`; OpenRouter 402 "This request requires more credits"; codex "out
  // of credits". A ".../account/billing" link is not enough: OpenAI's free-tier *rate limit* text ends
  // with one.
  [/credit balance is too low|billing_error|more credits|out of credits|(?<!\/)\bbilling\b/i, 'billing'],
  // claude's subscription limit "You've hit your limit · resets 1pm (Europe/Paris)"; codex "You've hit
  // your usage limit … try again at <time>": a wait until the stated reset, not a spent quota.
  [/you've hit your (usage )?limit|usage limit reached/i, 'rate_limit'],
  [/invalid (x-)?api[ -]key|incorrect api key|unauthori[sz]ed|authentication/i, 'auth'],
  [/permission_error|does not have permission|\bforbidden\b/i, 'permission'],
  [
    /model[^\n]{0,60}(not found|does not exist|is not supported)|unknown model|issue with the selected model/i,
    'model_not_found',
  ],
  // OpenAI "Rate limit reached for …" and code rate_limit_exceeded; Anthropic rate_limit_error; litellm
  // RateLimitError; Gemini RESOURCE_EXHAUSTED and "Quota exceeded for quota metric … per minute".
  [
    /rate[_ -]?limit|too many requests|RESOURCE_EXHAUSTED|resource has been exhausted|quota exceeded/i,
    'rate_limit',
  ],
  [/overloaded|high demand/i, 'overloaded'],
  [
    /internal server error|server had an error|bad gateway|service unavailable|gateway time-?out|\bapi_error\b/i,
    'server_error',
  ],
  [/timed out|timeout|\bETIMEDOUT\b/i, 'timeout'],
  [
    /connection error|connection (reset|refused|closed)|socket hang up|fetch failed|network error|\b(ECONNRESET|ECONNREFUSED|EPIPE|EAI_AGAIN|ENOTFOUND)\b/i,
    'connection',
  ],
];

/** The category of a provider's error text, or undefined when the table does not know it. */
export function providerErrorCategory(text: string): ProviderErrorCategory | undefined {
  if (readContextOverflow(text) !== undefined) return 'context_overflow';
  return TEXT_RULES.find(([pattern]) => pattern.test(text))?.[1];
}

/**
 * A spent quota whose text or response states when it resets (Gemini's free tier: 429 "You exceeded
 * your current quota … Please retry in 34s", with a retry delay) is a rate limit with that wait: the
 * wait helps. Without a stated wait it stays spent.
 */
export function withStatedWait(category: ProviderErrorCategory, waitStated: boolean): ProviderErrorCategory {
  return waitStated && (category === 'quota' || category === 'billing') ? 'rate_limit' : category;
}
