import { type FlowLimit, formatFlowRate } from '../../core/flow.js';
import {
  checkFlowKey,
  flowLimitOf,
  listFlowLimits,
  noFlowLimit,
  removeFlowLimit,
  setFlowLimit,
} from '../../runtime/commands/flow-commands.js';
import { storeExists, withCommandContext } from '../../runtime/open-store.js';
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
  const request = {
    key,
    ...(options.concurrency === undefined ? {} : { concurrency: options.concurrency }),
    ...(options.rate === undefined ? {} : { rate: options.rate }),
  };
  // Checked before a store is opened (or a home made).
  flowLimitOf(request);
  const limit = await withCommandContext(options, (ctx) => setFlowLimit(ctx, request), 'write');
  if (options.json) printJson(limit);
  else process.stdout.write(`flow ${key}: ${describeLimit(limit)}\n`);
  return EXIT.ok;
}

/** `baton flow rm <key>`: removes a key's limit (its steps run unlimited from the next claim). */
export async function flowRemoveCommand(key: string, options: GlobalOptions): Promise<number> {
  checkFlowKey(key);
  // No store yet: no limit either (and no home is made to say so).
  if (!storeExists(options)) throw noFlowLimit(key);
  const removed = await withCommandContext(options, (ctx) => removeFlowLimit(ctx, { key }));
  if (options.json) printJson(removed);
  else process.stdout.write(`flow ${key}: limit removed\n`);
  return EXIT.ok;
}

/** `baton flow list`: every limit, with what runs under it now and its starts in the current window. */
export async function flowListCommand(options: GlobalOptions): Promise<number> {
  // The limits of an existing store (a missing one has none and is not made to say so).
  const limits = storeExists(options) ? await withCommandContext(options, listFlowLimits) : [];
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
