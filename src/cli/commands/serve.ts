import { BatonError } from '../../core/errors.js';
import { resolveHome } from '../../runtime/home.js';
import { openStore, storeSecrets, storeTarget } from '../../runtime/open-store.js';
import { EXIT } from '../exit-codes.js';
import type { GlobalOptions } from '../global-options.js';
import { watchStopSignals } from '../stop-signal.js';
import { parsePort, readTokenFile } from './server-options.js';

interface ServeOptions extends GlobalOptions {
  host?: string;
  port?: string;
  tokenFile?: string;
  publicUrl?: string;
  metrics?: boolean;
  metricsTokenFile?: string;
}

/**
 * `baton serve`: the operator console over the store every command uses. Loopback only unless
 * told otherwise with a token the operator chose (--host 0.0.0.0 --token-file <file>); the
 * session token is printed once, in the address to open.
 */
export async function serveCommand(options: ServeOptions): Promise<number> {
  const { isLoopbackHost, startConsole } = await import('../../console/console-server.js');
  const { MIN_TOKEN_CHARS, newSessionToken } = await import('../../console/session.js');
  const host = options.host?.trim() || '127.0.0.1';
  if (!isLoopbackHost(host) && options.tokenFile === undefined) {
    throw new BatonError(
      'CONFIG_INVALID',
      `--host ${host}: listening beyond this machine needs a session token you chose: add --token-file <file> ` +
        '(a file only you can read, holding at least 16 characters), or leave --host out to listen on 127.0.0.1 only',
    );
  }
  const port = parsePort(options.port);
  const publicUrl = (await import('../../runtime/public-url.js')).publicUrl(options.publicUrl);
  const token =
    options.tokenFile === undefined
      ? newSessionToken()
      : readTokenFile(options.tokenFile, MIN_TOKEN_CHARS, '--token-file', 'baton serve');
  // A scrape token is a metrics token: giving one asks for /metrics.
  const metrics =
    options.metrics === true || options.metricsTokenFile !== undefined
      ? {
          scrapeToken:
            options.metricsTokenFile === undefined
              ? null
              : readTokenFile(
                  options.metricsTokenFile,
                  MIN_TOKEN_CHARS,
                  '--metrics-token-file',
                  'baton serve',
                ),
        }
      : undefined;
  const target = storeTarget(options);
  const store = await openStore(options, 'read');
  try {
    const running = await startConsole({
      store,
      home: resolveHome(options),
      host,
      port,
      token,
      secretValues: storeSecrets(options),
      publicUrl,
      ...(metrics === undefined ? {} : { metrics }),
    });
    const where = target.kind === 'sqlite' ? target.path : `PostgreSQL ${target.label}`;
    const address =
      options.tokenFile === undefined
        ? `${running.origin}/?token=${token}`
        : `${running.origin}/  (session token: the content of ${options.tokenFile})`;
    const capability =
      publicUrl === null
        ? ''
        : `  capability URLs start with ${publicUrl}/wait/ (waiting steps) and ${publicUrl}/blocked/ (blocked steps)\n`;
    const scrape =
      metrics === undefined
        ? ''
        : `  metrics at ${running.origin}/metrics (Authorization: Bearer <${metrics.scrapeToken === null ? 'session token' : `the token in ${options.metricsTokenFile}`}>)\n`;
    process.stdout.write(
      `baton serve: the console of ${where}\n  open ${address}\n${capability}${scrape}  Ctrl-C stops it\n`,
    );
    const stop = watchStopSignals();
    await stop.received;
    stop.remove();
    await running.close();
    return EXIT.ok;
  } finally {
    await store.close();
  }
}
