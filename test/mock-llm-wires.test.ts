import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentCliSetupText } from '../src/testing/mock-llm/agent-cli-setup.js';
import type { ScriptEntry } from '../src/testing/mock-llm/script-entry.js';
import { type MockLlmServer, startMockLlmServer } from '../src/testing/mock-llm/server.js';
import { runBaton, spawnBaton } from './helpers/cli.js';
import { type AgentCli, removeAgentCliDirs, runAgentCli } from './helpers/mock-cli.js';
import { failure } from './helpers/model-call.js';

const USER = 'hello world, this is a long enough message to be cut at forty characters';
const OK_TEXT = `ok: ${USER.slice(0, 40)}`;
const SCHEMA = {
  type: 'object',
  properties: { path: { type: 'string' }, count: { type: 'integer' } },
  required: ['path', 'count'],
};

let server: MockLlmServer;
let openai: OpenAI;

beforeAll(async () => {
  server = await startMockLlmServer();
  openai = new OpenAI({ apiKey: 'sk-test', baseURL: server.openaiBaseUrl, maxRetries: 0 });
});
afterAll(async () => {
  await server.close();
  removeAgentCliDirs();
});

const fnTool = (name: string): OpenAI.Responses.FunctionTool => ({
  type: 'function',
  name,
  parameters: SCHEMA,
  strict: false,
});

/** Reads an SSE body into its `data:` payloads (JSON-parsed where possible) and anything else. */
async function readSse(response: Response): Promise<{ data: unknown[]; rest: string }> {
  const text = await response.text();
  const data: unknown[] = [];
  let rest = '';
  for (const block of text.split(/\r?\n\r?\n/)) {
    const line = block.split('\n').find((l) => l.startsWith('data: '));
    if (line) data.push(JSON.parse(line.slice(6)));
    else rest += block;
  }
  return { data, rest };
}

