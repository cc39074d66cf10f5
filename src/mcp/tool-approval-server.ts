/**
 * The permission prompt tool of one agent attempt (`agent.approve`): an MCP server over stdio that
 * the agent CLI starts itself (claude: `--mcp-config` + `--permission-prompt-tool
 * mcp__baton__approve`) and asks before a tool runs that its own settings do not allow. A call a
 * rule names waits for a person: it is written as a request file beside the attempt's log, which the
 * worker running the attempt relays to the store (executors/tool-approval-relay.ts), and answered by
 * the decision file the worker writes back. A call no rule names is denied, as the CLI's print mode
 * denies what it would have asked about: the plan's settings decide, never this server.
 *
 * Run as `node tool-approval-server.js`, with BATON_TOOL_APPROVALS holding
 * `{ base, rules, workspace }` (`base`: the attempt's files, `<home>/runs/<run>/<step>/attempt-<n>`).
 */
import { createHash, randomUUID } from 'node:crypto';
import { readFile, rename, writeFile } from 'node:fs/promises';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { z } from 'zod';
import type { ToolApprovalRule } from '../core/plan/types.js';
import { approvalRuleFor, toolCallSummary } from '../core/tool-approval.js';
import {
  APPROVAL_TOOL,
  type ToolApprovalDecisionFile,
  type ToolApprovalRequestFile,
  toolApprovalFiles,
} from '../executors/tool-approval-files.js';

/** How often a waiting call looks for its decision: a stat a few times a second costs nothing. */
const DECISION_POLL_MS = 300;

interface ServerSettings {
  base: string;
  rules: ToolApprovalRule[];
  workspace: string;
}

/** A call id as the CLI gives it (`toolu_…`), if it is safe in a file name; else a fresh one. */
function safeCallId(id: string | undefined): string {
  return id !== undefined && /^[A-Za-z0-9_-]{1,100}$/.test(id) ? id : `call-${randomUUID()}`;
}

function answer(
  body: { behavior: 'allow'; updatedInput: Record<string, unknown> } | { behavior: 'deny'; message: string },
) {
  return { content: [{ type: 'text' as const, text: JSON.stringify(body) }] };
}

async function decisionOf(file: string): Promise<ToolApprovalDecisionFile | null> {
  try {
    const parsed = JSON.parse(await readFile(file, 'utf8')) as ToolApprovalDecisionFile;
    return parsed.decision === 'allow' || parsed.decision === 'deny' ? parsed : null;
  } catch {
    return null;
  }
}

async function serve(settings: ServerSettings): Promise<void> {
  const server = new McpServer({ name: 'baton', version: '1' });
  server.registerTool(
    APPROVAL_TOOL,
    {
      description: 'Asks Baton whether a tool call may run (agent.approve of the step).',
      inputSchema: {
        tool_name: z.string(),
        input: z.record(z.string(), z.unknown()),
        tool_use_id: z.string().optional(),
      },
    },
    async ({ tool_name: tool, input, tool_use_id }) => {
      if (approvalRuleFor(settings.rules, tool, input, settings.workspace) === undefined)
        return answer({
          behavior: 'deny',
          message: `${tool} is not allowed by this agent's permission settings, and no agent.approve rule of the step names this call`,
        });
      const callId = safeCallId(tool_use_id);
      const files = toolApprovalFiles(settings.base, callId);
      const request: ToolApprovalRequestFile = {
        callId,
        tool,
        digest: createHash('sha256').update(JSON.stringify(input)).digest('hex'),
        summary: toolCallSummary(input, settings.workspace),
        requestedAt: Date.now(),
      };
      // Written whole, then renamed: the worker never reads half a request.
      await writeFile(`${files.request}.tmp`, JSON.stringify(request), { mode: 0o600 });
      await rename(`${files.request}.tmp`, files.request);
      for (;;) {
        const decision = await decisionOf(files.decision);
        if (decision !== null)
          return decision.decision === 'allow'
            ? answer({ behavior: 'allow', updatedInput: input })
            : answer({ behavior: 'deny', message: decision.message });
        await new Promise((resolve) => setTimeout(resolve, DECISION_POLL_MS));
      }
    },
  );
  await server.connect(new StdioServerTransport());
}

const raw = process.env.BATON_TOOL_APPROVALS;
if (raw !== undefined) {
  const settings = JSON.parse(raw) as ServerSettings;
  await serve(settings);
}
