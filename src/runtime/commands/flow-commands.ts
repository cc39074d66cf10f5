import { BatonError } from '../../core/errors.js';
import { FLOW_KEY_PATTERN, type FlowLimit, parseFlowRate, validateFlowLimit } from '../../core/flow.js';
import type { FlowLimitStatus } from '../../store/store.js';
import { parsePositiveInt } from '../parse-values.js';
import type { CommandContext } from './context.js';

/** Flow limits, the same for every front door (`baton flow`, `Baton.setFlowLimit`). */

export interface FlowLimitRequest {
  key: string;
  /** Steps of the key running at once, across every worker. */
  concurrency?: number | string;
  /** Starts per window, e.g. `10/1m`. */
  rate?: string;
  /** How the front door names the options, for messages. */
  names?: { concurrency: string; rate: string };
}

/** The limit a request gives, checked (a door may check it before it opens a store). */
export function flowLimitOf(request: FlowLimitRequest): FlowLimit {
  const names = request.names ?? { concurrency: '--concurrency', rate: '--rate' };
  const concurrency =
    request.concurrency === undefined
      ? null
      : typeof request.concurrency === 'number'
        ? parsePositiveInt(String(request.concurrency), names.concurrency, 100_000)
        : parsePositiveInt(request.concurrency, names.concurrency, 100_000);
  return validateFlowLimit({
    key: request.key,
    concurrency,
    rate: request.rate === undefined ? null : parseFlowRate(request.rate, names.rate),
  });
}

/** `baton flow set <key>`: the key's limit, whole, from every worker's next claim on. */
export async function setFlowLimit(ctx: CommandContext, request: FlowLimitRequest): Promise<FlowLimit> {
  const limit = flowLimitOf(request);
  await ctx.store.setFlowLimit(limit, ctx.now());
  ctx.nudge();
  return limit;
}

/**
 * `baton flow rm <key>`: removes the key's limit; refused when none is set, unless `missingOk`
 * (the API's `setFlowLimit(key, null)`: no limit either way).
 */
export async function removeFlowLimit(
  ctx: CommandContext,
  request: { key: string; missingOk?: boolean },
): Promise<{ key: string; removed: boolean }> {
  const { key } = request;
  checkFlowKey(key);
  const removed = await ctx.store.removeFlowLimit(key);
  if (!removed && !request.missingOk) throw noFlowLimit(key);
  ctx.nudge();
  return { key, removed };
}

/** Refuses a key no limit can have (validateFlowLimit's message, naming the pattern). */
export function checkFlowKey(key: string): void {
  if (!FLOW_KEY_PATTERN.test(key)) validateFlowLimit({ key, concurrency: 1, rate: null });
}

export function noFlowLimit(key: string): BatonError {
  return new BatonError(
    'INVALID_ARGUMENT',
    `flow ${key}: no limit is set (baton flow list shows the limits)`,
  );
}

/** `baton flow list`: every limit, with what runs under it now and its starts in the current window. */
export function listFlowLimits(ctx: CommandContext): Promise<FlowLimitStatus[]> {
  return ctx.store.listFlowLimits(ctx.now());
}