function gemini(model: string, body: unknown, method = 'generateContent'): Promise<Response> {
  const query = method === 'streamGenerateContent' ? '?alt=sse' : '';
  return fetch(`${server.geminiBaseUrl}/v1beta/models/${model}:${method}${query}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-goog-api-key': 'x' },
    body: JSON.stringify(body),
  });
}

const geminiUser = { contents: [{ role: 'user', parts: [{ text: USER }] }] };
const geminiTools = [{ functionDeclarations: [{ name: 'read_file', parametersJsonSchema: SCHEMA }] }];

const chat = (content: string, extra: Record<string, unknown> = {}) => ({
  model: 'gpt-4o-mini',
  messages: [{ role: 'user', content }],
  ...extra,
});

interface GeminiChunk {
  candidates: { content: { parts?: Record<string, unknown>[] }; finishReason?: string }[];
  usageMetadata?: Record<string, number>;
  modelVersion: string;
}

describe('OpenAI Responses wire', () => {
  it('non-streaming text with usage, recorded with wire, path and script index', async () => {
    const response = await openai.responses.create({ model: 'gpt-5', input: USER, max_output_tokens: 50 });
    expect(response.output_text).toBe(OK_TEXT);
    expect(response.status).toBe('completed');
    expect(response.usage).toMatchObject({
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: Math.ceil(OK_TEXT.length / 4),
      output_tokens_details: { reasoning_tokens: 0 },
    });
    expect(response.usage!.total_tokens).toBe(response.usage!.input_tokens + response.usage!.output_tokens);
    expect(server.requests.at(-1)).toMatchObject({
      wire: 'responses',
      path: '/v1/responses',
      model: 'gpt-5',
      maxTokens: 50,
      fault: 'ok',
      scriptIndex: null,
    });
  });

  it('streams the event sequence the SDK assembles, ending in response.completed', async () => {
    const stream = openai.responses.stream({ model: 'gpt-5', input: [{ role: 'user', content: USER }] });
    const types: string[] = [];
    stream.on('event', (event) => types.push(event.type));
    const final = await stream.finalResponse();
    expect(final.output_text).toBe(OK_TEXT);
    expect(types.slice(0, 4)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
    ]);
    expect(types).toContain('response.output_text.delta');
    expect(types.at(-1)).toBe('response.completed');
    expect(final.usage?.output_tokens).toBe(Math.ceil(OK_TEXT.length / 4));
  });

  it('function calls, streaming and not, then a text answer after the function output', async () => {
    const first = await openai.responses.create({ model: 'm', input: USER, tools: [fnTool('read_file')] });
    const call = first.output.find((item) => item.type === 'function_call');
    expect(call).toMatchObject({ type: 'function_call', name: 'read_file', call_id: expect.any(String) });
    expect(JSON.parse(call?.type === 'function_call' ? call.arguments : '')).toEqual({ path: 'x', count: 1 });

    const events = await openai.responses.create({
      model: 'm',
      input: USER,
      tools: [fnTool('read_file')],
      stream: true,
    });
    let args = '';
    let done: unknown;
    for await (const event of events) {
      if (event.type === 'response.function_call_arguments.delta') args += event.delta;
      if (event.type === 'response.completed') done = event.response.output[0];
    }
    expect(JSON.parse(args)).toEqual({ path: 'x', count: 1 });
    expect(done).toMatchObject({ type: 'function_call', name: 'read_file', status: 'completed' });

    const second = await openai.responses.create({
      model: 'm',
      tools: [fnTool('read_file')],
      input: [
        { role: 'user', content: USER },
        { type: 'function_call', call_id: 'call_1', name: 'read_file', arguments: '{}' },
        { type: 'function_call_output', call_id: 'call_1', output: 'contents' },
      ],
    });
    expect(second.output_text).toBe(OK_TEXT);
  });

  it('a scripted reply: tool calls with their own names, text with cached and reasoning tokens', async () => {
    server.enqueue(
      { fault: 'ok', reply: { toolCalls: [{ name: 'exec_command', arguments: { cmd: 'ls' } }] } },
      { fault: 'ok', reply: { text: 'scripted', usage: { cachedTokens: 7, reasoningTokens: 5 } } },
    );
    const called = await openai.responses.create({
      model: 'm',
      input: 'go',
      tools: [fnTool('exec_command')],
    });
    expect(called.output[0]).toMatchObject({
      type: 'function_call',
      name: 'exec_command',
      arguments: '{"cmd":"ls"}',
    });
    const text = await openai.responses.create({ model: 'm', input: 'go' });
    expect(text.output_text).toBe('scripted');
    expect(text.usage?.input_tokens_details.cached_tokens).toBe(7);
    expect(text.usage?.output_tokens_details.reasoning_tokens).toBe(5);
    expect(text.usage?.output_tokens).toBe(Math.ceil('scripted'.length / 4) + 5);
    expect(server.requests.slice(-2).map((r) => r.scriptIndex)).toEqual([
      server.requests.at(-2)!.scriptIndex,
      server.requests.at(-2)!.scriptIndex! + 1,
    ]);
  });

  it("a scripted call's namespace goes on its function_call item (codex's MCP tools); none without one", async () => {
    server.enqueue({
      fault: 'ok',
      reply: { toolCalls: [{ namespace: 'mcp__baton', name: 'propose', arguments: { plan: 'p' } }] },
    });
    const called = await openai.responses.create({ model: 'm', input: 'go', tools: [fnTool('propose')] });
    expect(called.output[0]).toMatchObject({
      type: 'function_call',
      namespace: 'mcp__baton',
      name: 'propose',
    });
    server.enqueue({ fault: 'ok', reply: { toolCalls: [{ name: 'propose', arguments: {} }] } });
    const plain = await openai.responses.create({ model: 'm', input: 'go', tools: [fnTool('propose')] });
    expect(plain.output[0]).not.toHaveProperty('namespace');
  });

  it('a request declaring more than 8 tools gets a text answer, never a tool call', async () => {
    const tools = Array.from({ length: 9 }, (_, i) => fnTool(`tool_${i}`));
    const response = await openai.responses.create({ model: 'm', input: USER, tools });
    expect(response.output.map((item) => item.type)).toEqual(['message']);
    expect(response.output_text).toBe(OK_TEXT);
  });

  it('asks for JSON output: the smallest JSON its schema accepts', async () => {
    const response = await openai.responses.create({
      model: 'm',
      input: 'classify',
      text: { format: { type: 'json_schema', name: 'c', schema: SCHEMA } },
    });
    expect(JSON.parse(response.output_text)).toEqual({ path: 'x', count: 1 });
  });

  it('faults in the OpenAI shape: 429 with retry-after seconds or date, 5xx, 4xx, quota', async () => {
    server.enqueue({ fault: 'rate_limit', retryAfterS: 2 });
    const limited = (await failure(openai.responses.create({ model: 'm', input: 'x' }))) as InstanceType<
      typeof OpenAI.RateLimitError
    >;
    expect(limited).toBeInstanceOf(OpenAI.RateLimitError);
    expect(limited.headers?.get('retry-after')).toBe('2');
    expect(limited.code).toBe('rate_limit_exceeded');
    expect(limited.message).toContain('Please try again in 2s');

    server.enqueue({ fault: 'rate_limit', retryAfterDate: 30 });
    // 30 s after the server answered, rounded up to a whole second: bounded by the times around the
    // call, however long the call took.
    const before = Date.now();
    const dated = (await failure(openai.responses.create({ model: 'm', input: 'x' }))) as InstanceType<
      typeof OpenAI.RateLimitError
    >;
    const after = Date.now();
    const at = Date.parse(dated.headers?.get('retry-after') ?? '');
    expect(at).toBeGreaterThanOrEqual(before + 30_000);
    expect(at).toBeLessThan(after + 31_000);

    for (const status of [500, 502, 503, 529] as const) {
      server.enqueue({ fault: 'server_error', status });
      expect(await failure(openai.responses.create({ model: 'm', input: 'x' }))).toMatchObject({ status });
    }
    server.enqueue({ fault: 'fatal', status: 401 });
    expect(await failure(openai.responses.create({ model: 'm', input: 'x' }))).toBeInstanceOf(
      OpenAI.AuthenticationError,
    );
    for (const status of [400, 403, 404] as const) {
      server.enqueue({ fault: 'fatal', status });
      expect(await failure(openai.responses.create({ model: 'm', input: 'x' }))).toMatchObject({ status });
    }
    server.enqueue({ fault: 'quota' });
    expect(await failure(openai.responses.create({ model: 'm', input: 'x' }))).toMatchObject({
      code: 'insufficient_quota',
    });
  });

  it('midstream error ends the stream with response.failed; truncation gives response.incomplete', async () => {
    server.enqueue({ fault: 'midstream_error' });
    const failing = await openai.responses.create({ model: 'm', input: USER, stream: true });
    const types: string[] = [];
    let error: unknown;
    for await (const event of failing) {
      types.push(event.type);
      if (event.type === 'response.failed') error = event.response.error;
    }
    expect(types).toContain('response.output_text.delta');
    expect(types.at(-1)).toBe('response.failed');
    expect(error).toMatchObject({ code: 'server_error' });

    server.enqueue({ fault: 'truncate_text' });
    const cut = await openai.responses.create({ model: 'm', input: USER, max_output_tokens: 20 });
    expect(cut.status).toBe('incomplete');
    expect(cut.incomplete_details).toEqual({ reason: 'max_output_tokens' });
    expect(cut.usage?.output_tokens).toBe(20);
  });

  it('reset and stall reach the SDK as connection errors and timeouts', async () => {
    server.enqueue({ fault: 'reset', beforeHeaders: true });
    expect(await failure(openai.responses.create({ model: 'm', input: 'x' }))).toBeInstanceOf(
      OpenAI.APIConnectionError,
    );
    server.enqueue({ fault: 'reset' });
    const cut = await openai.responses.create({ model: 'm', input: USER, stream: true });
    const midStream = await failure(
      (async () => {
        for await (const _event of cut) {
          // read until the reset
        }
      })(),
    );
    expect(String(midStream)).toMatch(/terminated|Connection error/);
    server.enqueue({ fault: 'stall', ms: 5_000 });
    expect(
      await failure(openai.responses.create({ model: 'm', input: 'x' }, { timeout: 300 })),
    ).toBeInstanceOf(OpenAI.APIConnectionTimeoutError);
  });
});

describe('Gemini wire', () => {
  it('generateContent: text parts, finishReason, usageMetadata, the model from the path', async () => {
    const response = await gemini('gemini-2.5-pro', {
      ...geminiUser,
      generationConfig: { maxOutputTokens: 64 },
    });
    expect(response.status).toBe(200);
    const body = (await response.json()) as GeminiChunk;
    expect(body.candidates[0]?.content.parts).toEqual([{ text: OK_TEXT }]);
    expect(body.candidates[0]?.finishReason).toBe('STOP');
    expect(body.modelVersion).toBe('gemini-2.5-pro');
    const usage = body.usageMetadata!;
    expect(usage.candidatesTokenCount).toBe(Math.ceil(OK_TEXT.length / 4));
    expect(usage.totalTokenCount).toBe(usage.promptTokenCount! + usage.candidatesTokenCount!);
    expect(server.requests.at(-1)).toMatchObject({
      wire: 'gemini',
      path: '/v1beta/models/gemini-2.5-pro:generateContent',
      model: 'gemini-2.5-pro',
      stream: false,
      maxTokens: 64,
      scriptIndex: null,
    });
  });

  it('streamGenerateContent?alt=sse: text in pieces, finish and usage on the last chunk', async () => {
    server.enqueue({
      fault: 'ok',
      reply: { text: 'streamed answer', usage: { cachedTokens: 3, reasoningTokens: 4 } },
    });
    const { data } = await readSse(await gemini('gemini-flash', geminiUser, 'streamGenerateContent'));
    const chunks = data as GeminiChunk[];
    expect(chunks.length).toBeGreaterThan(1);
    expect(chunks.map((c) => c.candidates[0]?.content.parts?.[0]?.text).join('')).toBe('streamed answer');
    const last = chunks.at(-1)!;
    expect(last.candidates[0]?.finishReason).toBe('STOP');
    expect(last.usageMetadata).toMatchObject({ cachedContentTokenCount: 3, thoughtsTokenCount: 4 });
    expect(last.usageMetadata!.totalTokenCount).toBe(
      last.usageMetadata!.promptTokenCount! + last.usageMetadata!.candidatesTokenCount! + 4,
    );
    expect(chunks[0]?.usageMetadata).toBeUndefined();
    expect(server.requests.at(-1)).toMatchObject({ stream: true, fault: 'ok' });
  });

  it('functionCall parts, streaming and not, then text after a functionResponse', async () => {
    const body = (await (await gemini('m', { ...geminiUser, tools: geminiTools })).json()) as GeminiChunk;
    expect(body.candidates[0]?.content.parts).toEqual([
      { functionCall: { name: 'read_file', args: { path: 'x', count: 1 } } },
    ]);
    server.enqueue({
      fault: 'ok',
      reply: { toolCalls: [{ name: 'write_file', arguments: { file_path: 'a.txt', content: 'hi' } }] },
    });
    const { data } = await readSse(
      await gemini('m', { ...geminiUser, tools: geminiTools }, 'streamGenerateContent'),
    );
    expect((data.at(-1) as GeminiChunk).candidates[0]?.content.parts).toEqual([
      { functionCall: { name: 'write_file', args: { file_path: 'a.txt', content: 'hi' } } },
    ]);
    const answered = (await (
      await gemini('m', {
        tools: geminiTools,
        contents: [
          ...geminiUser.contents,
          { role: 'model', parts: [{ functionCall: { name: 'read_file', args: {} } }] },
          { role: 'user', parts: [{ functionResponse: { name: 'read_file', response: { output: 'x' } } }] },
        ],
      })
    ).json()) as GeminiChunk;
    expect(answered.candidates[0]?.content.parts).toEqual([{ text: OK_TEXT }]);
  });

  it("answers a router's JSON request with JSON its schema accepts (capitalised Gemini types)", async () => {
    const schema = {
      type: 'OBJECT',
      properties: {
        complexity_reasoning: { type: 'STRING' },
        complexity_score: { type: 'INTEGER' },
      },
      required: ['complexity_reasoning', 'complexity_score'],
    };
    const response = await gemini('gemini-flash-lite', {
      ...geminiUser,
      generationConfig: { responseMimeType: 'application/json', responseJsonSchema: schema },
    });
    const body = (await response.json()) as GeminiChunk;
    const answer = JSON.parse(String(body.candidates[0]?.content.parts?.[0]?.text));
    expect(answer).toEqual({ complexity_reasoning: 'x', complexity_score: 1 });
  });

  it('errors as google.rpc.Status: 429 with RetryInfo and retry-after, 5xx, 4xx, daily quota', async () => {
    server.enqueue({ fault: 'rate_limit', retryAfterS: 1 });
    const limited = await gemini('m', geminiUser);
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('1');
    expect(await limited.json()).toMatchObject({
      error: {
        code: 429,
        status: 'RESOURCE_EXHAUSTED',
        details: [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '1s' }],
      },
    });
    server.enqueue({ fault: 'rate_limit', retryAfterDate: 5 });
    const dated = await gemini('m', geminiUser);
    expect(Date.parse(dated.headers.get('retry-after') ?? '')).toBeGreaterThan(Date.now());
    expect(((await dated.json()) as { error: { details: unknown[] } }).error.details).toEqual([
      { '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '5s' },
    ]);

    const expected = [
      [{ fault: 'server_error', status: 500 }, 500, 'INTERNAL'],
      [{ fault: 'server_error', status: 502 }, 502, 'UNAVAILABLE'],
      [{ fault: 'server_error', status: 503 }, 503, 'UNAVAILABLE'],
      [{ fault: 'server_error', status: 529 }, 529, 'UNAVAILABLE'],
      [{ fault: 'fatal', status: 400 }, 400, 'INVALID_ARGUMENT'],
      [{ fault: 'fatal', status: 401 }, 401, 'UNAUTHENTICATED'],
      [{ fault: 'fatal', status: 403 }, 403, 'PERMISSION_DENIED'],
      [{ fault: 'fatal', status: 404 }, 404, 'NOT_FOUND'],
      [{ fault: 'overflow', flavour: 'gemini' }, 400, 'INVALID_ARGUMENT'],
    ] as const;
    for (const [spec, status, rpcStatus] of expected) {
      server.enqueue(spec as ScriptEntry);
      const response = await gemini('m', geminiUser);
      expect(response.status).toBe(status);
      expect(await response.json()).toMatchObject({ error: { code: status, status: rpcStatus } });
    }
    server.enqueue({ fault: 'quota' });
    const quota = (await (await gemini('m', geminiUser)).json()) as {
      error: { details: { violations: unknown }[] };
    };
    expect(JSON.stringify(quota.error.details)).toContain('PerDay');
  });

  it('midstream error is a bare JSON error chunk after the first data chunk', async () => {
    server.enqueue({ fault: 'midstream_error' });
    const { data, rest } = await readSse(await gemini('m', geminiUser, 'streamGenerateContent'));
    expect(data).toHaveLength(1);
    expect(JSON.parse(rest)).toMatchObject({ error: { code: 500, status: 'INTERNAL' } });
  });

  it('truncation, a malformed call, reset, stall, and a stream without alt=sse', async () => {
    server.enqueue({ fault: 'truncate_text' });
    const cut = (await (await gemini('m', geminiUser)).json()) as GeminiChunk;
    expect(cut.candidates[0]?.finishReason).toBe('MAX_TOKENS');
    server.enqueue({ fault: 'finished_cut_json' });
    const malformed = (await (
      await gemini('m', { ...geminiUser, tools: geminiTools })
    ).json()) as GeminiChunk;
    expect(malformed.candidates[0]?.finishReason).toBe('MALFORMED_FUNCTION_CALL');

    server.enqueue({ fault: 'reset' });
    const reset = await gemini('m', geminiUser, 'streamGenerateContent');
    expect(String(await failure(reset.text()))).toMatch(/terminated/);
    server.enqueue({ fault: 'stall', ms: 5_000 });
    const stalled = fetch(`${server.geminiBaseUrl}/v1beta/models/m:generateContent`, {
      method: 'POST',
      body: JSON.stringify(geminiUser),
      signal: AbortSignal.timeout(300),
    });
    expect(await failure(stalled)).toMatchObject({ name: 'TimeoutError' });

    const plain = await fetch(`${server.geminiBaseUrl}/v1beta/models/m:streamGenerateContent`, {
      method: 'POST',
      body: JSON.stringify(geminiUser),
    });
    expect(plain.status).toBe(400);
  });
});

describe('script entries: reply, when, repeat', () => {
  const post = (s: MockLlmServer, body: unknown, path = '/v1/chat/completions') =>
    fetch(`${s.url}${path}`, { method: 'POST', body: JSON.stringify(body) }).then((r) => r.json());

  it('the first entry whose when matches answers; others wait; no match falls through to ok', async () => {
    const s = await startMockLlmServer({
      script: [
        { fault: 'ok', when: { wire: 'gemini' }, reply: { text: 'for gemini' } },
        { fault: 'ok', when: { promptIncludes: 'second', model: 'mini' }, reply: { text: 'matched prompt' } },
        { fault: 'ok', when: { stream: false, hasToolResult: true }, reply: { text: 'after tool' } },
        { fault: 'ok', when: { hasTools: true }, reply: { text: 'agent turn' } },
      ],
    });
    try {
      const texts = async (body: unknown) =>
        ((await post(s, body)) as { choices: { message: { content: string } }[] }).choices[0]?.message
          .content;
      expect(await texts(chat('first'))).toBe('ok: first');
      expect(await texts(chat('the second one'))).toBe('matched prompt');
      const tools = [{ type: 'function', function: { name: 't', parameters: {} } }];
      expect(await texts(chat('x', { tools }))).toBe('agent turn');
      const withResult = chat('y');
      withResult.messages.push({ role: 'tool', content: 'r' } as never);
      expect(await texts(withResult)).toBe('after tool');
      const gem = (await (
        await fetch(`${s.geminiBaseUrl}/v1beta/models/g:generateContent`, { method: 'POST', body: '{}' })
      ).json()) as GeminiChunk;
      expect(gem.candidates[0]?.content.parts).toEqual([{ text: 'for gemini' }]);
      expect(s.requests.map((r) => r.scriptIndex)).toEqual([null, 1, 3, 2, 0]);
    } finally {
      await s.close();
    }
  });

  it('repeat counts answers; forever keeps a fault; enqueue continues the indices', async () => {
    const s = await startMockLlmServer({
      script: [
        { fault: 'server_error', repeat: 2 },
        { fault: 'ok', reply: { text: 'then ok' } },
      ],
    });
    try {
      await post(s, chat('a'));
      await post(s, chat('a'));
      const third = (await post(s, chat('a'))) as { choices: { message: { content: string } }[] };
      expect(third.choices[0]?.message.content).toBe('then ok');
      s.enqueue({ fault: 'rate_limit', repeat: 'forever', when: { wire: 'anthropic' } });
      for (let i = 0; i < 3; i += 1) {
        await post(
          s,
          { model: 'c', max_tokens: 5, messages: [{ role: 'user', content: 'b' }] },
          '/v1/messages',
        );
      }
      await post(s, chat('a'));
      expect(s.requests.map((r) => [r.fault, r.scriptIndex])).toEqual([
        ['server_error', 0],
        ['server_error', 0],
        ['ok', 1],
        ['rate_limit', 2],
        ['rate_limit', 2],
        ['rate_limit', 2],
        ['ok', null],
      ]);
    } finally {
      await s.close();
    }
  });

  it('refuses bad entries with a message naming the field', async () => {
    const bad = (entry: unknown) => startMockLlmServer({ script: [{ fault: 'ok' }, entry as ScriptEntry] });
    await expect(bad({ fault: 'ok', when: { wire: 'grpc' } })).rejects.toThrow(
      /script\[1\]\.when\.wire: unknown wire/,
    );
    await expect(bad({ fault: 'ok', when: { prompt: 'x' } })).rejects.toThrow(/when\.prompt: unknown field/);
    await expect(bad({ fault: 'ok', repeat: 0 })).rejects.toThrow(/script\[1\]\.repeat/);
    await expect(bad({ fault: 'ok', reply: { toolCalls: [{ name: 'Write' }] } })).rejects.toThrow(
      /reply\.toolCalls\[0\]\.arguments/,
    );
    await expect(bad({ fault: 'rate_limit', retryAfterDate: -1 })).rejects.toThrow(/retryAfterDate/);
  });
});

describe('baton mock-llm --script-file', () => {
  it('serves the file script and prints each wire and CLI setup; bad files exit 2 naming index and field', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'baton-mock-script-'));
    const good = join(dir, 'good.json');
    writeFileSync(good, JSON.stringify([{ fault: 'ok', reply: { text: 'from the file' } }]));
    const proc = spawnBaton(['mock-llm', '--script-file', good]);
    while (!proc.stdout().includes('Stop with Ctrl-C')) {
      const exited = await Promise.race([proc.exited, new Promise((r) => setTimeout(r, 50, undefined))]);
      if (exited) throw new Error(`mock-llm exited early: ${proc.stderr()}`);
    }
    const url = /listening on (\S+)/.exec(proc.stdout())?.[1];
    for (const hint of [
      '/responses',
      '/v1beta/models/',
      'ANTHROPIC_BASE_URL=',
      'wire_api = "responses"',
      'GOOGLE_GEMINI_BASE_URL=',
    ]) {
      expect(proc.stdout()).toContain(hint);
    }
    const reply = (await (
      await fetch(`${url}/v1/chat/completions`, { method: 'POST', body: JSON.stringify(chat('x')) })
    ).json()) as { choices: { message: { content: string } }[] };
    expect(reply.choices[0]?.message.content).toBe('from the file');
    proc.child.kill('SIGTERM');
    expect((await proc.exited).code).toBe(0);

    const broken = join(dir, 'bad.json');
    writeFileSync(broken, JSON.stringify([{ fault: 'ok' }, { fault: 'ok', when: { wire: 'soap' } }]));
    const result = await runBaton(['mock-llm', '--script-file', broken]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`${broken}: script[1].when.wire: unknown wire "soap"`);
    const missing = await runBaton(['mock-llm', '--script-file', join(dir, 'none.json')]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('none.json');
  });

  it('the setup text names the config each CLI needs', () => {
    const text = agentCliSetupText({ ...server });
    expect(text).toContain(`GOOGLE_GEMINI_BASE_URL=${server.geminiBaseUrl}`);
    expect(text).toContain(`base_url = "${server.openaiBaseUrl}"`);
  });
});

/** The write-tool script of each CLI: its own tool name and arguments, then a text answer. */
const WRITE_CALLS: Record<AgentCli, { name: string; arguments: Record<string, unknown> }> = {
  claude: { name: 'Write', arguments: { file_path: 'out.txt', content: 'written by claude\n' } },
  codex: { name: 'exec_command', arguments: { cmd: "printf 'written by codex\\n' > out.txt" } },
  gemini: { name: 'write_file', arguments: { file_path: 'out.txt', content: 'written by gemini\n' } },
};

function cliOutputText(cli: AgentCli, stdout: string): string {
  if (cli === 'codex') {
    const messages = stdout
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as { type: string; item?: { type: string; text?: string } })
      .filter((event) => event.type === 'item.completed' && event.item?.type === 'agent_message');
    return messages.map((event) => event.item?.text).join('\n');
  }
  const output = JSON.parse(stdout) as { result?: string; response?: string };
  return String(cli === 'claude' ? output.result : output.response);
}

describe.each(['claude', 'codex', 'gemini'] as const)('the real %s CLI against the mock', (cli) => {
  it('completes a turn with the scripted answer after writing a file through its own tool', async () => {
    const agent = await startMockLlmServer({
      script: [
        {
          fault: 'ok',
          when: { hasTools: true, hasToolResult: false },
          reply: { toolCalls: [WRITE_CALLS[cli]] },
        },
        {
          fault: 'ok',
          when: { hasTools: true, hasToolResult: true },
          reply: { text: 'scripted: file written' },
        },
      ],
    });
    try {
      const run = await runAgentCli(cli, agent, 'write out.txt please', { timeoutMs: 60_000 });
      const context = `exit ${run.code}\nstdout: ${run.stdout.slice(0, 2000)}\nstderr: ${run.stderr.slice(-2000)}`;
      expect(run.code, context).toBe(0);
      expect(cliOutputText(cli, run.stdout), context).toContain('scripted: file written');
      expect(readFileSync(join(run.workDir, 'out.txt'), 'utf8')).toBe(`written by ${cli}\n`);
      const scripted = agent.requests.filter((r) => r.scriptIndex !== null).map((r) => r.scriptIndex);
      expect(scripted).toEqual([0, 1]);
    } finally {
      await agent.close();
    }
  }, 90_000);
});
