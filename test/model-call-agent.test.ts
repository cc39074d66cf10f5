import { afterEach, describe, expect, it } from 'vitest';
import { CHANGE_APPROACH_MESSAGE, runAgent } from '../src/model-call/agent-loop.js';
import type { HarnessEvent } from '../src/model-call/call-state.js';
import { MemoryEffectLedger, type ToolDefinition, ToolError } from '../src/model-call/tools.js';
import type { ModelCapabilities } from '../src/model-call/types.js';
import type { FaultSpec } from '../src/testing/mock-llm/faults.js';
import type { MockLlmOptions, MockLlmServer } from '../src/testing/mock-llm/types.js';
import { fakeClock, mockServer, providerFor, type Wire } from './helpers/model-call.js';

const CAPS: ModelCapabilities = { contextWindow: 100_000, maxOutputTokens: 8000, supportsTools: true };
let server: MockLlmServer | null = null;
afterEach(async () => {
  await server?.close();
  server = null;
});

/** A tool that records every call it really ran. */
function countingTool(
  kind: 'read' | 'write',
  extra: Partial<ToolDefinition<{ q: string }>> = {},
): ToolDefinition<{ q: string }> & { calls: { q: string }[] } {
  const calls: { q: string }[] = [];
  return {
    name: 'lookup',
    description: 'Looks something up',
    parameters: {
      type: 'object',
      properties: { q: { type: 'string' } },
      required: ['q'],
      additionalProperties: false,
    },
    kind,
    calls,
    run: (args) => {
      calls.push(args);
      return { found: args.q };
    },
    ...extra,
  };
}

async function agent(
  wire: Wire,
  tool: ToolDefinition<never>,
  mock: MockLlmOptions,
  options: Partial<Parameters<typeof runAgent>[0]> = {},
) {
  server = await mockServer(mock);
  const events: HarnessEvent[] = [];
  const result = await runAgent({
    provider: providerFor(server, wire, { stream: wire === 'anthropic' }),
    model: 'test-model',
    capabilities: CAPS,
    prompt: 'find x',
    tools: [tool],
    clock: fakeClock(),
    onEvent: (event) => events.push(event),
    ...options,
  });
  return { result, events };
}

const toolMessages = (messages: { role: string; content: string }[]) =>
  messages.filter((m) => m.role === 'tool').map((m) => m.content);

describe.each(['openai', 'anthropic'] as const)('agent loop over the %s adapter', (wire) => {
  it('runs a valid tool call and finishes with the model text', async () => {
    const tool = countingTool('read');
    const { result } = await agent(wire, tool as never, {});
    expect(tool.calls).toEqual([{ q: 'x' }]);
    expect(result.ok && result.text).toBe('ok: find x');
    expect(result.ok && result.turns).toBe(2);
  });

  it.each([
    ['unknown_tool', /^Error\[unknown_tool\]: no tool named "no_such_tool" \(available: lookup\)/],
    ['invalid_args', /^Error\[invalid_arguments\]: \/q must be string/],
  ] as const)('returns %s to the model as a tool error; the tool never runs', async (fault, message) => {
    const tool = countingTool('read');
    const { result, events } = await agent(wire, tool as never, { script: [{ fault } as FaultSpec] });
    expect(tool.calls).toEqual([]);
    expect(result.ok).toBe(true);
    expect(toolMessages(result.messages)).toEqual([expect.stringMatching(message)]);
    expect(events.filter((e) => e.type === 'tool.failed')).toHaveLength(1);
  });

  it('never executes a truncated tool call', async () => {
    const tool = countingTool('write');
    const { result } = await agent(wire, tool as never, {
      script: [{ fault: 'truncate_tool' }, { fault: 'truncate_tool' }],
    });
    expect(tool.calls).toEqual([]);
    expect(!result.ok && result.reason).toBe('truncated_tool_call');
  });

  it('regenerates a "finished" tool call with cut JSON instead of running it', async () => {
    const tool = countingTool('write');
    const { result } = await agent(wire, tool as never, { script: [{ fault: 'finished_cut_json' }] });
    expect(tool.calls).toEqual([{ q: 'x' }]);
    expect(result.ok).toBe(true);
  });
});

