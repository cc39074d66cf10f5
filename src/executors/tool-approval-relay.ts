import { readdir, readFile, rename, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import type { BatonEvent, StoredEvent } from '../core/events.js';
import type { ClaimedStep } from '../store/store.js';
import {
  type ToolApprovalDecisionFile,
  type ToolApprovalRequestFile,
  toolApprovalFiles,
} from './tool-approval-files.js';

/** How often the worker looks for new requests, decisions and timeouts while the attempt runs. */
const RELAY_POLL_MS = 500;

export interface ToolApprovalRelayOptions {
  claim: Pick<ClaimedStep, 'runId' | 'stepId' | 'attempt'>;
  /** The attempt's files, absolute: `<home>/runs/<run>/<step>/attempt-<n>`. */
  base: string;
  timeoutMs: number;
  recordEvents(events: readonly BatonEvent[]): Promise<void>;
  readEvents(afterSeq: number): Promise<StoredEvent[]>;
  now?: () => number;
}

export interface ToolApprovalRelay {
  /** Calls waiting for a person now: while any waits, the agent's silence is no stall. */
  pending(): number;
  stop(): Promise<void>;
}

interface Waiting extends ToolApprovalRequestFile {
  timeoutAt: number;
}

/**
 * The worker's side of an attempt's tool approvals (mcp/tool-approval-server.ts is the CLI's): each
 * request file the CLI's permission tool leaves becomes a `step.tool_approval_requested` event, the
 * person's `baton approve|reject --tool` (a `step.tool_approval_decided` event in the store, from
 * any machine) becomes the decision file the tool is waiting for, and an unanswered call is denied
 * at its timeout. It lives as long as the attempt: when the worker dies, nobody answers, and the
 * attempt's processes are stopped when its lease is reclaimed (the attempt ends interrupted).
 */
export function startToolApprovalRelay(options: ToolApprovalRelayOptions): ToolApprovalRelay {
  const now = options.now ?? Date.now;
  const { claim } = options;
  const folder = dirname(options.base);
  const prefix = `${basename(options.base)}.tool-`;
  const known = new Set<string>();
  const waiting = new Map<string, Waiting>();
  let afterSeq = 0;
  let running: Promise<void> = Promise.resolve();
  let stopped = false;

  const decide = async (callId: string, decision: ToolApprovalDecisionFile) => {
    waiting.delete(callId);
    const file = toolApprovalFiles(options.base, callId).decision;
    await writeFile(`${file}.tmp`, JSON.stringify(decision), { mode: 0o600 });
    await rename(`${file}.tmp`, file);
  };

  const tick = async () => {
    for (const name of await readdir(folder).catch(() => [] as string[])) {
      if (!name.startsWith(prefix) || !name.endsWith('.request.json')) continue;
      const callId = name.slice(prefix.length, -'.request.json'.length);
      if (known.has(callId)) continue;
      known.add(callId);
      const request = await readRequest(join(folder, name));
      if (request === null) continue;
      const timeoutAt = request.requestedAt + options.timeoutMs;
      waiting.set(callId, { ...request, timeoutAt });
      await options.recordEvents([
        {
          type: 'step.tool_approval_requested',
          stepId: claim.stepId,
          attempt: claim.attempt,
          callId,
          tool: request.tool,
          digest: request.digest,
          summary: request.summary,
          timeoutAt,
        },
      ]);
    }
    if (waiting.size === 0) return;
    for (const event of await options.readEvents(afterSeq)) {
      afterSeq = Math.max(afterSeq, event.seq);
      if (
        event.type !== 'step.tool_approval_decided' ||
        event.stepId !== claim.stepId ||
        event.attempt !== claim.attempt ||
        !waiting.has(event.callId)
      )
        continue;
      const by = `${event.by}${event.comment ? `: ${event.comment}` : ''}`;
      await decide(event.callId, {
        decision: event.decision,
        message:
          event.decision === 'allow'
            ? `approved by ${by}`
            : `a person denied this tool call (${by}); do not try it again another way, go on without it`,
      });
    }
    for (const call of [...waiting.values()]) {
      if (now() < call.timeoutAt) continue;
      await options.recordEvents([
        {
          type: 'step.tool_approval_decided',
          stepId: claim.stepId,
          attempt: claim.attempt,
          callId: call.callId,
          tool: call.tool,
          digest: call.digest,
          decision: 'deny',
          by: 'timeout',
          comment: null,
        },
      ]);
      await decide(call.callId, {
        decision: 'deny',
        message: `nobody approved this tool call within ${Math.round(options.timeoutMs / 1000)} s (agent.approveTimeout): denied; go on without it`,
      });
    }
  };

  const timer = setInterval(() => {
    if (stopped) return;
    running = running.then(tick).catch(() => {
      // A store that cannot be reached now is tried again at the next tick.
    });
  }, RELAY_POLL_MS);
  // The attempt's own process keeps the worker alive while it runs; this never does by itself.
  timer.unref();
  return {
    pending: () => waiting.size,
    stop: async () => {
      stopped = true;
      clearInterval(timer);
      await running;
    },
  };
}

async function readRequest(file: string): Promise<ToolApprovalRequestFile | null> {
  try {
    const parsed = JSON.parse(await readFile(file, 'utf8')) as ToolApprovalRequestFile;
    return typeof parsed.callId === 'string' && typeof parsed.requestedAt === 'number' ? parsed : null;
  } catch {
    return null;
  }
}
