import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { invalidArguments, minimalArguments } from '../src/testing/mock-llm/default-reply.js';
import { createSeededRandom, drawFault, type FaultMix } from '../src/testing/mock-llm/random.js';
import {
  type FaultName,
  type MockLlmServer,
  OVERFLOW_FLAVOURS,
  OVERFLOW_RESPONSES,
  type OverflowFlavour,
  startMockLlmServer,
} from '../src/testing/mock-llm/server.js';
import { failure } from './helpers/model-call.js';

const USER = 'hello world, this is a long enough message to be cut at forty characters';

const TOOL_SCHEMA = {
  type: 'object',
  properties: {
    path: { type: 'string' },
    count: { type: 'integer' },
    mode: { type: 'string', enum: ['fast', 'slow'] },
    options: { type: 'object', properties: { deep: { type: 'boolean' } }, required: ['deep'] },
    tags: { type: 'array', items: { type: 'string' } },
    note: { type: 'string' },
  },
  required: ['path', 'count', 'mode', 'options', 'tags'],
};
const MINIMAL_ARGS = { path: 'x', count: 1, mode: 'fast', options: { deep: true }, tags: [] };

const openaiTools: OpenAI.Chat.Completions.ChatCompletionTool[] = [
  { type: 'function', function: { name: 'read_file', description: 'Read a file', parameters: TOOL_SCHEMA } },
];
const anthropicTools: Anthropic.Tool[] = [
  { name: 'read_file', description: 'Read a file', input_schema: TOOL_SCHEMA as Anthropic.Tool.InputSchema },
];

let server: MockLlmServer;
let openai: OpenAI;
let anthropic: Anthropic;

beforeAll(async () => {
  server = await startMockLlmServer();
  openai = new OpenAI({ apiKey: 'sk-test', baseURL: server.openaiBaseUrl, maxRetries: 0 });
  anthropic = new Anthropic({ apiKey: 'sk-ant-test', baseURL: server.anthropicBaseUrl, maxRetries: 0 });
});
afterAll(() => server.close());

function chat(extra: Partial<OpenAI.Chat.Completions.ChatCompletionCreateParamsNonStreaming> = {}) {
  return openai.chat.completions.create({
    model: 'gpt-4o',
    messages: [{ role: 'user', content: USER }],
    max_completion_tokens: 100,
    ...extra,
  });
}

function message(extra: Partial<Anthropic.MessageCreateParamsNonStreaming> = {}) {
  return anthropic.messages.create({
    model: 'claude-mock',
    max_tokens: 100,
    messages: [{ role: 'user', content: USER }],
    ...extra,
  });
}

function lastFault(): FaultName | undefined {
  return server.requests.at(-1)?.fault;
}

function isUnparsable(text: string): boolean {
  try {
    JSON.parse(text);
    return false;
  } catch {
    return true;
  }
}

