import { createServer } from 'node:http';
import type { BatonMetrics } from '../runtime/metrics.js';
import { isLoopbackHost, listenOn, loopbackHostHeader } from './listen.js';
import { answerMetrics, METRICS_PATH, metricsEndpoint } from './metrics-route.js';
import { sendText } from './respond.js';

export interface MetricsServerOptions {
  metrics: BatonMetrics;
  /** Anything but loopback needs `scrapeToken` (see worker.ts). */
  host: string;
  /** 0: a free port. */
  port: number;
  /** The bearer token a scrape must carry (`--metrics-token-file`); null: none (loopback only). */
  scrapeToken: string | null;
  /** The option that chose the port, named when it is taken. */
  portFlag: string;
}

export interface RunningMetricsServer {
  /** `http://host:port`. */
  origin: string;
  close(): Promise<void>;
}

/**
 * A server of `/metrics` alone, for a process that has no console (`baton worker --metrics`):
 * `console/metrics-route.ts` answers it as it does the console's, with the scrape token as the
 * only credential; everything else is 404.
 */
export async function startMetricsServer(options: MetricsServerOptions): Promise<RunningMetricsServer> {
  const endpoint = metricsEndpoint(options.metrics, options.scrapeToken);
  const loopback = isLoopbackHost(options.host);
  let port = options.port;
  const server = createServer((request, res) => {
    const path = (request.url ?? '/').split('?')[0]!;
    // A page on another site that resolves its own name to 127.0.0.1 (DNS rebinding) is not us.
    if (loopback && !loopbackHostHeader(request.headers.host, port)) {
      sendText(res, 403, 'refused: unexpected Host header\n');
      return;
    }
    if (path !== METRICS_PATH) {
      sendText(res, 404, `not found: this server answers ${METRICS_PATH} only\n`);
      return;
    }
    answerMetrics(null, endpoint, request, res).catch((error: unknown) => {
      const message = error instanceof Error ? error.message : String(error);
      process.stderr.write(`baton: metrics: cannot read the store: ${message}\n`);
      if (res.headersSent) res.destroy();
      else sendText(res, 503, 'metrics: cannot read the store (see the process output)\n');
    });
  });
  const listening = await listenOn(server, options.host, options.port, options.portFlag);
  port = listening.port;
  return {
    origin: listening.origin,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
