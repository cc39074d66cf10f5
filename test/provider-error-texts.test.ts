import { describe, expect, it } from 'vitest';
import {
  type ProviderErrorCategory,
  providerErrorCategory,
  withStatedWait,
} from '../src/core/provider-error-texts.js';
import { AGENT_PROFILES } from '../src/executors/agent-profiles/choose-profile.js';
import {
  classifyAgentRun,
  classifyReportedError,
} from '../src/executors/agent-profiles/classify-agent-run.js';
import { classifyModelError } from '../src/model-call/classify-model-error.js';
import { ModelCallError } from '../src/model-call/types.js';
import {
  fatalResponse,
  quotaResponse,
  rateLimitResponse,
  serverErrorResponse,
} from '../src/testing/mock-llm/error-bodies.js';

/**
 * What each category calls for (what classification must conclude, checked below): `retry` after a wait (backoff, or the wait the provider stated),
 * `shrink_input` (compaction for a model call, a fresh session for an agent), or `stop`: no wait
 * helps, a human must act (top up, fix the key, pick another model).
 */
type ProviderErrorVerdict = 'retry' | 'shrink_input' | 'stop';

const PROVIDER_ERROR_VERDICTS: Readonly<Record<ProviderErrorCategory, ProviderErrorVerdict>> = {
  quota: 'stop',
  billing: 'stop',
  context_overflow: 'shrink_input',
  rate_window_too_large: 'stop',
  content_policy: 'stop',
  auth: 'stop',
  permission: 'stop',
  model_not_found: 'stop',
  rate_limit: 'retry',
  overloaded: 'retry',
  server_error: 'retry',
  timeout: 'retry',
  connection: 'retry',
};

/**
 * One corpus of real provider error texts, each asserted through the shared table and through BOTH
 * classifiers: a model call (classifyModelError) and an agent CLI that reported or printed the same
 * words (classifyReportedError, classifyAgentRun). The same words get the same verdict either way.
 * Sources: /work/shared/AGENT-CLIS.md ("Failure text → class"), the mock server's error bodies,
 * and the texts of harness-classify.test.ts and agent-profiles.test.ts.
 */

interface Row {
  source: string;
  text: string;
  /** The HTTP status the provider sent with it, when the CLI or the SDK reported one. */
  status?: number;
  /** A wait stated with it: `retry-after` seconds for a model call, the text's own wait for an agent. */
  waitS?: number;
  category: ProviderErrorCategory;
}

const errorText = (response: { body: unknown }): string => {
  const body = response.body as { error: { message: string } };
  return body.error.message;
};

