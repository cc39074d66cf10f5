import { BatonError } from '../../core/errors.js';
import {
  FLOW_KEY_PATTERN,
  type FlowLimit,
  formatFlowRate,
  parseFlowRate,
  validateFlowLimit,
} from '../../core/flow.js';
import { openStore, storeExists } from '../../runtime/open-store.js';
import { parsePositiveInt } from '../../runtime/parse-values.js';
import { EXIT } from '../exit-codes.js';
import { printJson } from '../format.js';
import type { GlobalOptions } from '../global-options.js';

/**
 * `baton flow set <key> --concurrency 2 --rate 10/1m`: a limit every worker on the store obeys from
 * its next claim on. Setting a key again replaces its limit whole.
 */
export async function flowSetCommand(
  key: string,
  options: GlobalOptions & { concurrency?: string; rate?: string },
): Promise<number> {
  const limit: FlowLimit = validateFlowLimit({
    key,
    concurrency:
      options.concurrency === undefined
        ? null
        : parsePositiveInt(options.concurrency, '--concurrency', 100_000),
    rate: options.rate === undefined ? null : parseFlowRate(options.rate, '--rate'),
  });
  const store = await openStore(options);
  try {
    await store.setFlowLimit(limit, Date.now());
  } finally {
    await store.close();
  }
  if (options.json) printJson(limit);
  else process.stdout.write(`flow ${key}: ${describeLimit(limit)}\n`);
  return EXIT.ok;
}

/** `baton flow rm <key>`: removes a key's limit (its steps run unlimited from the next claim). */
export async function flowRemoveCommand(key: string, options: GlobalOptions): Promise<number> {
  if (!FLOW_KEY_PATTERN.test(key)) validateFlowLimit({ key, concurrency: 1, rate: null });
  const noLimit = () =>
    new BatonError('INVALID_ARGUMENT', `flow ${key}: no limit is set (baton flow list shows the limits)`);
  // No store yet: no limit either (and no home is made to say so).
  if (!storeExists(options)) throw noLimit();
  const store = await openStore(options, 'read');
  try {
    if (!(await store.removeFlowLimit(key))) throw noLimit();
  } finally {
    await store.close();
  }
  if (options.json) printJson({ key, removed: true });
  else process.stdout.write(`flow ${key}: limit removed\n`);
  return EXIT.ok;
}

/** `baton flow list`: every limit, with what runs under it now and its starts in the current window. */
export async function flowListCommand(options: GlobalOptions): Promise<number> {
  const limits = storeExists(options) ? await listLimits(options) : [];
  if (options.json) {
    printJson(limits);
    return EXIT.ok;
  }
  if (limits.length === 0) {
    process.stdout.write(
      'no flow limits (set one with: baton flow set claude --concurrency 2 --rate 10/1m)\n',
    );
    return EXIT.ok;
  }
  const rows = limits.map((limit) => [
    limit.key,
    limit.concurrency === null ? '-' : `${limit.running}/${limit.concurrency}`,
    limit.rate === null ? '-' : `${limit.recentStarts} of ${formatFlowRate(limit.rate)}`,
  ]);
  const header = ['KEY', 'RUNNING', 'STARTED'];
  const widths = header.map((title, i) => Math.max(title.length, ...rows.map((row) => row[i]!.length)));
  for (const row of [header, ...rows]) {
    process.stdout.write(
      `${row
        .map((cell, i) => cell.padEnd(widths[i]!))
        .join('  ')
        .trimEnd()}\n`,
    );
  }
  return EXIT.ok;
}

function describeLimit(limit: FlowLimit): string {
  const parts: string[] = [];
  if (limit.concurrency !== null) parts.push(`at most ${limit.concurrency} at once`);
  if (limit.rate !== null) {
    const [count, window] = formatFlowRate(limit.rate).split('/');
    parts.push(`at most ${count} started in any ${window}`);
  }
  return parts.join(', ');
}

/** The limits of an existing store (a missing one has none and is not made to say so). */
async function listLimits(options: GlobalOptions) {
  const store = await openStore(options, 'read');
  try {
    return await store.listFlowLimits(Date.now());
  } finally {
    await store.close();
  }
}
