/**
 * The files by which an agent's permission prompt tool (mcp/tool-approval-server.ts, a child of the
 * CLI) and the worker running the attempt (tool-approval-relay.ts) talk: beside the attempt's log,
 * in the Baton home.
 */

/** The tool's name in the server; the CLI calls it as `mcp__baton__approve`. */
export const APPROVAL_TOOL = 'approve';

/** A request the worker relays: what `<base>.tool-<callId>.request.json` holds. */
export interface ToolApprovalRequestFile {
  callId: string;
  tool: string;
  digest: string;
  summary: string;
  requestedAt: number;
}

/** What `<base>.tool-<callId>.decision.json` holds. */
export interface ToolApprovalDecisionFile {
  decision: 'allow' | 'deny';
  message: string;
}

/** The request and decision files of a call (its id made safe for a file name). */
export function toolApprovalFiles(base: string, callId: string): { request: string; decision: string } {
  return { request: `${base}.tool-${callId}.request.json`, decision: `${base}.tool-${callId}.decision.json` };
}
