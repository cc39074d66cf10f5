import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { McpContext } from './mcp-context.js';
import { registerRunResources } from './run-resources.js';
import { registerTools } from './tool-kit.js';
import { ALLOW_RUN_TOOLS, MCP_TOOLS } from './tool-registry.js';

/** What the server tells a host at `initialize`: how to use it safely, in a few lines. */
const INSTRUCTIONS = `Baton runs durable multi-step plans of agent work. Decide with classify; check a plan with validate_plan; store it with propose, show the person the summary and ask its question; only after their yes call approve_run (their answer to "wait between steps?" is delay), else reject_run. Work runs when check (or a worker) drives it; follow it with run_status or by subscribing to baton://runs/<id>. A blocked step needs the person: relay their answer with retry_step, skip_step or resolve_step; a waiting one with approve_step, reject_step or send_event. A schedule added with schedule_add (or given a new plan) is stored paused: show the person its summary and call schedule_resume only after their yes.`;

/**
 * One MCP server over one store (`baton mcp`): the tools (the `run` tool only when the operator
 * allowed it) and the runs as subscribable resources. A transport is connected by the caller.
 */
export function createBatonMcpServer(
  ctx: McpContext,
  version: string,
): { server: McpServer; close(): Promise<void> } {
  const server = new McpServer(
    { name: 'baton', version },
    {
      capabilities: { tools: {}, resources: { subscribe: true } },
      instructions: INSTRUCTIONS,
    },
  );
  registerTools(server, MCP_TOOLS, ctx);
  if (ctx.options.allowRun) registerTools(server, ALLOW_RUN_TOOLS, ctx);
  const resources = registerRunResources(server, ctx, ctx.options.pollMs ?? 500);
  return {
    server,
    close: async () => {
      resources.close();
      await server.close();
    },
  };
}
