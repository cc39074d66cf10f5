import { BatonError } from '../../core/errors.js';
import type { CommandContext } from '../../runtime/commands/context.js';
import { storeTarget, storeWaitMs } from '../../runtime/open-store.js';
import { parseDurationOption } from '../../runtime/parse-values.js';
import { engineSettings } from '../../runtime/settings.js';
import type { EngineMeter } from '../../runtime/types.js';
import { type EngineCliOptions, engineFromCli, handleStopSignals } from '../engine-setup.js';
import { EXIT } from '../exit-codes.js';
import type { GlobalOptions } from '../global-options.js';
import { LineProgress } from '../progress.js';
import { openStoreUntilStopped } from '../store-wait.js';
import { parsePort, readTokenFile } from './server-options.js';

interface WorkerOptions extends GlobalOptions, EngineCliOptions {
  grace?: string;
  quiet?: boolean;
  storeWait?: string;
  metrics?: string;
  metricsHost?: string;
  metricsTokenFile?: string;
}

/** `--metrics <port>` and its companions, checked before the store is opened. */
interface MetricsListen {
  host: string;
  port: number;
  scrapeToken: string | null;
}

/** `baton worker`: stay up, run steps as they become due, sleep until the next due time. */
export async function workerCommand(options: WorkerOptions): Promise<number> {
  const settings = engineSettings(options);
  const graceMs = options.grace ? parseDurationOption(options.grace, '--grace') : 30_000;
  const listen = await metricsListen(options);
  const opened = await openStoreUntilStopped(
    options,
    storeWaitMs(options.storeWait, Number.POSITIVE_INFINITY),
    'worker',
  );
  // SIGINT or SIGTERM while the store was still unreachable: nothing ran, nothing to finish.
  if (opened === null) return EXIT.ok;
  const { ctx } = opened;
  try {
    const progress = options.quiet ? null : new LineProgress(process.stdout, true);
    const meter = listen === null ? undefined : new (await import('../../runtime/metrics.js')).EngineMeter();
    const engine = engineFromCli(
      ctx,
      settings,
      progress ? { onClaim: progress.onClaim, onSettle: progress.onSettle } : {},
      meter,
    );
    const metrics = listen === null ? null : await serveMetrics(ctx, meter!, listen, options);
    const removeHandlers = handleStopSignals(engine, graceMs, (line) =>
      process.stderr.write(`baton worker: ${line}\n`),
    );
    process.stderr.write(`baton worker: watching ${storeTarget(options).label}\n`);
    try {
      await engine.run({ kind: 'forever' });
    } finally {
      removeHandlers();
      await metrics?.close();
    }
    return EXIT.ok;
  } finally {
    await opened.close();
  }
}

/**
 * Null without `--metrics`. Beyond this machine (`--metrics-host`) a scrape needs the token of
 * `--metrics-token-file`; on loopback the token is optional.
 */
async function metricsListen(options: WorkerOptions): Promise<MetricsListen | null> {
  if (options.metrics === undefined) {
    const stray = options.metricsTokenFile !== undefined ? '--metrics-token-file' : '--metrics-host';
    if (options.metricsTokenFile !== undefined || options.metricsHost !== undefined)
      throw new BatonError(
        'CONFIG_INVALID',
        `${stray}: add --metrics <port> (the port to serve /metrics on)`,
      );
    return null;
  }
  const port = parsePort(options.metrics, '--metrics');
  const host = options.metricsHost?.trim() || '127.0.0.1';
  const { isLoopbackHost } = await import('../../console/listen.js');
  if (!isLoopbackHost(host) && options.metricsTokenFile === undefined)
    throw new BatonError(
      'CONFIG_INVALID',
      `--metrics-host ${host}: serving /metrics beyond this machine needs a scrape token: add --metrics-token-file <file> ` +
        '(a file only you can read, holding at least 16 characters), or leave --metrics-host out to listen on 127.0.0.1 only',
    );
  const { MIN_TOKEN_CHARS } = await import('../../console/session.js');
  const scrapeToken =
    options.metricsTokenFile === undefined
      ? null
      : readTokenFile(options.metricsTokenFile, MIN_TOKEN_CHARS, '--metrics-token-file', 'baton worker');
  return { host, port, scrapeToken };
}

/** This worker's `/metrics`: the store's figures (read through the masking boundary) and its own engine's cycle latency. */
async function serveMetrics(
  ctx: CommandContext,
  meter: EngineMeter,
  listen: MetricsListen,
  options: WorkerOptions,
): Promise<{ close(): Promise<void> }> {
  const [{ BatonMetrics }, { startMetricsServer }] = await Promise.all([
    import('../../runtime/metrics.js'),
    import('../../console/metrics-server.js'),
  ]);
  const running = await startMetricsServer({
    metrics: new BatonMetrics(ctx.store, { meter }),
    host: listen.host,
    port: listen.port,
    scrapeToken: listen.scrapeToken,
    portFlag: '--metrics',
  });
  const credential =
    listen.scrapeToken === null
      ? 'no token: this machine only'
      : `Authorization: Bearer <the token in ${options.metricsTokenFile}>`;
  process.stderr.write(`baton worker: metrics at ${running.origin}/metrics (${credential})\n`);
  return running;
}
