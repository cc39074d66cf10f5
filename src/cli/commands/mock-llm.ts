import { BatonError } from '../../core/errors.js';
import { FAULT_NAMES, type FaultName, type FaultSpec } from '../../harness/mock-llm/faults.js';
import { OVERFLOW_FLAVOURS, type OverflowFlavour } from '../../harness/mock-llm/overflow-bodies.js';
import { startMockLlmServer } from '../../harness/mock-llm/server.js';
import { EXIT } from '../exit-codes.js';

interface MockLlmOptions {
  host?: string;
  port?: string;
  seed?: string;
  mix?: string;
  script?: string;
}

/**
 * `baton mock-llm`: a local model server speaking the OpenAI and Anthropic wire formats that
 * injects faults, for testing plans offline. Runs until interrupted.
 */
export async function mockLlmCommand(options: MockLlmOptions): Promise<number> {
  const port = integerOption(options.port ?? '0', '--port', 0, 65_535);
  const seed = integerOption(options.seed ?? '1', '--seed', 0, 2 ** 32 - 1);
  const server = await startMockLlmServer({
    host: options.host ?? '127.0.0.1',
    port,
    seed,
    ...(options.mix === undefined ? {} : { mix: parseMix(options.mix) }),
    ...(options.script === undefined ? {} : { script: parseScript(options.script) }),
  });
  process.stdout.write(
    `mock model server listening on ${server.url}\n` +
      `  OpenAI-compatible:    baseUrl ${server.openaiBaseUrl}  (provider: openai)\n` +
      `  Anthropic-compatible: baseUrl ${server.anthropicBaseUrl}  (provider: anthropic)\n` +
      'Stop with Ctrl-C.\n',
  );
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
