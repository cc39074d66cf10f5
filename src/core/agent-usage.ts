import type { StepUsage } from './failure.js';

/**
 * Tokens and cost an agent CLI reported on stdout (see AGENT-CLIS.md, "Usage fields"): claude's
 * final JSON record (`usage`, `total_cost_usd`), codex `turn.completed` events, opencode
 * `step_finish` parts, gemini `stats.models`, aider's `Tokens: ... Cost: ...` line. Records are
 * summed; undefined when the output reports nothing. Cost is only what the CLI itself reported.
 */
export function parseAgentUsage(stdout: string): StepUsage | undefined {
  let found = false;
  const usage = { inputTokens: 0, outputTokens: 0, costUsd: 0 };
  const add = (input: unknown, output: unknown, cost?: unknown) => {
    const i = toNumber(input);
    const o = toNumber(output);
    const c = toNumber(cost);
    if (i === 0 && o === 0 && c === 0) return;
    found = true;
    usage.inputTokens += i;
    usage.outputTokens += o;
    usage.costUsd += c;
  };
  for (const line of stdout.split('\n')) {
    const trimmed = line.trim();
    if (trimmed.startsWith('{') && trimmed.endsWith('}')) {
      const record = parseRecord(trimmed);
      if (record) addRecord(record, add);
      continue;
    }
    // aider: "Tokens: 2.1k sent, 150 received. Cost: $0.0072 message, $0.0072 session."
    const aider = /^Tokens: ([\d.]+)(k?) sent, ([\d.]+)(k?) received\. Cost: \$([\d.]+) message/.exec(
      trimmed,
    );
    if (aider) add(scaled(aider[1], aider[2]), scaled(aider[3], aider[4]), aider[5]);
  }
  return found ? usage : undefined;
}

type Add = (input: unknown, output: unknown, cost?: unknown) => void;

function addRecord(record: Record<string, unknown>, add: Add): void {
  // claude -p --output-format json: the final record.
  if (record.type === 'result' || 'total_cost_usd' in record) {
    const u = asRecord(record.usage);
    add(u?.input_tokens, u?.output_tokens, record.total_cost_usd);
    return;
  }
  // codex exec --json: one turn.completed per turn.
  if (record.type === 'turn.completed') {
    const u = asRecord(record.usage);
    add(u?.input_tokens, u?.output_tokens);
    return;
  }
  // opencode run --format json: one step_finish per step.
  if (record.type === 'step_finish') {
    const part = asRecord(record.part);
    const tokens = asRecord(part?.tokens);
    add(tokens?.input, tokens?.output, part?.cost);
    return;
  }
  // gemini -o json: per-model token stats.
  const models = asRecord(asRecord(record.stats)?.models);
  if (models) {
    for (const model of Object.values(models)) {
      const tokens = asRecord(asRecord(model)?.tokens);
      add(tokens?.prompt, tokens?.candidates);
    }
  }
}

function parseRecord(text: string): Record<string, unknown> | undefined {
  try {
    return asRecord(JSON.parse(text));
  } catch {
    return undefined;
  }
}

function asRecord(value: unknown): Record<string, unknown> | undefined {
  return value && typeof value === 'object' && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

function toNumber(value: unknown): number {
  const n = typeof value === 'string' ? Number(value) : value;
  return typeof n === 'number' && Number.isFinite(n) && n > 0 ? n : 0;
}

function scaled(value: string | undefined, k: string | undefined): number {
  return Math.round(Number(value ?? 0) * (k === 'k' ? 1000 : 1));
}
