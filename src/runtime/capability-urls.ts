import { BLOCKED_ACTIONS, type BlockedAction, blockSeqOf, blockSeqOfToken } from '../engine/blocked-urls.js';
import { TOOL_ACTIONS, type ToolAction, toolCallUrls, toolSeqOfToken } from '../engine/tool-urls.js';
import { WAIT_ACTIONS, type WaitAction, waitSeqOfToken, waitUrlKey, waitUrls } from '../engine/wait-urls.js';
import type { CommandContext } from './commands/context.js';
import { currentWait, waitingToolCalls } from './run-reads.js';

/**
 * The capability URLs of waiting and blocked steps and of tool calls held for a person
 * (engine/wait-urls.ts, engine/blocked-urls.ts, engine/tool-urls.ts),
 * for the door that answers them (`baton serve`) and the ones that show them: what a URL names,
 * whether its token is the one of the wait or block its step is in now, and the URLs of waiting
 * steps. The token is checked from the URL alone before anything is read (a wrong one costs the
 * same whatever it names); the step is then read as stored, and nothing but a kind, a seq or a URL
 * made of ids leaves this module, so no stored text reaches a door unmasked.
 */

export { publicUrlOf } from '../engine/wait-urls.js';
export { BLOCKED_ACTIONS, type BlockedAction, TOOL_ACTIONS, type ToolAction, WAIT_ACTIONS, type WaitAction };

/** What a capability URL `/<kind>/<run>/<step>/<token>/<action>` names. */
export interface CapabilityTarget<A extends string> {
  runId: string;
  stepId: string;
  token: string;
  action: A;
}

/**
 * The key of the home's capability URLs (0600, made on first use): read at each call, never kept,
 * so replacing or deleting the file revokes every URL it made at once.
 */
export function capabilityKey(home: string): Buffer {
  return waitUrlKey(home);
}

/** What a path that names no step is checked as: the same work as any other. */
const NO_STEP = { runId: '', stepId: '' };

/**
 * The kind of the wait a waiting step's URL names, when its token is the one of the wait the step
 * is in now and the action fits that kind (approve or reject an approval, event an event); else
 * null (a wrong token, an unknown run or step, a wait that ended: the URL was used).
 */
export async function waitOfCapability(
  ctx: CommandContext,
  key: Buffer,
  target: CapabilityTarget<WaitAction> | null,
): Promise<{ kind: 'approval' | 'event' } | null> {
  const seq = waitSeqOfToken(key, target ?? NO_STEP, target?.action ?? 'approve', target?.token ?? '');
  if (target === null || seq === null) return null;
  const run = await ctx.unmasked.getRun(target.runId);
  const wait = run ? await currentWait(ctx.unmasked, run, target.stepId) : null;
  if (!wait || wait.waitSeq !== seq) return null;
  const fits = wait.kind === 'event' ? target.action === 'event' : target.action !== 'event';
  return fits ? { kind: wait.kind } : null;
}

/**
 * Whether a blocked step's URL names a step blocked now by the block its token was made for (a
 * wrong token, an unknown run or step, a step no longer blocked: false).
 */
export async function blockOfCapability(
  ctx: CommandContext,
  key: Buffer,
  target: CapabilityTarget<BlockedAction> | null,
): Promise<boolean> {
  const seq = blockSeqOfToken(key, target ?? NO_STEP, target?.action ?? 'retry', target?.token ?? '');
  if (target === null || seq === null) return false;
  const run = await ctx.unmasked.getRunSteps(target.runId, { statuses: ['blocked'], everyStepUpTo: 0 });
  if (!run?.steps.some((step) => step.stepId === target.stepId && step.status === 'blocked')) return false;
  return blockSeqOf(await ctx.unmasked.getEvents(target.runId), target.stepId) === seq;
}

/** A waiting step's wait and its URLs, one per answer, under a public address. */
export interface WaitCapability {
  kind: 'approval' | 'event';
  urls: Partial<Record<WaitAction, string>>;
}

/**
 * The URLs of waiting steps' current waits under `publicUrl` (so a used one is never shown), in
 * the order given; null for a step that no longer waits. The key is read once for them all, and
 * only when a step waits (a console over a home it may not write shows its other pages).
 */
export async function waitCapabilities(
  ctx: CommandContext,
  publicUrl: string,
  steps: readonly { runId: string; stepId: string }[],
): Promise<(WaitCapability | null)[]> {
  let key: Buffer | undefined;
  const runs = new Map<string, ReturnType<CommandContext['unmasked']['getRun']>>();
  return Promise.all(
    steps.map(async ({ runId, stepId }) => {
      if (!runs.has(runId)) runs.set(runId, ctx.unmasked.getRun(runId));
      const run = await runs.get(runId)!;
      const wait = run ? await currentWait(ctx.unmasked, run, stepId) : null;
      if (!wait) return null;
      key ??= capabilityKey(ctx.home);
      const identity = { runId, stepId, waitSeq: wait.waitSeq };
      return { kind: wait.kind, urls: waitUrls(publicUrl, key, identity, wait.kind) };
    }),
  );
}

/**
 * The id of the tool call a held call's URL names, when its token is the one of a call of that step
 * that still waits (its attempt runs, nobody answered); else null (a wrong token, an unknown run or
 * step, a call answered or ended: the URL was used).
 */
export async function toolCallOfCapability(
  ctx: CommandContext,
  key: Buffer,
  target: CapabilityTarget<ToolAction> | null,
): Promise<string | null> {
  const seq = toolSeqOfToken(key, target ?? NO_STEP, target?.action ?? 'approve', target?.token ?? '');
  if (target === null || seq === null) return null;
  const run = await ctx.unmasked.getRunSteps(target.runId, { statuses: ['running'], everyStepUpTo: 0 });
  if (!run) return null;
  const call = (await waitingToolCalls(ctx.unmasked, run)).find(
    (c) => c.stepId === target.stepId && c.requestSeq === seq,
  );
  return call?.callId ?? null;
}

/** The URLs of held tool calls under `publicUrl`, in the order given (the key read once, when any). */
export function toolCallCapabilities(
  ctx: CommandContext,
  publicUrl: string,
  calls: readonly { runId: string; stepId: string; requestSeq: number }[],
): Record<ToolAction, string>[] {
  if (calls.length === 0) return [];
  const key = capabilityKey(ctx.home);
  return calls.map((call) => toolCallUrls(publicUrl, key, call));
}
