import { type CapabilityFields, capabilitySeq, capabilityToken } from './capability-token.js';

/**
 * Capability URLs of a tool call a running agent waits on a person for (`agent.approve`):
 * `POST <public url>/tool/<run>/<step>/<token>/<approve|reject>` answers it without a console
 * session, as `baton approve|reject <run> <step> --tool <call>` do. Made like a wait's
 * (wait-urls.ts): the token carries the seq of the call's `step.tool_approval_requested` event and
 * HMAC-SHA256(the home's key, run, step, that seq, action) (capability-token.ts), derived by every
 * hook sender and by `baton serve`, never stored. A URL names one call, and works once: answering
 * it ends the call's wait.
 */

export const TOOL_ACTIONS = ['approve', 'reject'] as const;
export type ToolAction = (typeof TOOL_ACTIONS)[number];

/** One held tool call: what its tokens are bound to. */
export interface ToolCallIdentity {
  runId: string;
  stepId: string;
  /** The seq of the call's `step.tool_approval_requested` event. */
  requestSeq: number;
}

function toolFields(runId: string, stepId: string, action: ToolAction): CapabilityFields {
  return { kind: 'baton-tool', runId, stepId, action };
}

/**
 * The seq of the call `offered` was made for, when it is the token of `action` on a call of that
 * run's step; else null. Checked from the URL alone, in constant time, before anything is read.
 */
export function toolSeqOfToken(
  key: Buffer,
  step: { runId: string; stepId: string },
  action: ToolAction,
  offered: string,
): number | null {
  return capabilitySeq(key, toolFields(step.runId, step.stepId, action), offered);
}

/** The URLs of a held tool call under `publicUrl`, by action. */
export function toolCallUrls(
  publicUrl: string,
  key: Buffer,
  call: ToolCallIdentity,
): Record<ToolAction, string> {
  const base = `${publicUrl.replace(/\/+$/, '')}/tool/${encodeURIComponent(call.runId)}/${encodeURIComponent(call.stepId)}`;
  const url = (action: ToolAction) =>
    `${base}/${capabilityToken(key, toolFields(call.runId, call.stepId, action), call.requestSeq)}/${action}`;
  return { approve: url('approve'), reject: url('reject') };
}
