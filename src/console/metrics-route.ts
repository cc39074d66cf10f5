import type { IncomingMessage, ServerResponse } from 'node:http';
import { type BatonMetrics, METRICS_CONTENT_TYPE } from '../runtime/metrics.js';
import { sendBody } from './respond.js';
import { ConsoleSession } from './session.js';

/** `/metrics` of `baton serve --metrics` and `baton worker --metrics`: who may read it, and what it answers. */
export interface MetricsEndpoint {
  metrics: BatonMetrics;
  /**
   * A token that reads `/metrics` and nothing else (`--metrics-token-file`), for a scraper that
   * should not hold the console's session; null: only the session token does (a worker's
   * metrics server, which has no session and listens on loopback: anyone on the machine).
   */
  scrapeToken: ConsoleSession | null;
}

export const METRICS_PATH = '/metrics';

/**
 * Answers `GET /metrics` with the Prometheus text exposition, for a request that carries the
 * session (cookie or `Authorization: Bearer <session token>`) or `Authorization: Bearer <metrics
 * token>`; 401 otherwise, before the store is read. Without a session (a worker's metrics server),
 * the metrics token, or anyone when there is none.
 */
export async function answerMetrics(
  session: ConsoleSession | null,
  endpoint: MetricsEndpoint,
  request: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  if (!metricsAuthorized(session, endpoint, request)) {
    sendBody(
      res,
      401,
      'text/plain; charset=utf-8',
      session === null
        ? 'metrics need Authorization: Bearer <the token in --metrics-token-file>\n'
        : 'metrics need Authorization: Bearer <token> (the session token, or the one in --metrics-token-file)\n',
      { 'WWW-Authenticate': 'Bearer realm="baton metrics"' },
    );
    return;
  }
  const method = request.method ?? 'GET';
  if (method !== 'GET' && method !== 'HEAD') {
    res.writeHead(405, { Allow: 'GET, HEAD' }).end();
    return;
  }
  sendBody(res, 200, METRICS_CONTENT_TYPE, await endpoint.metrics.text());
}

function metricsAuthorized(
  session: ConsoleSession | null,
  endpoint: MetricsEndpoint,
  request: IncomingMessage,
): boolean {
  if (session === null && endpoint.scrapeToken === null) return true;
  const bearer = /^Bearer\s+(\S+)$/i.exec(request.headers.authorization ?? '')?.[1];
  return (session?.authorizes(request) ?? false) || (endpoint.scrapeToken?.isToken(bearer) ?? false);
}

/** The endpoint of a server started with metrics; `scrapeToken` as read from its file. */
export function metricsEndpoint(metrics: BatonMetrics, scrapeToken: string | null): MetricsEndpoint {
  return { metrics, scrapeToken: scrapeToken === null ? null : new ConsoleSession(scrapeToken) };
}
