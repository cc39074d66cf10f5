import { z } from 'zod';
import { silenceTimeoutSchema, strictObject, timeoutSchema } from './schema-fields.js';
import { describeValue } from './zod-issues.js';

/** A model step's call in the plan file: the provider, model and prompt, and a fallback model. */

export const modelTargetShape = {
  provider: z
    .enum(['openai', 'anthropic'], {
      error: (issue) => `expected "openai" or "anthropic", got ${describeValue(issue.input)}`,
    })
    .describe(
      'Which wire format and SDK: openai (Chat Completions, also vLLM, Ollama, LM Studio, OpenRouter via baseUrl) or anthropic (Messages).',
    ),
  model: z.string().min(1).describe('Model name, e.g. gpt-4o-mini or claude-sonnet-4-5.'),
  baseUrl: z
    .url({ protocol: /^https?$/, error: 'expected an http(s) URL, e.g. http://127.0.0.1:8000/v1' })
    .optional()
    .describe('Endpoint of an OpenAI-compatible or Anthropic-compatible server. Default: the provider.'),
  apiKeyEnv: z
    .string()
    .regex(/^[A-Z_][A-Z0-9_]*$/, { error: 'expected an environment variable name, e.g. OPENAI_API_KEY' })
    .optional()
    .describe(
      'Name of the environment variable holding the API key (never the key itself). Default OPENAI_API_KEY / ANTHROPIC_API_KEY.',
    ),
  capabilities: strictObject(
    {
      contextWindow: z
        .number()
        .int()
        .min(256)
        .optional()
        .describe('Tokens the model reads and writes in all.'),
      maxOutputTokens: z.number().int().min(1).optional().describe('Most tokens it writes in one answer.'),
      supportsTools: z.boolean().optional().describe('Whether it can call tools.'),
    },
    'capabilities: { contextWindow?, maxOutputTokens?, supportsTools? }',
  )
    .optional()
    .describe('What the model can take, over the built-in table (needed for models it does not know).'),
  price: strictObject(
    {
      inputPerMTok: z.number().min(0).describe('US dollars per million input tokens.'),
      outputPerMTok: z.number().min(0).describe('US dollars per million output tokens.'),
    },
    'a price: { inputPerMTok, outputPerMTok }',
  )
    .optional()
    .describe('The price of the model, over the built-in price table (for cost budgets).'),
};

export const modelSchema = strictObject(
  {
    ...modelTargetShape,
    system: z.string().optional().describe('System prompt; may use the same {{...}} references as prompt.'),
    prompt: z
      .string()
      .min(1)
      .describe('The user prompt; may use {{inputs.<name>}}, {{steps.<id>.summary}}, {{run.id}}, ...'),
    tools: z
      .array(z.string().min(1))
      .optional()
      .describe('Names of tools from the tool registry the model may call.'),
    maxOutputTokens: z.number().int().min(1).optional().describe('Output budget of each call. Default 1024.'),
    maxTurns: z
      .number()
      .int()
      .min(1)
      .max(200)
      .optional()
      .describe('Tool-calling turns before giving up. Default 20.'),
    stream: z.boolean().optional().describe('Stream responses. Default false.'),
    stallTimeoutMs: silenceTimeoutSchema(
      'With stream: how long a streamed response may send nothing (no event, a keep-alive ping counts) before its request is stopped as stalled and sent again (a transient failure, like a request timeout; the attempt ends transient with the stall message once the retries are spent). Default: none (requestTimeoutMs bounds each request); 0 is none.',
    ).optional(),
    requestTimeoutMs: timeoutSchema('Timeout of one model request. Default 2m.').optional(),
    fallback: strictObject(modelTargetShape, 'a fallback model: { provider, model, baseUrl?, apiKeyEnv? }')
      .optional()
      .describe('Used after the primary model keeps failing transiently, and only when compatible.'),
  },
  'a model call: { provider, model, prompt, ... }',
).describe('A model call made through the recovery harness (makes this a model step).');
