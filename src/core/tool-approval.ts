import type { StoredEvent } from './events.js';
import type { PlanStep, ToolApprovalRule } from './plan/types.js';

/**
 * Tool approvals inside a running agent (`agent.approve`), the pure half: which rule a tool call
 * falls under, what a person is shown of it, and which calls still wait (from the run's events).
 * The CLI's hook is served in mcp/tool-approval-server.ts; the worker relays in
 * executors/tool-approval-relay.ts.
 */

/**
 * Whether `text` matches the glob (`*` any text, `?` one character, nothing else special), in
 * O(text × glob) at worst: no backtracking regular expression a hostile pattern could blow up.
 */
export function globMatches(glob: string, text: string): boolean {
  let g = 0;
  let t = 0;
  let star = -1;
  let resume = 0;
  while (t < text.length) {
    if (g < glob.length && (glob[g] === '?' || glob[g] === text[t])) {
      g++;
      t++;
    } else if (g < glob.length && glob[g] === '*') {
      star = g++;
      resume = t;
    } else if (star !== -1) {
      g = star + 1;
      t = ++resume;
    } else return false;
  }
  while (g < glob.length && glob[g] === '*') g++;
  return g === glob.length;
}

/** The command a shell tool would run, from its input (claude's Bash: `command`). */
function commandOf(input: Record<string, unknown>): string | undefined {
  const command = input.command ?? input.cmd;
  return typeof command === 'string' ? command : undefined;
}

/** The path a file tool would write, relative to the workspace when inside it. */
function pathOf(input: Record<string, unknown>, workspace: string): string | undefined {
  const path = input.file_path ?? input.path ?? input.notebook_path;
  if (typeof path !== 'string') return undefined;
  const root = workspace.endsWith('/') ? workspace : `${workspace}/`;
  return path.startsWith(root) ? path.slice(root.length) : path.replace(/^\.\//, '');
}

/** Whether the step's agent (or its fallback's) may hold tool calls for a person. */
export function asksToolApprovals(step: Pick<PlanStep, 'agent' | 'fallback'> | undefined): boolean {
  return step?.agent?.approve !== undefined || step?.fallback?.agent?.approve !== undefined;
}

/** The first rule a call falls under, or undefined: the call runs as the CLI allows. */
export function approvalRuleFor(
  rules: readonly ToolApprovalRule[],
  tool: string,
  input: Record<string, unknown>,
  workspace: string,
): ToolApprovalRule | undefined {
  return rules.find((rule) => {
    if (rule.tool !== tool) return false;
    if (rule.match !== undefined) {
      const command = commandOf(input);
      if (command === undefined || !globMatches(rule.match, command.trim())) return false;
    }
    if (rule.path !== undefined) {
      const path = pathOf(input, workspace);
      if (path === undefined || !globMatches(rule.path, path)) return false;
    }
    return true;
  });
}

/** What a person is shown of a call: its command or path, else its input as JSON, cut. */
export function toolCallSummary(input: Record<string, unknown>, workspace: string): string {
  const text = commandOf(input) ?? pathOf(input, workspace) ?? JSON.stringify(input);
  return text.length > 200 ? `${text.slice(0, 199)}…` : text;
}

/** The commands that answer a held tool call, exactly as a person types them. */
export function toolCallCommands(runId: string, stepId: string, callId: string): [string, string] {
  return [
    `baton approve ${runId} ${stepId} --tool ${callId}`,
    `baton reject ${runId} ${stepId} --tool ${callId} --comment '...'`,
  ];
}

/**
 * One line on a held call, as `status` and `check` print it:
 * `push is waiting for tool approval: Bash "git push --force" (call …; denied unanswered at …)`.
 */
export function toolCallLine(
  call: Pick<PendingToolApproval, 'stepId' | 'tool' | 'summary' | 'callId'>,
  timeoutText: string,
): string {
  const chars = [...call.summary.split('\n', 1)[0]!];
  const shown = chars.length > 120 ? `${chars.slice(0, 119).join('')}…` : chars.join('');
  return `${call.stepId} is waiting for tool approval: ${call.tool} ${JSON.stringify(shown)} (call ${call.callId}; denied unanswered at ${timeoutText})`;
}

/** A tool call waiting for a person, as status, check and the console show it. */
export interface PendingToolApproval {
  stepId: string;
  attempt: number;
  callId: string;
  tool: string;
  /** sha256 of the call's input as JSON. */
  digest: string;
  summary: string;
  timeoutAt: number;
  requestedAt: number;
  /** The seq of its `step.tool_approval_requested` event: what its capability URLs are bound to. */
  requestSeq: number;
}

/**
 * The calls still waiting: requested and not decided, of the attempt of the step that runs now
 * (`running`: step id → its attempt). A request of an attempt that ended (its worker died, the
 * agent finished) waits for nobody.
 */
export function pendingToolApprovals(
  events: readonly StoredEvent[],
  running: ReadonlyMap<string, number>,
): PendingToolApproval[] {
  const pending = new Map<string, PendingToolApproval>();
  for (const event of events) {
    if (event.type === 'step.tool_approval_requested') {
      if (running.get(event.stepId) !== event.attempt) continue;
      pending.set(`${event.stepId}\u0000${event.callId}`, {
        stepId: event.stepId,
        attempt: event.attempt,
        callId: event.callId,
        tool: event.tool,
        digest: event.digest,
        summary: event.summary,
        timeoutAt: event.timeoutAt,
        requestedAt: event.at,
        requestSeq: event.seq,
      });
    } else if (event.type === 'step.tool_approval_decided') {
      pending.delete(`${event.stepId}\u0000${event.callId}`);
    }
  }
  return [...pending.values()];
}