const CORPUS: Row[] = [
  // quota and billing: no wait helps
  {
    source: 'OpenAI 429 insufficient_quota (mock body; AGENT-CLIS: OpenAI-backed CLIs, aider)',
    text: errorText(quotaResponse('openai')),
    status: 429,
    category: 'quota',
  },
  {
    source: 'the same OpenAI quota text, printed by an agent CLI without a status',
    text: 'You exceeded your current quota, please check your plan and billing details.',
    category: 'quota',
  },
  {
    source: 'codex: the quota text inside its retry-limit message (was transient for agents)',
    text: 'exceeded retry limit, last status: 429 Too Many Requests, request id: req_1; You exceeded your current quota, please check your plan and billing details.',
    category: 'quota',
  },
  {
    source: 'a Gemini RESOURCE_EXHAUSTED that is a spent quota (was transient for agents)',
    text: 'RESOURCE_EXHAUSTED: You exceeded your current quota, please check your plan and billing details.',
    category: 'quota',
  },
  { source: 'codex', text: 'Quota exceeded. Check your plan and billing details.', category: 'quota' },
  { source: 'codex (AGENT-CLIS)', text: 'spend cap reached', category: 'quota' },
  { source: 'opencode (AGENT-CLIS)', text: 'Monthly usage limit reached', category: 'quota' },
  {
    source: 'Anthropic 400 credit balance (mock body)',
    text: errorText(quotaResponse('anthropic')),
    status: 400,
    category: 'billing',
  },
  { source: 'claude (AGENT-CLIS)', text: 'API Error: billing_error', category: 'billing' },
  { source: 'codex (AGENT-CLIS)', text: 'You are out of credits.', category: 'billing' },
  {
    source: 'OpenRouter 402',
    text: 'This request requires more credits, or fewer max_tokens.',
    status: 402,
    category: 'billing',
  },
  // a quota that says when it resets is a rate limit with a wait
  {
    source: "Gemini free tier 429 with 'Please retry in 34s' and a retry delay",
    text: 'You exceeded your current quota, please check your plan and billing details.\n* Quota exceeded for metric: generativelanguage.googleapis.com/generate_content_requests, limit: 60\nPlease retry in 34s.',
    status: 429,
    waitS: 34,
    category: 'rate_limit',
  },
  {
    source: 'claude subscription limit (AGENT-CLIS)',
    text: "You've hit your limit · resets 1pm (Europe/Paris)",
    category: 'rate_limit',
  },
  {
    source: 'codex usage limit (agent-profiles.test.ts)',
    text: "You've hit your usage limit. Upgrade to Pro or try again in 3 days 2 hours.",
    waitS: 266_400,
    category: 'rate_limit',
  },
  // rate limits
  {
    source: 'OpenAI 429 rate_limit_exceeded (mock body)',
    text: errorText(rateLimitResponse('openai', { retryAfterS: 2 })),
    status: 429,
    waitS: 2,
    category: 'rate_limit',
  },
  {
    source: 'Anthropic 429 rate_limit_error (mock body)',
    text: errorText(rateLimitResponse('anthropic')),
    status: 429,
    category: 'rate_limit',
  },
  {
    source: 'OpenAI free tier: a billing link is not a billing error (harness-classify.test.ts)',
    text: 'Rate limit reached for default-gpt-3.5-turbo in organization org-x on requests per min. Limit: 3 / min. Please add a payment method to your account to increase your rate limit. Visit https://platform.openai.com/account/billing to add a payment method.',
    category: 'rate_limit',
  },
  { source: 'claude (AGENT-CLIS)', text: 'API Error: 429 rate_limit_error', category: 'rate_limit' },
  {
    source: 'aider (AGENT-CLIS)',
    text: 'litellm.RateLimitError: AnthropicException - rate limited',
    category: 'rate_limit',
  },
  {
    source: 'gemini (AGENT-CLIS)',
    text: '[API Error: RESOURCE_EXHAUSTED: Resource has been exhausted (e.g. check quota).]',
    category: 'rate_limit',
  },
  {
    source: 'OpenAI 429 larger than the tokens-per-minute window (mock body)',
    text: 'Request too large for gpt-4o in organization org-x on tokens per min (TPM): Limit 30000, Requested 45000. The input or output tokens must be reduced in order to run successfully. Visit https://platform.openai.com/account/rate-limits to learn more.',
    status: 429,
    category: 'rate_window_too_large',
  },
  // overloaded and server errors
  { source: 'Anthropic 529 (mock body)', text: 'Overloaded', status: 529, category: 'overloaded' },
  { source: 'claude (AGENT-CLIS)', text: 'API Error: overloaded_error', category: 'overloaded' },
  {
    source: 'OpenAI 503 (mock body)',
    text: errorText(serverErrorResponse('openai', 503)),
    status: 503,
    category: 'overloaded',
  },
  {
    source: 'OpenAI 500 (mock body)',
    text: errorText(serverErrorResponse('openai', 500)),
    status: 500,
    category: 'server_error',
  },
  { source: 'Anthropic 500 (mock body)', text: 'Internal server error', category: 'server_error' },
  // context overflow: shrink the input
  {
    source: 'Anthropic 400 (harness-classify.test.ts)',
    text: 'prompt is too long: 208000 tokens > 200000 maximum',
    status: 400,
    category: 'context_overflow',
  },
  {
    source: 'OpenAI, printed by an agent CLI',
    text: "This model's maximum context length is 128000 tokens. However, your messages resulted in 204308 tokens.",
    category: 'context_overflow',
  },
  // auth, permission, unknown model: stop
  {
    source: 'OpenAI 401 (mock body)',
    text: errorText(fatalResponse('openai', 401)),
    status: 401,
    category: 'auth',
  },
  { source: 'Anthropic 401 (mock body)', text: 'invalid x-api-key', category: 'auth' },
  { source: 'claude (AGENT-CLIS)', text: 'authentication_failed', category: 'auth' },
  {
    source: 'Anthropic 403 (mock body)',
    text: errorText(fatalResponse('anthropic', 403)),
    category: 'permission',
  },
  {
    source: 'OpenAI 404 (mock body)',
    text: errorText(fatalResponse('openai', 404)),
    category: 'model_not_found',
  },
  // connection
  {
    source: 'claude (agent-profiles.test.ts)',
    text: "API Error: Can't reach the API server at nonexistent.invalid (ENOTFOUND) (connection_failed)",
    category: 'connection',
  },
];