describe('ok answers through the official SDKs', () => {
  it('OpenAI non-streaming text, with usage and a request id', async () => {
    const { data, response } = await chat().withResponse();
    expect(data.choices[0]?.message.content).toBe(`ok: ${USER.slice(0, 40)}`);
    expect(data.choices[0]?.finish_reason).toBe('stop');
    expect(data.usage?.completion_tokens).toBe(Math.ceil(data.choices[0]!.message.content!.length / 4));
    expect(data.usage?.prompt_tokens).toBe(
      Math.ceil(JSON.stringify([{ role: 'user', content: USER }]).length / 4),
    );
    expect(response.headers.get('x-request-id')).toMatch(/^req_mock/);
    expect(server.requests.at(-1)).toMatchObject({
      wire: 'openai',
      model: 'gpt-4o',
      stream: false,
      maxTokens: 100,
      messagesCount: 1,
      hasTools: false,
      fault: 'ok',
    });
  });

  it('OpenAI streaming text, with the usage chunk when asked for', async () => {
    const stream = await openai.chat.completions.create({
      model: 'gpt-4o',
      messages: [{ role: 'user', content: USER }],
      max_tokens: 50,
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let finish: string | null = null;
    let usage: OpenAI.CompletionUsage | undefined | null;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
      usage = chunk.usage ?? usage;
    }
    expect(text).toBe(`ok: ${USER.slice(0, 40)}`);
    expect(finish).toBe('stop');
    expect(usage?.completion_tokens).toBe(Math.ceil(text.length / 4));
    expect(server.requests.at(-1)).toMatchObject({ stream: true, maxTokens: 50 });
  });

  it('Anthropic non-streaming and streaming text', async () => {
    const reply = await message();
    expect(reply.content).toEqual([{ type: 'text', text: `ok: ${USER.slice(0, 40)}` }]);
    expect(reply.stop_reason).toBe('end_turn');
    expect(reply.usage.output_tokens).toBe(Math.ceil(`ok: ${USER.slice(0, 40)}`.length / 4));

    const stream = anthropic.messages.stream({
      model: 'claude-mock',
      max_tokens: 100,
      messages: [{ role: 'user', content: USER }],
    });
    const final = await stream.finalMessage();
    expect(final.content).toEqual([{ type: 'text', text: `ok: ${USER.slice(0, 40)}` }]);
    expect(final.stop_reason).toBe('end_turn');
    expect(server.requests.at(-1)).toMatchObject({ wire: 'anthropic', stream: true });
  });

  it('OpenAI tool call round trip, streaming and not', async () => {
    const first = await chat({ tools: openaiTools });
    const call = first.choices[0]?.message.tool_calls?.[0];
    expect(first.choices[0]?.finish_reason).toBe('tool_calls');
    expect(call?.type === 'function' && call.function.name).toBe('read_file');
    expect(call?.type === 'function' && JSON.parse(call.function.arguments)).toEqual(MINIMAL_ARGS);

    const stream = await openai.chat.completions.create({
      model: 'gpt-4o',
      messages: [{ role: 'user', content: USER }],
      tools: openaiTools,
      stream: true,
    });
    let args = '';
    let name = '';
    for await (const chunk of stream) {
      for (const delta of chunk.choices[0]?.delta.tool_calls ?? []) {
        name += delta.function?.name ?? '';
        args += delta.function?.arguments ?? '';
      }
    }
    expect(name).toBe('read_file');
    expect(JSON.parse(args)).toEqual(MINIMAL_ARGS);

    const second = await chat({
      tools: openaiTools,
      messages: [
        { role: 'user', content: USER },
        { role: 'assistant', content: null, tool_calls: first.choices[0]!.message.tool_calls! },
        { role: 'tool', tool_call_id: call!.id, content: 'file contents' },
      ],
    });
    expect(second.choices[0]?.message.content).toBe(`ok: ${USER.slice(0, 40)}`);
    expect(server.requests.at(-1)).toMatchObject({ hasTools: true, messagesCount: 3 });
  });

  it('Anthropic tool call round trip', async () => {
    const first = await message({ tools: anthropicTools });
    expect(first.stop_reason).toBe('tool_use');
    const block = first.content.find((b) => b.type === 'tool_use');
    expect(block).toMatchObject({ name: 'read_file', input: MINIMAL_ARGS });

    const second = await message({
      tools: anthropicTools,
      messages: [
        { role: 'user', content: USER },
        { role: 'assistant', content: first.content },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: block!.type === 'tool_use' ? block!.id : '', content: 'x' },
          ],
        },
      ],
    });
    expect(second.content).toEqual([{ type: 'text', text: `ok: ${USER.slice(0, 40)}` }]);
  });

  it('uses a custom reply', async () => {
    const custom = await startMockLlmServer({
      reply: (request) => ({ text: `custom ${request.wire} ${request.maxTokens}` }),
    });
    try {
      const client = new OpenAI({ apiKey: 'sk-test', baseURL: custom.openaiBaseUrl, maxRetries: 0 });
      const result = await client.chat.completions.create({ model: 'm', messages: [], max_tokens: 7 });
      expect(result.choices[0]?.message.content).toBe('custom openai 7');
    } finally {
      await custom.close();
    }
  });
});

