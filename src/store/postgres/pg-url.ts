/**
 * Reading PostgreSQL URLs for messages, without the driver: which server, and the URL with its
 * password masked. A password is never printed.
 */

/**
 * Masks the passwords of anything URL-like, parsable or not: the userinfo's (`scheme://user:pw@host`,
 * up to the last `@`, so an unencoded `/`, `?` or `#` in it stays hidden) and the `password` and
 * `sslpassword` parameters, which the driver also reads (and prefers).
 */
export function maskPassword(text: string): string {
  return text
    .replace(/(\/\/[^/?#:@\s]*:)\S*@/g, '$1***@')
    .replace(/([?&](?:ssl)?password=)[^&#\s]*/gi, '$1***');
}

const DUMMY_HOST = 'baton-no-host';

/** The URL as the driver reads it: an empty host (`postgres://user@/db?host=/socket`) is allowed. */
export function parsePgUrl(url: string): URL | null {
  for (const candidate of [url, url.replace('@/', `@${DUMMY_HOST}/`)]) {
    try {
      return new URL(candidate);
    } catch {
      // try the next form
    }
  }
  return null;
}

/** `host:port` of a PostgreSQL URL (the `host`/`port` parameters first; port 5432 when none), for messages. */
export function serverAddress(url: string): string {
  const parsed = parsePgUrl(url);
  if (!parsed) return '(unparsable url)';
  const hostname = parsed.hostname === DUMMY_HOST ? '' : decodeURIComponent(parsed.hostname);
  const host = parsed.searchParams.get('host') || hostname || 'localhost';
  return `${host}:${parsed.searchParams.get('port') || parsed.port || '5432'}`;
}