/** What each verdict means for a model call (its failure kinds) and for an agent attempt (its class). */
const MODEL_KINDS: Record<ProviderErrorVerdict, string[]> = {
  retry: ['transient'],
  stop: ['fatal'],
  shrink_input: ['input_overflow', 'output_overflow'],
};
const AGENT_CLASS: Record<ProviderErrorVerdict, string> = {
  retry: 'transient',
  stop: 'fatal',
  shrink_input: 'agent_failed',
};
const MODEL_REASON: Record<ProviderErrorCategory, string> = {
  quota: 'quota_exhausted',
  billing: 'quota_exhausted',
  context_overflow: 'context_overflow',
  rate_window_too_large: 'rate_window_too_large',
  content_policy: 'content_policy',
  auth: 'auth',
  permission: 'permission',
  model_not_found: 'model_not_found',
  rate_limit: 'rate_limited',
  overloaded: 'overloaded',
  server_error: 'server_error',
  timeout: 'timeout',
  connection: 'connection',
};

describe.each(CORPUS)('$category: $source', (row) => {
  const verdict = PROVIDER_ERROR_VERDICTS[row.category];

  it('the shared table names its category', () => {
    const category = providerErrorCategory(row.text);
    expect(category).toBeDefined();
    expect(withStatedWait(category as ProviderErrorCategory, row.waitS !== undefined)).toBe(row.category);
  });

  it('a model call gets that verdict', () => {
    const error = new ModelCallError(row.text, {
      ...(row.status === undefined ? {} : { status: row.status }),
      headers: row.waitS === undefined ? {} : { 'retry-after': String(row.waitS) },
    });
    const failure = classifyModelError(error);
    expect(MODEL_KINDS[verdict]).toContain(failure.kind);
    if (row.status === undefined || row.status < 500) expect(failure.reason).toBe(MODEL_REASON[row.category]);
  });

  it('an agent CLI that reported it gets the same verdict', () => {
    const reported = classifyReportedError({
      message: row.text,
      ...(row.status === undefined ? {} : { status: row.status }),
      ...(row.waitS === undefined ? {} : { retryAfterMs: row.waitS * 1000 }),
    });
    expect(reported).toMatchObject({ ok: false, failureClass: AGENT_CLASS[verdict] });
  });

  it.runIf(row.status === undefined)(
    'an agent CLI that printed it and exited 1 gets the same verdict',
    () => {
      const stderr = `${row.text}\n`;
      const verdictOfExit = classifyAgentRun({
        profile: AGENT_PROFILES.generic,
        program: 'my-agent',
        exitCode: 1,
        signal: null,
        timedOut: false,
        timeoutMs: 60_000,
        stdoutTail: '',
        stderrTail: stderr,
        report: AGENT_PROFILES.generic.read({ stdout: '', stderr, exitCode: 1 }),
      });
      expect(verdictOfExit).toMatchObject({ ok: false, failureClass: AGENT_CLASS[verdict] });
    },
  );
});

it('texts the table does not know stay unknown to both', () => {
  for (const text of ['something odd happened', 'boom', 'the agent could not finish the task']) {
    expect(providerErrorCategory(text)).toBeUndefined();
    expect(classifyModelError(text).reason).toBe('unknown');
    expect(classifyReportedError({ message: text })).toMatchObject({ failureClass: 'agent_failed' });
  }
});

it('an agent exiting 0 is a success whatever its text says about quotas (exit-0 rule unchanged)', () => {
  const stdout = 'You exceeded your current quota, please check your plan and billing details.\n';
  const run = classifyAgentRun({
    profile: AGENT_PROFILES.generic,
    program: 'my-agent',
    exitCode: 0,
    signal: null,
    timedOut: false,
    timeoutMs: 60_000,
    stdoutTail: stdout,
    stderrTail: '',
    report: AGENT_PROFILES.generic.read({ stdout, stderr: '', exitCode: 0 }),
  });
  expect(run).toEqual({ ok: true });
});