describe('faults decided from the request', () => {
  it('decide() picks the fault per request before the script: a long prompt overflows until shortened', async () => {
    const sticky = await startMockLlmServer({
      script: [{ fault: 'server_error' }],
      decide: (request) =>
        JSON.stringify(request.messages).length > 200 ? { fault: 'overflow', flavour: 'openai' } : undefined,
    });
    try {
      const client = new OpenAI({ apiKey: 'sk-test', baseURL: sticky.openaiBaseUrl, maxRetries: 0 });
      const long = [{ role: 'user' as const, content: 'x'.repeat(300) }];
      for (let i = 0; i < 2; i++) {
        const error = await failure(client.chat.completions.create({ model: 'm', messages: long }));
        expect(error).toMatchObject({ status: 400, code: 'context_length_exceeded' });
      }
      // Short again: decide() falls through to the script, then to ok.
      const short = [{ role: 'user' as const, content: 'hi' }];
      await failure(client.chat.completions.create({ model: 'm', messages: short }));
      const ok = await client.chat.completions.create({ model: 'm', messages: short });
      expect(ok.choices[0]?.message.content).toBe('ok: hi');
      expect(sticky.requests.map((r) => r.fault)).toEqual(['overflow', 'overflow', 'server_error', 'ok']);
    } finally {
      await sticky.close();
    }
  });
});