describe('tools', () => {
  it('refuses a call the tool does not permit, as a tool error', async () => {
    const tool = countingTool('write', {
      permit: (args) => (args.q === 'x' ? 'writing x is not allowed' : true),
    });
    const { result } = await agent('openai', tool as never, {});
    expect(tool.calls).toEqual([]);
    expect(result.ok && toolMessages(result.messages)).toEqual([
      'Error[permission_denied]: writing x is not allowed',
    ]);
  });

  it('runs a write at most once per idempotency key; a repeat gets the recorded result', async () => {
    const tool = countingTool('write');
    let turns = 0;
    const reply = () =>
      ++turns <= 2 ? { toolCalls: [{ name: 'lookup', arguments: { q: 'same' } }] } : { text: 'done' };
    const { result, events } = await agent('openai', tool as never, { reply });
    expect(tool.calls).toEqual([{ q: 'same' }]);
    expect(result.ok && toolMessages(result.messages)).toEqual(['{"found":"same"}', '{"found":"same"}']);
    expect(events.filter((e) => e.type === 'tool.replayed')).toHaveLength(1);
  });

  it('never runs a write again whose earlier attempt left only an intent (unknown outcome)', async () => {
    const ledger = new MemoryEffectLedger();
    const tool = countingTool('write', { idempotencyKey: () => 'k1' });
    await ledger.begin('k1');
    const { result } = await agent('openai', tool as never, {}, { effects: ledger });
    expect(tool.calls).toEqual([]);
    expect(!result.ok && result.failureClass).toBe('unknown_outcome');
  });

  it('lets a write that says it did not apply run again later', async () => {
    let failures = 1;
    const tool = countingTool('write', {
      run: () => {
        if (failures-- > 0) throw new ToolError('tool_failed', 'mail server said 503, nothing sent', false);
        return 'sent';
      },
    });
    let turns = 0;
    const reply = () =>
      ++turns <= 2 ? { toolCalls: [{ name: 'lookup', arguments: { q: 'a' } }] } : { text: 'done' };
    const { result } = await agent('openai', tool as never, { reply });
    expect(result.ok && toolMessages(result.messages)).toEqual([
      'Error[tool_failed]: mail server said 503, nothing sent',
      'sent',
    ]);
  });

  it('retries a read tool that timed out, once', async () => {
    let runs = 0;
    const tool = countingTool('read', {
      timeoutMs: 100,
      run: async () => {
        runs++;
        if (runs === 1) await new Promise((resolve) => setTimeout(resolve, 1000));
        return 'fresh';
      },
    });
    const { result } = await agent('openai', tool as never, {});
    expect(runs).toBe(2);
    expect(result.ok && toolMessages(result.messages)).toEqual(['fresh']);
  });

  it('does not retry a write that timed out: its outcome is unknown and the step stops', async () => {
    let runs = 0;
    const tool = countingTool('write', {
      timeoutMs: 100,
      run: async () => {
        runs++;
        await new Promise((resolve) => setTimeout(resolve, 1000));
      },
    });
    const { result } = await agent('openai', tool as never, {});
    expect(runs).toBe(1);
    expect(!result.ok && result.failureClass).toBe('unknown_outcome');
  });
});

describe('no progress and budgets', () => {
  it('the same failure 3 times in a row: one "change approach" message, then stop with no_progress', async () => {
    const tool = countingTool('read');
    const script = Array.from({ length: 8 }, () => ({ fault: 'invalid_args' }) as FaultSpec);
    const { result } = await agent('openai', tool as never, { script });
    expect(tool.calls).toEqual([]);
    expect(!result.ok && result.failureClass).toBe('no_progress');
    expect(result.turns).toBe(4);
    expect(result.messages.filter((m) => m.content === CHANGE_APPROACH_MESSAGE)).toHaveLength(1);
  });

  it('stops after maxTurns', async () => {
    const tool = countingTool('read');
    let n = 0;
    const reply = () => ({ toolCalls: [{ name: 'lookup', arguments: { q: `q${n++}` } }] });
    const { result } = await agent('openai', tool as never, { reply }, { maxTurns: 3 });
    expect(tool.calls).toHaveLength(3);
    expect(!result.ok && result).toMatchObject({ failureClass: 'budget', reason: 'max_turns', turns: 3 });
  });

  it('accumulates usage and cost and stops at the token budget', async () => {
    const tool = countingTool('read');
    let n = 0;
    const reply = () => ({ toolCalls: [{ name: 'lookup', arguments: { q: `q${n++}` } }] });
    const { result } = await agent(
      'openai',
      tool as never,
      { reply },
      { maxTokens: 60, model: 'gpt-4o', prices: { 'gpt-4o': { inputPerMTok: 1_000_000, outputPerMTok: 0 } } },
    );
    expect(!result.ok && result.failureClass).toBe('budget');
    expect(result.usage.inputTokens + result.usage.outputTokens).toBeGreaterThanOrEqual(60);
    expect(result.costUsd).toBe(result.usage.inputTokens);
  });
});
