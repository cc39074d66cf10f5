import { randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { redactSecrets } from '../core/redact.js';
import type { McpContext } from './mcp-context.js';
import { createBatonMcpServer } from './mcp-server.js';
import { MAX_MCP_REQUEST_BYTES } from './request-limit.js';

/**
 * `baton mcp --http`: streamable HTTP on 127.0.0.1 with a bearer token, one MCP session per client,
 * for hosts that reach servers by URL (loaded only with --http: the HTTP transport and its server).
 */

/** A token for the HTTP endpoint when the operator gave none: 256 random bits. */
export function newBearerToken(): string {
  return randomBytes(32).toString('base64url');
}

function sameToken(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

function refuse(res: ServerResponse, status: number, message: string, headers: Record<string, string> = {}) {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message }, id: null }));
}

/**
 * Streamable HTTP at `http://127.0.0.1:<port>/mcp`: every request needs `Authorization: Bearer
 * <token>` (compared in constant time) and a Host of this address (DNS rebinding); a POST without a
 * session starts one (its own MCP server over the shared store), `DELETE` ends it.
 */
export async function serveMcpOverHttp(
  ctx: McpContext,
  options: { port: number; token: string; version: string },
): Promise<{ url: string; close(): Promise<void> }> {
  const sessions = new Map<string, { transport: StreamableHTTPServerTransport; close(): Promise<void> }>();
  let allowedHosts: string[] = [];
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path !== '/mcp') return refuse(res, 404, 'not found: the MCP endpoint is /mcp');
    const auth = req.headers.authorization ?? '';
    if (!auth.startsWith('Bearer ') || !sameToken(auth.slice(7).trim(), options.token))
      return refuse(res, 401, 'a bearer token is needed: Authorization: Bearer <token>', {
        'www-authenticate': 'Bearer',
      });
    const sessionId = req.headers['mcp-session-id'];
    const existing = typeof sessionId === 'string' ? sessions.get(sessionId) : undefined;
    if (existing) return existing.transport.handleRequest(req, res);
    if (sessionId !== undefined) return refuse(res, 404, 'unknown or ended session: initialize again');
    if (req.method !== 'POST') return refuse(res, 400, 'no session: start one with an initialize POST');
    const baton = createBatonMcpServer(ctx, options.version);
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      enableDnsRebindingProtection: true,
      allowedHosts,
      // Answered 413 with a JSON-RPC error naming the size; the session goes on.
      maxRequestBodySize: MAX_MCP_REQUEST_BYTES,
      onsessioninitialized: (id) => {
        sessions.set(id, { transport, close: baton.close });
      },
    });
    transport.onclose = () => {
      if (transport.sessionId !== undefined) sessions.delete(transport.sessionId);
      void baton.close();
    };
    await baton.server.connect(transport);
    await transport.handleRequest(req, res);
  };
  const http = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      const message = error instanceof Error ? error.message : String(error);
      if (!res.headersSent) refuse(res, 500, redactSecrets(message, ctx.secrets));
      else res.end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(options.port, '127.0.0.1', () => resolve());
  });
  const { port } = http.address() as AddressInfo;
  allowedHosts = [`127.0.0.1:${port}`, `localhost:${port}`];
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    close: async () => {
      for (const session of sessions.values()) await session.close();
      sessions.clear();
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}
