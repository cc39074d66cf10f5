import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import type { McpContext } from './mcp-context.js';
import { toolAnswer, toolError } from './tool-output.js';

/**
 * One tool of `baton mcp`: its input and output as zod shapes (the SDK publishes them as JSON
 * Schema and checks every call's arguments against the input), and its call: the arguments
 * translated to the runtime command of the same job (runtime/commands/), the answer rendered. A
 * throw becomes an error result (isError) with the BatonError's code and message; an answer is
 * masked and bounded (tool-output.ts).
 */
export interface BatonTool<I extends z.ZodRawShape = z.ZodRawShape> {
  name: string;
  /** What the model reads to choose the tool: short and exact. */
  description: string;
  input: I;
  output: z.ZodRawShape;
  /** Changes nothing: reads only. */
  readOnly?: boolean;
  /** May end work for good (cancel, reject, skip). */
  destructive?: boolean;
  call(args: z.infer<z.ZodObject<I>>, ctx: McpContext): Promise<Record<string, unknown>>;
}

export function defineTool<I extends z.ZodRawShape>(tool: BatonTool<I>): BatonTool {
  return tool as unknown as BatonTool;
}

export function registerTools(server: McpServer, tools: readonly BatonTool[], ctx: McpContext): void {
  for (const tool of tools) {
    const annotations: ToolAnnotations = {
      readOnlyHint: tool.readOnly === true,
      destructiveHint: tool.destructive === true,
      openWorldHint: false,
    };
    server.registerTool(
      tool.name,
      {
        description: tool.description,
        inputSchema: tool.input,
        // Loose: a host reads the declared fields; an answer may carry more (a run's usage, counts).
        outputSchema: z.looseObject(tool.output),
        annotations,
      },
      (async (args: Record<string, unknown>) => {
        try {
          return toolAnswer(await tool.call(args as never, ctx), ctx.secrets);
        } catch (error) {
          return toolError(error, ctx.secrets);
        }
      }) as never,
    );
  }
}

/** The fields many tools take and give. */
export const runIdField = z.string().min(1).max(64).describe('the run id (e.g. from list_runs or propose)');
export const stepIdField = z.string().min(1).max(300).describe('the step id, as run_status lists it');
/** A run's summary after a change: its status and what a host says next. */
export const runSummaryOutput = {
  runId: z.string(),
  status: z.string(),
  stepCounts: z.record(z.string(), z.number()),
};
