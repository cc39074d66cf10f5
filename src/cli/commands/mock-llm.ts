import { readFile } from 'node:fs/promises';
import { BatonError } from '../../core/errors.js';
import { parseJsonWithLimits } from '../../core/json-text.js';
import { agentCliSetupText } from '../../testing/mock-llm/agent-cli-setup.js';
import {
  describeFaultField,
  FAULT_FIELDS,
  FAULT_NAMES,
  type FaultName,
  type FaultSpec,
  fitsFaultField,
} from '../../testing/mock-llm/faults.js';
import type { FaultMix } from '../../testing/mock-llm/random.js';
import { type ScriptEntry, validateScriptEntry } from '../../testing/mock-llm/script-entry.js';
import { startMockLlmServer } from '../../testing/mock-llm/server.js';
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
  const host = options.host ?? '127.0.0.1';
  const mix = options.mix === undefined ? undefined : parseMix(options.mix);
  const server = await startMockLlmServer({
    host,
    port,
    seed,
    ...(mix === undefined ? {} : { mix }),
    ...(script === undefined ? {} : { script }),
  }).catch((error: unknown) => {
    throw listenError(error, host, port);
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

/** A socket error of listen() (port taken, no such address) as bad input; anything else as is. */
function listenError(error: unknown, host: string, port: number): unknown {
  const code = (error as { code?: unknown }).code;
  const reasons: Record<string, string> = {
    EADDRINUSE: `port ${port} is already in use; pick another --port, or 0 for a free one`,
    EACCES: `port ${port} needs privileges; pick a --port above 1023, or 0 for a free one`,
    EADDRNOTAVAIL: `${host} is not an address of this machine; use --host 127.0.0.1`,
    ENOTFOUND: `${host} does not resolve; use --host 127.0.0.1 or an IP address`,
    EAI_AGAIN: `${host} does not resolve; use --host 127.0.0.1 or an IP address`,
  };
  const reason = typeof code === 'string' ? reasons[code] : undefined;
  return reason === undefined
    ? error
    : new BatonError('INVALID_ARGUMENT', `--host ${host} --port ${port}: ${reason}`);
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

/** A plain decimal (`0.05`, `2`, `.5`): no sign, exponent, hex or `Infinity`. */
const DECIMAL = /^(\d+(\.\d*)?|\.\d+)$/;

/** `rate_limit=0.1,server_error=0.05`: probabilities of each fault per request, adding up to 1 at most. */
function parseMix(text: string): FaultMix {
  const mix: FaultMix = {};
  const expected = `expected <fault>=<probability from 0 to 1>,... with faults among ${FAULT_NAMES.join(', ')}`;
  for (const part of text.split(',').filter((p) => p.trim() !== '')) {
    const [name = '', value, ...rest] = part.split('=').map((s) => s.trim());
    if (!isFaultName(name)) {
      throw new BatonError('INVALID_ARGUMENT', `--mix ${part}: unknown fault "${name}"; ${expected}`);
    }
    if (value === undefined || rest.length > 0 || !DECIMAL.test(value) || Number(value) > 1) {
      throw new BatonError('INVALID_ARGUMENT', `--mix ${part}: ${expected}`);
    }
    if (mix[name] !== undefined) {
      throw new BatonError('INVALID_ARGUMENT', `--mix ${part}: ${name} is given twice; give each fault once`);
    }
    mix[name] = Number(value);
  }
  const sum = Object.values(mix).reduce((a, b) => a + b, 0);
  if (sum > 1 + 1e-9) {
    throw new BatonError(
      'INVALID_ARGUMENT',
      `--mix ${text}: the probabilities add up to ${Number(sum.toFixed(6))}; they may add up to 1 at most ` +
        '(what is left is ok)',
    );
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

/** The `--script` short forms: `ok`, `server_error:<one of …>`, `rate_limit:<seconds>`, … */
function shortForms(): string {
  return FAULT_NAMES.map((name) => {
    const field = FAULT_FIELDS[name]?.[0];
    if (field === undefined) return name;
    return `${name}:<${'oneOf' in field ? field.oneOf.join('|') : field.unit}>`;
  }).join(', ');
}

/** `rate_limit,overflow:anthropic,ok`: the faults of the first requests, in order. */
function parseScript(text: string): FaultSpec[] {
  return text
    .split(',')
    .filter((p) => p.trim() !== '')
    .map((raw) => {
      const part = raw.trim();
      const colon = part.indexOf(':');
      const name = colon < 0 ? part : part.slice(0, colon);
      const detail = colon < 0 ? undefined : part.slice(colon + 1);
      if (!isFaultName(name)) {
        throw new BatonError(
          'INVALID_ARGUMENT',
          `--script ${part}: unknown fault "${name}" (faults: ${shortForms()})`,
        );
      }
      const field = FAULT_FIELDS[name]?.[0];
      if (detail === undefined) {
        return (name === 'overflow' ? { fault: name, flavour: 'openai' } : { fault: name }) as FaultSpec;
      }
      if (field === undefined) {
        throw new BatonError(
          'INVALID_ARGUMENT',
          `--script ${part}: ${name} takes no ":<value>"; give it as ${name}`,
        );
      }
      const value = 'oneOf' in field && typeof field.oneOf[0] === 'string' ? detail : Number(detail);
      if (!(typeof value === 'string' || DECIMAL.test(detail)) || !fitsFaultField(field, value)) {
        throw new BatonError(
          'INVALID_ARGUMENT',
          `--script ${part}: expected ${name}:<${field.name}> with ${field.name} ${describeFaultField(field)}`,
        );
      }
      return { fault: name, [field.name]: value } as FaultSpec;
    });
}

function isFaultName(name: string | undefined): name is FaultName {
  return (FAULT_NAMES as readonly string[]).includes(name ?? '');
}