describe('error faults', () => {
  it('429 with retry-after surfaces as RateLimitError with the headers readable', async () => {
    server.enqueue({ fault: 'rate_limit', retryAfterS: 7, retryAfterMs: 6500 });
    const error = await failure(chat());
    expect(error).toBeInstanceOf(OpenAI.RateLimitError);
    const rate = error as InstanceType<typeof OpenAI.RateLimitError>;
    expect(rate.headers?.get('retry-after')).toBe('7');
    expect(rate.headers?.get('retry-after-ms')).toBe('6500');
    expect(rate.code).toBe('rate_limit_exceeded');

    server.enqueue({ fault: 'rate_limit', retryAfterS: 3 });
    const anthropicError = await failure(message());
    expect(anthropicError).toBeInstanceOf(Anthropic.RateLimitError);
    expect(
      (anthropicError as InstanceType<typeof Anthropic.RateLimitError>).headers?.get('retry-after'),
    ).toBe('3');
    expect((anthropicError as InstanceType<typeof Anthropic.RateLimitError>).type).toBe('rate_limit_error');
  });

  it('server errors, fatal errors, quota and rate window too large are provider-shaped', async () => {
    server.enqueue({ fault: 'server_error', status: 503 });
    expect(await failure(chat())).toMatchObject({ status: 503, type: 'server_error' });
    server.enqueue({ fault: 'server_error', status: 529 });
    expect(await failure(message())).toMatchObject({ status: 529, type: 'overloaded_error' });
    server.enqueue({ fault: 'fatal', status: 401 });
    expect(await failure(chat())).toBeInstanceOf(OpenAI.AuthenticationError);
    server.enqueue({ fault: 'fatal' });
    expect(await failure(message())).toMatchObject({ status: 401, type: 'authentication_error' });
    server.enqueue({ fault: 'fatal', status: 404 });
    expect(await failure(chat())).toMatchObject({ status: 404, code: 'model_not_found' });
    server.enqueue({ fault: 'fatal', status: 400 });
    expect(String(await failure(chat()))).toContain("Invalid value for 'temperature'");
    server.enqueue({ fault: 'quota' });
    expect(await failure(chat())).toMatchObject({ status: 429, code: 'insufficient_quota' });
    server.enqueue({ fault: 'quota' });
    expect(String(await failure(message()))).toContain('credit balance is too low');
    server.enqueue({ fault: 'rate_window_too_large' });
    expect(String(await failure(chat()))).toContain('Request too large for gpt-4o');
    expect(lastFault()).toBe('rate_window_too_large');
  });

  const phrases: Record<OverflowFlavour, string> = {
    openai: "This model's maximum context length is 128000 tokens. However, your messages resulted in",
    openai_output: '(5000 in the messages, 4000 in the completion)',
    azure: 'your messages resulted in 10383 tokens',
    anthropic: 'prompt is too long: 208000 tokens > 200000 maximum',
    anthropic_413: 'Request exceeds the maximum size',
    anthropic_output: 'input length and `max_tokens` exceed context limit: 150000 + 64000 > 200000',
    bedrock: 'Input is too long for requested model.',
    gemini: 'The input token count (1200293) exceeds the maximum number of tokens allowed (1048576).',
    vllm: 'However, you requested 5000 tokens in the messages',
    vllm_output: 'However, you requested 5000 tokens (3000 in the messages, 2000 in the completion)',
    openrouter: "This endpoint's maximum context length is 131072 tokens.",
    mistral:
      'Prompt contains 170397 tokens and 0 draft tokens, too large for model with 131072 maximum context length',
    ollama: 'prompt too long; exceeded max context length by 4096 tokens',
  };

  it.each(OVERFLOW_FLAVOURS)('overflow %s returns its status and its message', async (flavour) => {
    server.enqueue({ fault: 'overflow', flavour });
    const response = await fetch(`${server.openaiBaseUrl}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }),
    });
    const text = await response.text();
    expect(response.status).toBe(OVERFLOW_RESPONSES[flavour].status);
    expect(JSON.parse(text)).toEqual(OVERFLOW_RESPONSES[flavour].body);
    expect(text).toContain(JSON.stringify(phrases[flavour]).slice(1, -1));
    expect(response.headers.get('request-id')).toMatch(/^req_mock/);
  });

  it('overflow through the SDKs', async () => {
    server.enqueue({ fault: 'overflow', flavour: 'openai_output' });
    const openaiError = await failure(chat());
    expect(openaiError).toBeInstanceOf(OpenAI.BadRequestError);
    expect(openaiError).toMatchObject({ status: 400, code: 'context_length_exceeded' });
    expect(String(openaiError)).toContain(phrases.openai_output);

    server.enqueue({ fault: 'overflow', flavour: 'anthropic' });
    const anthropicError = await failure(message());
    expect(anthropicError).toBeInstanceOf(Anthropic.BadRequestError);
    expect(String(anthropicError)).toContain(phrases.anthropic);

    server.enqueue({ fault: 'overflow', flavour: 'anthropic_413' });
    expect(await failure(message())).toMatchObject({ status: 413 });
  });
});

describe('completion faults', () => {
  it('truncate_text: finish length / max_tokens, output tokens = the max tokens', async () => {
    server.enqueue({ fault: 'truncate_text' });
    const cut = await chat();
    expect(cut.choices[0]?.finish_reason).toBe('length');
    expect(cut.usage?.completion_tokens).toBe(100);
    expect(`ok: ${USER.slice(0, 40)}`.startsWith(cut.choices[0]!.message.content!)).toBe(true);

    server.enqueue({ fault: 'truncate_text' });
    const stream = anthropic.messages.stream({
      model: 'claude-mock',
      max_tokens: 64,
      messages: [{ role: 'user', content: USER }],
    });
    const final = await stream.finalMessage();
    expect(final.stop_reason).toBe('max_tokens');
    expect(final.usage.output_tokens).toBe(64);
  });

  it('stop_at_limit: a normal finish with output tokens exactly at the limit', async () => {
    server.enqueue({ fault: 'stop_at_limit' });
    const done = await chat();
    expect(done.choices[0]?.finish_reason).toBe('stop');
    expect(done.usage?.completion_tokens).toBe(100);
    server.enqueue({ fault: 'stop_at_limit' });
    const reply = await message();
    expect(reply.stop_reason).toBe('end_turn');
    expect(reply.usage.output_tokens).toBe(100);
  });

  it('truncate_tool gives unparsable arguments', async () => {
    server.enqueue({ fault: 'truncate_tool' });
    const cut = await chat({ tools: openaiTools });
    const call = cut.choices[0]?.message.tool_calls?.[0];
    expect(cut.choices[0]?.finish_reason).toBe('length');
    expect(call?.type === 'function' && isUnparsable(call.function.arguments)).toBe(true);

    server.enqueue({ fault: 'truncate_tool' });
    const events = await anthropic.messages.create({
      model: 'claude-mock',
      max_tokens: 100,
      messages: [{ role: 'user', content: USER }],
      tools: anthropicTools,
      stream: true,
    });
    let partial = '';
    let stop: string | null = null;
    for await (const event of events) {
      if (event.type === 'content_block_delta' && event.delta.type === 'input_json_delta')
        partial += event.delta.partial_json;
      if (event.type === 'message_delta') stop = event.delta.stop_reason;
    }
    expect(stop).toBe('max_tokens');
    expect(partial.length).toBeGreaterThan(0);
    expect(isUnparsable(partial)).toBe(true);

    // Non-streaming Anthropic cannot carry a cut input: an empty object with stop_reason max_tokens.
    server.enqueue({ fault: 'truncate_tool' });
    const reply = await message({ tools: anthropicTools });
    expect(reply.stop_reason).toBe('max_tokens');
    expect(reply.content.find((b) => b.type === 'tool_use')).toMatchObject({ name: 'read_file', input: {} });
  });

  it('finished_cut_json: finish tool_calls with invalid JSON', async () => {
    server.enqueue({ fault: 'finished_cut_json' });
    const done = await chat({ tools: openaiTools });
    const call = done.choices[0]?.message.tool_calls?.[0];
    expect(done.choices[0]?.finish_reason).toBe('tool_calls');
    expect(call?.type === 'function' && isUnparsable(call.function.arguments)).toBe(true);
  });

  it('unknown_tool and invalid_args', async () => {
    server.enqueue({ fault: 'unknown_tool' });
    const unknown = await chat({ tools: openaiTools });
    const unknownCall = unknown.choices[0]?.message.tool_calls?.[0];
    expect(unknownCall?.type === 'function' && unknownCall.function.name).toBe('no_such_tool');

    server.enqueue({ fault: 'invalid_args' });
    const invalid = await message({ tools: anthropicTools });
    const block = invalid.content.find((b) => b.type === 'tool_use');
    expect(block).toMatchObject({ name: 'read_file' });
    expect(block?.type === 'tool_use' && typeof (block.input as { path: unknown }).path).toBe('number');
  });
});

describe('connection faults', () => {
  it('reset surfaces as a connection error', async () => {
    server.enqueue({ fault: 'reset', beforeHeaders: true });
    expect(await failure(chat())).toBeInstanceOf(OpenAI.APIConnectionError);

    // After the headers the SDK is reading the body: the error is fetch's own "terminated".
    server.enqueue({ fault: 'reset' });
    const midBody = await failure(chat());
    expect(String(midBody)).toMatch(/terminated|Connection error/);

    server.enqueue({ fault: 'reset' });
    const stream = await openai.chat.completions.create({
      model: 'gpt-4o',
      messages: [{ role: 'user', content: USER }],
      stream: true,
    });
    const midStream = await failure(
      (async () => {
        for await (const _chunk of stream) {
          // read until the reset
        }
      })(),
    );
    expect(String(midStream)).toMatch(/terminated|Connection error/);
    expect(lastFault()).toBe('reset');
  });

  it('stall with a short SDK timeout surfaces as a timeout', async () => {
    // The stall ends by dropping the connection (an APIConnectionError, not this subclass), and
    // maxRetries is 0: a timeout error can only come from the SDK's own 300 ms timer.
    server.enqueue({ fault: 'stall', ms: 5_000 });
    const error = await failure(
      openai.chat.completions.create({ model: 'gpt-4o', messages: [] }, { timeout: 300 }),
    );
    expect(error).toBeInstanceOf(OpenAI.APIConnectionTimeoutError);

    server.enqueue({ fault: 'stall', ms: 5_000 });
    const anthropicError = await failure(
      anthropic.messages.create(
        { model: 'claude-mock', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] },
        { timeout: 300 },
      ),
    );
    expect(anthropicError).toBeInstanceOf(Anthropic.APIConnectionTimeoutError);
  }, 15_000);

  it('midstream_error: chunks, then an SSE error event', async () => {
    server.enqueue({ fault: 'midstream_error' });
    const stream = await openai.chat.completions.create({
      model: 'gpt-4o',
      messages: [{ role: 'user', content: USER }],
      stream: true,
    });
    let text = '';
    const openaiError = await failure(
      (async () => {
        for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
      })(),
    );
    expect(openaiError).toBeInstanceOf(OpenAI.APIError);
    expect(String(openaiError)).toContain('The server had an error');
    expect(text.length).toBeGreaterThan(0);

    server.enqueue({ fault: 'midstream_error' });
    const anthropicStream = anthropic.messages.stream({
      model: 'claude-mock',
      max_tokens: 100,
      messages: [{ role: 'user', content: USER }],
    });
    const anthropicError = await failure(anthropicStream.finalMessage());
    expect(anthropicError).toMatchObject({ type: 'overloaded_error' });

    server.enqueue({ fault: 'midstream_error' });
    expect(await failure(chat())).toMatchObject({ status: 500 });
  });
});

describe('server behaviour', () => {
  it('close() returns promptly with a stalled request open', async () => {
    const stalled = await startMockLlmServer({ script: [{ fault: 'stall' }] });
    const pending = fetch(`${stalled.openaiBaseUrl}/chat/completions`, {
      method: 'POST',
      body: JSON.stringify({ model: 'm', messages: [] }),
    }).then(
      () => 'answered',
      () => 'failed',
    );
    await expect.poll(() => stalled.requests.length, { timeout: 20_000 }).toBe(1);
    // close() clears the stall's timer: unless it destroys the stalled socket, the server never
    // closes and this await outlasts the test's timeout.
    await stalled.close();
    expect(await pending).toBe('failed');
  });

  it('answers 404 JSON to an unknown route and 400 to a body that is not JSON', async () => {
    const missing = await fetch(`${server.url}/v1/embeddings`, { method: 'POST', body: '{}' });
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as { error: { code: string } }).error.code).toBe('unknown_url');
    expect(missing.headers.get('x-request-id')).toMatch(/^req_mock/);

    const broken = await fetch(`${server.url}/v1/messages`, { method: 'POST', body: '{not json' });
    expect(broken.status).toBe(400);
    expect(((await broken.json()) as { error: { type: string } }).error.type).toBe('invalid_request_error');
  });

  it('refuses bad options and bad faults with a message naming the field', async () => {
    await expect(startMockLlmServer({ mix: { rate_limit: 0.8, server_error: 0.4 } })).rejects.toThrow(
      /add up to/,
    );
    await expect(startMockLlmServer({ mix: { nope: 0.1 } as FaultMix })).rejects.toThrow(/mix\.nope/);
    await expect(
      startMockLlmServer({ script: [{ fault: 'overflow', flavour: 'nope' as OverflowFlavour }] }),
    ).rejects.toThrow(/script\[0\]\.flavour/);
    expect(() => server.enqueue({ fault: 'server_error', status: 418 as 500 })).toThrow(/status/);
  });

  it('a seeded mix gives the same fault sequence on two servers', async () => {
    const mix: FaultMix = { rate_limit: 0.3, server_error: 0.2, truncate_text: 0.1, overflow: 0.1 };
    const sequences: FaultName[][] = [];
    for (let i = 0; i < 2; i += 1) {
      const mixed = await startMockLlmServer({ seed: 42, mix });
      try {
        for (let n = 0; n < 25; n += 1) {
          const response = await fetch(`${mixed.url}/v1/messages`, {
            method: 'POST',
            body: JSON.stringify({ model: 'm', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }),
          });
          await response.arrayBuffer();
        }
        sequences.push(mixed.requests.map((r) => r.fault));
      } finally {
        await mixed.close();
      }
    }
    expect(sequences[0]).toEqual(sequences[1]);
    expect(new Set(sequences[0]).size).toBeGreaterThan(2);
  });

  it('the seeded draw roughly matches the probabilities over 1,000 draws', () => {
    const a = createSeededRandom(7);
    const b = createSeededRandom(7);
    const first = Array.from({ length: 20 }, () => a());
    expect(Array.from({ length: 20 }, () => b())).toEqual(first);
    expect(first.every((u) => u >= 0 && u < 1)).toBe(true);
    expect(createSeededRandom(8)()).not.toBe(first[0]);

    const mix: FaultMix = { rate_limit: 0.1, server_error: 0.1, truncate_text: 0.05 };
    const random = createSeededRandom(1234);
    const counts = new Map<FaultName, number>();
    for (let i = 0; i < 1000; i += 1) {
      const fault = drawFault(random, mix);
      counts.set(fault, (counts.get(fault) ?? 0) + 1);
    }
    expect(counts.get('rate_limit')).toBeGreaterThan(60);
    expect(counts.get('rate_limit')).toBeLessThan(140);
    expect(counts.get('server_error')).toBeGreaterThan(60);
    expect(counts.get('server_error')).toBeLessThan(140);
    expect(counts.get('truncate_text')).toBeGreaterThan(20);
    expect(counts.get('truncate_text')).toBeLessThan(80);
    expect(counts.get('ok')).toBeGreaterThan(680);
    expect(counts.get('ok')).toBeLessThan(820);
    expect([...counts.keys()].sort()).toEqual(['ok', 'rate_limit', 'server_error', 'truncate_text']);
  });

  it('builds minimal and invalid arguments from a JSON schema', () => {
    expect(minimalArguments(TOOL_SCHEMA)).toEqual(MINIMAL_ARGS);
    expect(minimalArguments({ type: 'object' })).toEqual({});
    const invalid = invalidArguments(TOOL_SCHEMA);
    expect(invalid.path).toBe(12345);
    expect(invalidArguments({ type: 'object', properties: { n: { type: 'number' } } })).toEqual({
      n: 'not-the-right-type',
    });
  });
});
