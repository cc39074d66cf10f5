import { readFile } from 'node:fs/promises';
import { BatonError } from '../../core/errors.js';
import { parseJsonWithLimits } from '../../core/json-text.js';
import { agentCliSetupText } from '../../harness/mock-llm/agent-cli-setup.js';
import { FAULT_NAMES, type FaultName, type FaultSpec } from '../../harness/mock-llm/faults.js';
import { OVERFLOW_FLAVOURS, type OverflowFlavour } from '../../harness/mock-llm/overflow-bodies.js';
import { type ScriptEntry, validateScriptEntry } from '../../harness/mock-llm/script-entry.js';
import { startMockLlmServer } from '../../harness/mock-llm/server.js';
import { EXIT } from '../exit-codes.js';

interface MockLlmOptions {
  host?: string;
  port?: string;
  seed?: string;
  mix?: string;
  script?: string;
  scriptFile?: string;
}

/**
 * `baton mock-llm`: a local model server speaking the OpenAI (Chat Completions and Responses),
 * Anthropic and Gemini wire formats that injects faults, for testing plans and agent CLIs offline.
 * Runs until interrupted.
 */
export async function mockLlmCommand(options: MockLlmOptions): Promise<number> {
  const port = integerOption(options.port ?? '0', '--port', 0, 65_535);
  const seed = integerOption(options.seed ?? '1', '--seed', 0, 2 ** 32 - 1);
  if (options.script !== undefined && options.scriptFile !== undefined) {
    throw new BatonError('INVALID_ARGUMENT', '--script and --script-file: give one of them, not both');
  }
  const script =
    options.scriptFile !== undefined
      ? await readScriptFile(options.scriptFile)
      : options.script === undefined
        ? undefined
        : parseScript(options.script);
  const server = await startMockLlmServer({
    host: options.host ?? '127.0.0.1',
    port,
    seed,
    ...(options.mix === undefined ? {} : { mix: parseMix(options.mix) }),
    ...(script === undefined ? {} : { script }),
  });
  process.stdout.write(`${agentCliSetupText(server)}Stop with Ctrl-C.\n`);
  await new Promise<void>((resolve) => {
    const stop = () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
  await server.close();
  process.stdout.write(`served ${server.requests.length} request(s)\n`);
  return EXIT.ok;
}

function integerOption(value: string, flag: string, min: number, max: number): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < min || n > max) {
    throw new BatonError(
      'INVALID_ARGUMENT',
      `${flag} ${value}: expected a whole number from ${min} to ${max}`,
    );
  }
  return n;
}

/** `rate_limit=0.1,server_error=0.05`: probabilities of each fault per request. */
function parseMix(text: string): Partial<Record<FaultName, number>> {
  const mix: Partial<Record<FaultName, number>> = {};
  for (const part of text.split(',').filter((p) => p.trim() !== '')) {
    const [name, value] = part.split('=').map((s) => s.trim());
    const probability = Number(value);
    if (!isFaultName(name) || value === undefined || !(probability >= 0 && probability <= 1)) {
      throw new BatonError(
        'INVALID_ARGUMENT',
        `--mix ${part}: expected <fault>=<probability 0..1>, faults: ${FAULT_NAMES.join(', ')}`,
      );
    }
    mix[name] = probability;
  }
  return mix;
}

/**
 * `--script-file FILE`: a JSON array of script entries, e.g.
 * `[{ "fault": "ok", "when": { "hasTools": true }, "reply": { "text": "done" } }]`.
 */
async function readScriptFile(file: string): Promise<ScriptEntry[]> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new BatonError('INVALID_ARGUMENT', `--script-file ${file}: cannot read it (${reason})`);
  }
  let entries: unknown;
  try {
    const parsed = parseJsonWithLimits(text);
    if (!('value' in parsed)) {
      throw new BatonError('INVALID_ARGUMENT', `${file}:${parsed.line}:${parsed.column}: ${parsed.problem}`);
    }
    entries = parsed.value;
  } catch (error) {
    if (error instanceof BatonError) throw error;
    const reason = error instanceof Error ? error.message : String(error);
    throw new BatonError('INVALID_ARGUMENT', `${file}: not valid JSON (${reason})`);
  }
  if (!Array.isArray(entries)) {
    throw new BatonError(
      'INVALID_ARGUMENT',
      `${file}: expected a JSON array of script entries like [{"fault":"ok","reply":{"text":"done"}}], ` +
        `got ${entries === null ? 'null' : typeof entries}`,
    );
  }
  entries.forEach((entry, i) => {
    try {
      validateScriptEntry(entry, `${file}: script[${i}]`);
    } catch (error) {
      throw new BatonError('INVALID_ARGUMENT', error instanceof Error ? error.message : String(error));
    }
  });
  return entries as ScriptEntry[];
}

/** `rate_limit,overflow:anthropic,ok`: the faults of the first requests, in order. */
function parseScript(text: string): FaultSpec[] {
  return text
    .split(',')
    .filter((p) => p.trim() !== '')
    .map((part) => {
      const [name, detail] = part.trim().split(':');
      if (!isFaultName(name)) {
        throw new BatonError(
          'INVALID_ARGUMENT',
          `--script ${part}: unknown fault (faults: ${FAULT_NAMES.join(', ')})`,
        );
      }
      if (name === 'overflow') {
        const flavour = (detail ?? 'openai') as OverflowFlavour;
        if (!OVERFLOW_FLAVOURS.includes(flavour)) {
          throw new BatonError(
            'INVALID_ARGUMENT',
            `--script ${part}: unknown overflow flavour (flavours: ${OVERFLOW_FLAVOURS.join(', ')})`,
          );
        }
        return { fault: 'overflow', flavour };
      }
      if (detail !== undefined && (name === 'server_error' || name === 'fatal')) {
        return { fault: name, status: Number(detail) } as FaultSpec;
      }
      if (detail !== undefined && name === 'rate_limit')
        return { fault: 'rate_limit', retryAfterS: Number(detail) };
      return { fault: name } as FaultSpec;
    });
}

function isFaultName(name: string | undefined): name is FaultName {
  return (FAULT_NAMES as readonly string[]).includes(name ?? '');
}
