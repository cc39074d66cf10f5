// npm run bench:recovery — 1,000 model calls against the fault-injecting mock provider with a
// seeded fault mix (20% transient incl. 429 with Retry-After, 5% truncation, 3% overflow, 2% fatal),
// side by side: (a) Baton's harness, (b) the openai SDK's own retries (maxRetries 2), (c) a naive
// "retry anything 3 times" loop. Faults belong to calls, as in life: a bad key stays bad, an
// overlong prompt overflows until it is shortened, a cut answer stays cut at the same budget,
// and a transient failure recurs on each retry with probability 0.2, the rate of first requests.
// Baton's sleeps go through an injected clock scaled by 1/1000. The SDK's clock cannot be
// injected, so for (b) and (c) a fetch wrapper shortens Retry-After to 1 ms: that changes how long
// they wait, not how many requests they send. BENCH_RUNS seeds (default 3), medians printed.
import OpenAI from 'openai';
import { callModelWithRecovery, createOpenAiProvider } from '../dist/index.js';
import { scaledClock, startMockLlmServer } from '../dist/testing.js';
import { median } from './lib.mjs';

const CALLS = Number(process.env.BENCH_CALLS ?? 1000);
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const CONCURRENCY = 16;
const MAX_TOKENS = 512;
const WINDOW = 8192;
const TOOLS = [
  {
    type: 'function',
    function: {
      name: 'lookup',
      description: 'Looks something up',
      parameters: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] },
    },
  },
];

/** mulberry32: a small seeded PRNG. */
function prng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function transientFault(random) {
  const r = random();
  if (r < 0.4) return { fault: 'rate_limit', retryAfterS: [1, 2, 5, 20][Math.floor(random() * 4)] };
  if (r < 0.55) return { fault: 'rate_limit' };
  if (r < 0.85) return { fault: 'server_error', status: [500, 502, 503][Math.floor(random() * 3)] };
  return { fault: 'reset' };
}

/**
 * The scenario of each call: exactly 20% transient, 5% truncation, 3% overflow, 2% fatal and the
 * rest clean, in an order and with details drawn from the seed.
 */
function scenarios(seed) {
  const random = prng(seed);
  const count = (share) => Math.round(CALLS * share);
  const kinds = [
    ...Array(count(0.2)).fill('transient'),
    ...Array(count(0.05)).fill('truncation'),
    ...Array(count(0.03)).fill('overflow'),
    ...Array(count(0.02)).fill('fatal'),
  ];
  kinds.push(...Array(CALLS - kinds.length).fill('clean'));
  for (let i = kinds.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [kinds[i], kinds[j]] = [kinds[j], kinds[i]];
  }
  const fatal = [{ fault: 'fatal', status: 401 }, { fault: 'fatal', status: 400 }, { fault: 'quota' }];
  return kinds.map((kind) => {
    if (kind === 'transient')
      return { kind, first: transientFault(random), seed: Math.floor(random() * 2 ** 31) };
    if (kind === 'truncation') return { kind: random() < 0.5 ? 'truncate_text' : 'truncate_tool' };
    if (kind === 'fatal') return { kind, spec: fatal[Math.floor(random() * 3)] };
    return { kind };
  });
}

const estimate = (messages) => Math.ceil(JSON.stringify(messages).length / 4);

/** Decides each request's fault from its call's scenario and from the request itself. */
function decider(plan, seen) {
  return (request) => {
    const text = JSON.stringify(request.messages);
    const match = /call-(\d+)/.exec(text);
    if (!match) return undefined;
    const index = Number(match[1]);
    const scenario = plan[index];
    const attempt = (seen.get(index) ?? 0) + 1;
    seen.set(index, attempt);
    switch (scenario.kind) {
      case 'clean':
        return { fault: 'ok' };
      case 'transient': {
        if (attempt === 1) return scenario.first;
        const random = prng(scenario.seed + attempt);
        return random() < 0.2 ? transientFault(random) : { fault: 'ok' };
      }
      case 'truncate_text':
      case 'truncate_tool':
        return request.maxTokens > MAX_TOKENS ? { fault: 'ok' } : { fault: scenario.kind };
      case 'overflow':
        return estimate(request.messages) + request.maxTokens > WINDOW
          ? { fault: 'overflow', flavour: 'openai' }
          : { fault: 'ok' };
      case 'fatal':
        return scenario.spec;
    }
  };
}

function messagesOf(index, scenario) {
  const messages = [{ role: 'system', content: 'You answer briefly.' }];
  if (scenario.kind === 'overflow') {
    for (let i = 0; i < 40; i++) {
      messages.push({
        role: i % 2 ? 'assistant' : 'user',
        content: `old turn ${i} ${'lorem ipsum '.repeat(80)}`,
      });
    }
  }
  messages.push({ role: 'user', content: `call-${index}: find the answer` });
  return messages;
}

/** A complete answer: not cut, and every tool call's arguments parse as a JSON object. */
function judge(finishReason, toolCalls) {
  const brokenTool = toolCalls.some((call) => {
    try {
      const value = JSON.parse(call.argumentsText || '{}');
      return typeof value !== 'object' || value === null || Array.isArray(value);
    } catch {
      return true;
    }
  });
  return { complete: finishReason !== 'length' && !brokenTool, brokenTool };
}

