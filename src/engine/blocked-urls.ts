import type { StoredEvent } from '../core/events.js';
import { type CapabilityFields, capabilitySeq, capabilityToken } from './capability-token.js';

/**
 * Capability URLs of a blocked step: `POST <public url>/blocked/<run>/<step>/<token>/<action>`
 * retries or skips it without a console session, as `baton retry|skip` do. Made like a wait's
 * (wait-urls.ts): the token carries the seq of the event that blocked the step and
 * HMAC-SHA256(the home's key, run, step, that seq, action) (capability-token.ts), derived by every
 * hook sender and by `baton serve`, never stored. A URL is valid while that block lasts (blocked
 * again later, the step has another seq) and works once, because using it unblocks the step.
 */

export const BLOCKED_ACTIONS = ['retry', 'skip'] as const;
export type BlockedAction = (typeof BLOCKED_ACTIONS)[number];

/** One block of one step: what its tokens are bound to. */
export interface BlockIdentity {
  runId: string;
  stepId: string;
  /** The seq of the event that blocked the step (blockSeqOf). */
  blockSeq: number;
}

/**
 * The seq of the event that blocked `stepId` last: its `step.blocked`, or the `step.wait_timed_out`
 * of a wait whose timeout blocks; null when no event blocked it.
 */
export function blockSeqOf(events: readonly StoredEvent[], stepId: string): number | null {
  const found = events.findLast(
    (e) =>
      (e.type === 'step.blocked' && e.stepId === stepId) ||
      (e.type === 'step.wait_timed_out' && e.stepId === stepId && e.action === 'block'),
  );
  return found?.seq ?? null;
}

function blockedFields(runId: string, stepId: string, action: BlockedAction): CapabilityFields {
  return { kind: 'baton-blocked', runId, stepId, action };
}

/**
 * The seq of the block `offered` was made for, when it is the token of `action` on a block of that
 * run's step; else null. Checked from the URL alone, in constant time, before anything is read.
 */
export function blockSeqOfToken(
  key: Buffer,
  step: { runId: string; stepId: string },
  action: BlockedAction,
  offered: string,
): number | null {
  return capabilitySeq(key, blockedFields(step.runId, step.stepId, action), offered);
}

/** The URLs of a blocked step under `publicUrl`, by action. */
export function blockedUrls(
  publicUrl: string,
  key: Buffer,
  block: BlockIdentity,
): Record<BlockedAction, string> {
  const base = `${publicUrl.replace(/\/+$/, '')}/blocked/${encodeURIComponent(block.runId)}/${encodeURIComponent(block.stepId)}`;
  const url = (action: BlockedAction) =>
    `${base}/${capabilityToken(key, blockedFields(block.runId, block.stepId, action), block.blockSeq)}/${action}`;
  return { retry: url('retry'), skip: url('skip') };
}

/** The commands that do the same, where no public address is known. */
export function blockedCommands(runId: string, stepId: string): string[] {
  return [`baton retry ${runId} ${stepId}`, `baton skip ${runId} ${stepId}`];
}
