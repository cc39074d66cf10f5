import { BoundedStdioTransport } from './bounded-stdio.js';
import type { McpContext } from './mcp-context.js';
import { createBatonMcpServer } from './mcp-server.js';

/**
 * `baton mcp` over stdio, the form hosts start as a child process: serves one host over
 * stdin/stdout until stdin closes or `stopped` resolves. Each request line is bounded by the
 * request limit, and one over it is answered with an error (bounded-stdio.ts).
 */
export async function serveMcpOverStdio(ctx: McpContext, version: string, stopped: Promise<unknown>) {
  const { server, close } = createBatonMcpServer(ctx, version);
  const transport = new BoundedStdioTransport();
  const ended = new Promise<void>((resolve) => {
    transport.onclose = resolve;
    process.stdin.once('end', resolve);
    process.stdin.once('close', resolve);
  });
  await server.connect(transport);
  await Promise.race([ended, stopped]);
  await close();
}