/** Retry-After shortened to 1 ms for clients whose clock cannot be injected. */
const quickFetch = async (input, init) => {
  const response = await fetch(input, init);
  if (response.ok) return response;
  const headers = new Headers(response.headers);
  headers.set('retry-after-ms', '1');
  headers.delete('retry-after');
  return new Response(await response.text(), { status: response.status, headers });
};

const approaches = {
  async baton(server, index, scenario) {
    const provider = createOpenAiProvider({ baseURL: server.openaiBaseUrl, apiKey: 'sk-bench' });
    const result = await callModelWithRecovery({
      provider,
      request: {
        model: 'gpt-bench',
        messages: messagesOf(index, scenario),
        maxOutputTokens: MAX_TOKENS,
        tools: TOOLS.map((t) => ({
          name: t.function.name,
          description: t.function.description,
          parameters: t.function.parameters,
        })),
      },
      capabilities: { contextWindow: WINDOW, maxOutputTokens: 4096, supportsTools: true },
      clock: scaledClock(0.001),
      random: prng(index + 7),
    });
    if (!result.ok) return { ok: false, brokenTool: false };
    const verdict = judge(result.response.finishReason, result.response.toolCalls);
    return { ok: verdict.complete, brokenTool: verdict.brokenTool };
  },
  async sdk(server, index, scenario) {
    const client = new OpenAI({
      apiKey: 'sk-bench',
      baseURL: server.openaiBaseUrl,
      maxRetries: 2,
      fetch: quickFetch,
    });
    return sdkCall(client, index, scenario);
  },
  async naive(server, index, scenario) {
    const client = new OpenAI({
      apiKey: 'sk-bench',
      baseURL: server.openaiBaseUrl,
      maxRetries: 0,
      fetch: quickFetch,
    });
    let last = { ok: false, brokenTool: false };
    for (let attempt = 0; attempt < 4; attempt++) {
      last = await sdkCall(client, index, scenario);
      if (!last.threw) return last;
    }
    return last;
  },
};

async function sdkCall(client, index, scenario) {
  try {
    const data = await client.chat.completions.create({
      model: 'gpt-bench',
      messages: messagesOf(index, scenario),
      max_tokens: MAX_TOKENS,
      tools: TOOLS,
    });
    const choice = data.choices[0];
    const calls = (choice?.message.tool_calls ?? []).map((c) => ({ argumentsText: c.function.arguments }));
    const verdict = judge(choice?.finish_reason, calls);
    // What these clients hand on as the answer: a cut tool call goes to the tool.
    return { ok: verdict.complete, brokenTool: verdict.brokenTool, threw: false };
  } catch {
    return { ok: false, brokenTool: false, threw: true };
  }
}

async function measure(name, seed) {
  const plan = scenarios(seed);
  const requestsPerCall = new Map();
  const server = await startMockLlmServer({ decide: decider(plan, requestsPerCall) });
  const outcomes = new Array(CALLS);
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < CALLS) {
        const index = next++;
        outcomes[index] = await approaches[name](server, index, plan[index]);
      }
    }),
  );
  const elapsedMs = performance.now() - started;
  await server.close();
  const recoverable = plan.map((s, i) => [s, i]).filter(([s]) => s.kind !== 'fatal');
  const fatal = plan.map((s, i) => [s, i]).filter(([s]) => s.kind === 'fatal');
  const fatalRequests = fatal.reduce((sum, [, i]) => sum + (requestsPerCall.get(i) ?? 0), 0);
  if (process.env.BENCH_DEBUG) {
    const byKind = {};
    plan.forEach((s, i) => {
      byKind[s.kind] ??= { calls: 0, requests: 0, failed: 0 };
      const k = byKind[s.kind];
      k.calls++;
      k.requests += requestsPerCall.get(i) ?? 0;
      if (!outcomes[i].ok) k.failed++;
    });
    console.error(name, JSON.stringify(byKind));
  }
  return {
    successOnRecoverable: recoverable.filter(([, i]) => outcomes[i].ok).length / recoverable.length,
    amplification: server.requests.length / CALLS,
    wastedFatalRetries: fatalRequests - fatal.length,
    truncatedToolCallsExecuted: outcomes.filter((o) => o.brokenTool).length,
    elapsedMs,
  };
}

const names = ['baton', 'sdk', 'naive'];
const results = Object.fromEntries(names.map((n) => [n, []]));
for (let run = 0; run < RUNS; run++) {
  for (const name of names) results[name].push(await measure(name, 1000 + run));
}
const rows = [
  [
    'approach',
    'success on recoverable',
    'requests per call',
    'retries of fatal errors',
    'truncated tool calls executed',
  ],
];
for (const name of names) {
  const m = (key) => median(results[name].map((r) => r[key]));
  rows.push([
    { baton: '(a) Baton harness', sdk: '(b) openai SDK maxRetries 2', naive: '(c) naive retry x3' }[name],
    `${(m('successOnRecoverable') * 100).toFixed(2)}%`,
    m('amplification').toFixed(3),
    String(m('wastedFatalRetries')),
    String(m('truncatedToolCallsExecuted')),
  ]);
}
const widths = rows[0].map((_, c) => Math.max(...rows.map((r) => r[c].length)));
console.log(
  `${CALLS} calls x ${RUNS} seeds, medians; goals for (a): success >= 99.50%, amplification <= 1.35, 0 fatal retries, 0 truncated tool calls executed`,
);
for (const row of rows) console.log(row.map((cell, c) => cell.padEnd(widths[c])).join('  '));
