import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { redactSecrets } from '../core/redact.js';
import { capabilityKey } from '../runtime/capability-urls.js';
import { commandContext } from '../runtime/commands/context.js';
import { BatonMetrics } from '../runtime/metrics.js';
import { planSecrets } from '../runtime/plan-secrets.js';
import type { Store } from '../runtime/types.js';
import { answerAction } from './action-route.js';
import { blockedCapability } from './blocked-capability.js';
import { answerCapability } from './capability-answer.js';
import type { ConsoleContext, Handler } from './context.js';
import { EventHub } from './event-hub.js';
import { answerHook, HOOK_PATH } from './hook-route.js';
import { html } from './html.js';
import { isLoopbackHost, listenOn, loopbackHostHeader } from './listen.js';
import { answerMetrics, METRICS_PATH, type MetricsEndpoint, metricsEndpoint } from './metrics-route.js';
import { PAGE_ROUTES } from './page-routes.js';
import { errorPage, statusOfError } from './pages/error-page.js';
import { layout } from './pages/layout.js';
import { redirect, sendBody, sendHtml, sendJson, sendText } from './respond.js';
import { ConsoleSession } from './session.js';
import { toolCapability } from './tool-capability.js';
import { waitCapability } from './wait-capability.js';

interface ConsoleOptions {
  /** The store as opened: the console holds it only inside its command context (runtime/commands). */
  store: Store;
  home: string;
  /** Address to listen on; anything but loopback needs a token the operator chose (see serve.ts). */
  host: string;
  /** 0: a free port. */
  port: number;
  token: string;
  /**
   * The environment its commands run with (the secrets masked, the trusted programs and
   * BATON_AGENT_CMD of a fork). Default process.env.
   */
  env?: NodeJS.ProcessEnv;
  /** More values to mask (the store URL). */
  secretValues?: readonly string[];
  /** How often the event log is read for live pages (ms). Default 300. */
  pollMs?: number;
  /** How often a live attempt log is read (ms). Default 300. */
  logPollMs?: number;
  now?: () => number;
  /**
   * The address outsiders reach this console at (`--public-url`): the base of the capability URLs
   * the inbox shows. Default: the address it listens on.
   */
  publicUrl?: string | null;
  /**
   * Serve `/metrics` (`--metrics`): the Prometheus text of runtime/metrics.ts, for the session token
   * or `scrapeToken` (`--metrics-token-file`: reads `/metrics` only). Absent: no `/metrics`.
   */
  metrics?: { scrapeToken: string | null };
}

export interface RunningConsole {
  /** `http://host:port` (without the token). */
  origin: string;
  port: number;
  close(): Promise<void>;
}

export { isLoopbackHost } from './listen.js';

const ASSETS: Record<string, { type: string; file: string }> = {
  '/assets/console.js': { type: 'text/javascript; charset=utf-8', file: 'console.js' },
  '/assets/console.css': { type: 'text/css; charset=utf-8', file: 'console.css' },
};

function loadAssets(): Map<string, { type: string; body: Buffer }> {
  const loaded = new Map<string, { type: string; body: Buffer }>();
  for (const [path, asset] of Object.entries(ASSETS))
    loaded.set(path, {
      type: asset.type,
      body: readFileSync(new URL(`./assets/${asset.file}`, import.meta.url)),
    });
  return loaded;
}

