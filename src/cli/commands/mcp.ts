import { BatonError } from '../../core/errors.js';
import { EXIT } from '../exit-codes.js';
import type { GlobalOptions } from '../global-options.js';
import { watchStopSignals } from '../stop-signal.js';
import { parsePort, readTokenFile } from './server-options.js';

interface McpOptions extends GlobalOptions {
  allowRun?: boolean;
  http?: boolean;
  port?: string;
  tokenFile?: string;
}

/** The version `baton mcp` tells a host (the package's). */
const VERSION = '0.1.0';
const MIN_TOKEN_CHARS = 16;

/**
 * `baton mcp`: the MCP server (src/mcp/, and the SDK with it, loaded only here) over stdio until
 * the host closes stdin, or over HTTP on 127.0.0.1 until SIGINT/SIGTERM.
 */
export async function mcpCommand(options: McpOptions): Promise<number> {
  if (!options.http && (options.port !== undefined || options.tokenFile !== undefined))
    throw new BatonError(
      'INVALID_ARGUMENT',
      '--port and --token-file are for --http: add --http, or remove them',
    );
  const port = parsePort(options.port);
  const token =
    options.tokenFile === undefined
      ? undefined
      : readTokenFile(options.tokenFile, MIN_TOKEN_CHARS, '--token-file', 'baton mcp');
  const { McpContext } = await import('../../mcp/mcp-context.js');
  const ctx = new McpContext({
    ...(options.home === undefined ? {} : { home: options.home }),
    ...(options.store === undefined ? {} : { store: options.store }),
    allowRun: options.allowRun === true,
  });
  const stop = watchStopSignals();
  try {
    if (!options.http) {
      const { serveMcpOverStdio } = await import('../../mcp/mcp-stdio.js');
      await serveMcpOverStdio(ctx, VERSION, stop.received);
      return EXIT.ok;
    }
    const { newBearerToken, serveMcpOverHttp } = await import('../../mcp/mcp-http.js');
    const bearer = token ?? newBearerToken();
    const served = await serveMcpOverHttp(ctx, { port, token: bearer, version: VERSION });
    const shown = token === undefined ? bearer : `the content of ${options.tokenFile}`;
    process.stdout.write(
      `baton mcp: streamable HTTP at ${served.url}\n  Authorization: Bearer ${shown}\n  Ctrl-C stops it\n`,
    );
    await stop.received;
    await served.close();
    return EXIT.ok;
  } finally {
    stop.remove();
    await ctx.close();
  }
}
