import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { BatonError } from '../core/errors.js';

// What the console (`baton serve`) and a worker's metrics server (`baton worker --metrics`) share
// of listening: which hosts are this machine's alone, the Host header a loopback server accepts,
// and listening with a clear refusal.

const LOOPBACK = new Set(['127.0.0.1', '::1', 'localhost']);

export function isLoopbackHost(host: string): boolean {
  return LOOPBACK.has(host.replace(/^\[|\]$/g, '').toLowerCase());
}

/**
 * Whether a request to a server on loopback names it as loopback: a page on another site that
 * resolves its own name to 127.0.0.1 (DNS rebinding) does not.
 */
export function loopbackHostHeader(host: string | undefined, port: number): boolean {
  if (host === undefined) return false;
  return [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`].includes(host.toLowerCase());
}

/**
 * Listens on `host`:`port` (0: a free port) and answers the address; `portFlag` names the option
 * to change when the port is taken.
 */
export async function listenOn(
  server: Server,
  host: string,
  port: number,
  portFlag: string,
): Promise<{ origin: string; port: number }> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) =>
      reject(
        new BatonError(
          'CONFIG_INVALID',
          `cannot listen on ${host}:${port}: ${error.code === 'EADDRINUSE' ? `the port is in use (choose another with ${portFlag}, or 0 for a free one)` : error.message}`,
        ),
      ),
    );
    server.listen(port, host, () => resolve());
  });
  const bound = (server.address() as AddressInfo).port;
  const hostText = host.includes(':') ? `[${host}]` : host;
  return { origin: `http://${hostText}:${bound}`, port: bound };
}