/** Starts the console's HTTP server (node:http) over `store`; resolves once it listens. */
export async function startConsole(options: ConsoleOptions): Promise<RunningConsole> {
  const commands = commandContext({
    store: options.store,
    home: options.home,
    ...(options.env ? { env: options.env } : {}),
    ...(options.secretValues ? { secretValues: options.secretValues } : {}),
    ...(options.now ? { now: options.now } : {}),
  });
  const hub = new EventHub(commands.store, options.pollMs ?? 300, options.now);
  let publicBase = () => options.publicUrl ?? '';
  const ctx: ConsoleContext = {
    commands,
    session: new ConsoleSession(options.token),
    hub,
    logPollMs: options.logPollMs ?? 300,
    publicUrl: () => publicBase(),
  };
  const assets = loadAssets();
  // Its model labels come from plan text: read through the masking boundary too.
  const metrics =
    options.metrics === undefined
      ? null
      : metricsEndpoint(
          new BatonMetrics(commands.store, options.now ? { now: options.now } : {}),
          options.metrics.scrapeToken,
        );
  // Read (or made) each time a waiting step is shown or a capability URL answered, never kept: a
  // console over a home it may not write still starts, and a key replaced or deleted revokes every
  // URL it made at once, without a restart (docs/safety.md).
  const waitKey = () => capabilityKey(options.home);
  const loopback = isLoopbackHost(options.host);
  let port = options.port;
  const maskError = (text: string) => redactSecrets(text, planSecrets(commands));
  const server: Server = createServer((request, res) => {
    handle(ctx, request, res, { assets, loopback, port: () => port, waitKey, metrics }).catch(
      (error: unknown) => {
        const status = statusOfError(error);
        const message = error instanceof Error ? error.message : String(error);
        if (status >= 500)
          process.stderr.write(
            `baton serve: internal error: ${maskError((error as Error)?.stack ?? message)}\n`,
          );
        if (res.headersSent) {
          res.destroy();
          return;
        }
        const shown = status >= 500 ? 'the console hit an internal error (see its terminal)' : message;
        sendHtml(
          res,
          status,
          layout(
            { title: 'Error', section: 'runs' },
            errorPage(status, shown, { href: '/', label: 'runs' }),
            false,
          ),
        );
      },
    );
  });
  // Live streams stay open: let close() end them.
  const sockets = new Set<import('node:net').Socket>();
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  const listening = await listenOn(server, options.host, options.port, '--port');
  port = listening.port;
  const origin = listening.origin;
  publicBase = () => options.publicUrl ?? origin;
  return {
    origin,
    port,
    close: async () => {
      hub.stop();
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The capability URLs a console answers without a session, by their path's first segment. */
const CAPABILITIES = { wait: waitCapability, blocked: blockedCapability, tool: toolCapability } as const;

interface ServerState {
  assets: Map<string, { type: string; body: Buffer }>;
  /** The key of capability URLs (engine/wait-urls.ts, engine/blocked-urls.ts, engine/tool-urls.ts). */
  waitKey: () => Buffer;
  loopback: boolean;
  port: () => number;
  /** `/metrics`, when the console serves it. */
  metrics: MetricsEndpoint | null;
}

async function handle(
  ctx: ConsoleContext,
  request: IncomingMessage,
  res: ServerResponse,
  state: ServerState,
): Promise<void> {
  const path = (request.url ?? '/').split('?')[0]!;
  // A webhook delivery: its signature is its credential, and it may come through a proxy.
  const hook = HOOK_PATH.exec(path);
  if (hook) {
    await answerHook(ctx, request, res, hook[1]!);
    return;
  }
  // The token in the path is the credential; it may come through a proxy under another Host.
  const capability = /^\/(wait|blocked|tool)\//.exec(path)?.[1] as keyof typeof CAPABILITIES | undefined;
  if (capability !== undefined) {
    await answerCapability(CAPABILITIES[capability](ctx, state.waitKey()), request, res, path);
    return;
  }
  // A page on another site that resolves its own name to 127.0.0.1 (DNS rebinding) is not us.
  if (state.loopback && !loopbackHostHeader(request.headers.host, state.port())) {
    sendText(res, 403, 'refused: unexpected Host header\n');
    return;
  }
  // A scraper's bearer token, never a ?token= address (it would land in the scraper's config and logs).
  if (state.metrics !== null && path === METRICS_PATH) {
    await answerMetrics(ctx.session, state.metrics, request, res);
    return;
  }
  const url = new URL(request.url ?? '/', 'http://console.invalid');
  const method = request.method ?? 'GET';
  const offered = url.searchParams.get('token');
  if (method === 'GET' && offered !== null) {
    if (!ctx.session.isToken(offered)) {
      refuseUnauthorized(res);
      return;
    }
    // Into the cookie, then out of the address bar (and out of the browser history).
    url.searchParams.delete('token');
    redirect(res, `${url.pathname}${url.search}`, { 'Set-Cookie': ctx.session.cookie() });
    return;
  }
  if (!ctx.session.authorizes(request)) {
    if (url.pathname.startsWith('/api/')) sendJson(res, 401, API_UNAUTHORIZED);
    else refuseUnauthorized(res);
    return;
  }
  if (method === 'GET' || method === 'HEAD') {
    const asset = state.assets.get(url.pathname);
    if (asset) {
      sendBody(res, 200, asset.type, asset.body);
      return;
    }
    const route = matchRoute(url.pathname);
    if (!route) {
      sendHtml(
        res,
        404,
        layout(
          { title: 'Not found', section: 'runs' },
          errorPage(404, `no page ${url.pathname}`, { href: '/', label: 'runs' }),
          false,
        ),
      );
      return;
    }
    await route.handler(ctx, {
      request,
      res,
      url,
      params: route.params,
      fragment: request.headers['x-baton-fragment'] === '1',
    });
    return;
  }
  if (method !== 'POST') {
    res.writeHead(405, { Allow: 'GET, POST' }).end();
    return;
  }
  await answerAction(ctx, request, res, url.pathname);
}

/** What `/api/` answers without the session token: JSON, as the rest of it. */
const API_UNAUTHORIZED = {
  error: {
    code: 'UNAUTHORIZED',
    message: 'send Authorization: Bearer <session token> (baton serve printed it)',
  },
};

function refuseUnauthorized(res: ServerResponse): void {
  sendHtml(
    res,
    401,
    html`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>baton console: sign in</title></head><body><h1>Session token required</h1><p>Open the address <code>baton serve</code> printed (it carries the token), or send <code>Authorization: Bearer &lt;token&gt;</code>.</p></body></html>`,
  );
}

function matchRoute(pathname: string): { handler: Handler; params: string[] } | null {
  const segments = pathname.split('/').slice(1);
  if (segments[segments.length - 1] === '' && segments.length > 1) segments.pop();
  let decoded: string[];
  try {
    decoded = segments.map((s) => decodeURIComponent(s));
  } catch {
    return null;
  }
  for (const [pattern, handler] of PAGE_ROUTES) {
    const parts = pattern === '' ? [''] : pattern.split('/');
    if (parts.length !== decoded.length) continue;
    if (!parts.every((part, i) => part === '*' || part === decoded[i])) continue;
    return { handler, params: decoded.filter((_, i) => parts[i] === '*') };
  }
  return null;
}
