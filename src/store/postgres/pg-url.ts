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

const POSTGRES_URL = /^postgres(ql)?:\/\//i;

/** Whether a text is meant as a PostgreSQL URL (postgres:// or postgresql://). */
export function isPostgresUrl(text: string): boolean {
  return POSTGRES_URL.test(text.trim());
}

/** A PostgreSQL URL taken apart: the URL the driver gets, the schema, and a label without the password. */
interface PostgresTarget {
  url: string;
  schema: string;
  label: string;
}

/**
 * Reads a PostgreSQL URL as every entry point does (`--store`, BATON_DATABASE_URL, `Baton.open`):
 * its schema is `?schema=` (taken out of the URL handed to the driver), else `defaultSchema`; the
 * other parameters reach the driver exactly as written. Returns a message (naming `where`, never the
 * password) when the text is not a usable PostgreSQL URL.
 */
export function readPostgresUrl(
  raw: string,
  where: string,
  defaultSchema: string,
): PostgresTarget | { problem: string } {
  if (!isPostgresUrl(raw)) {
    return {
      problem:
        `${where}: ${JSON.stringify(maskPassword(raw))} is not a PostgreSQL URL; give postgres://user:password@host:5432/database ` +
        '(add ?schema=<name> for a schema other than "baton")',
    };
  }
  const [base = '', ...rest] = raw.trim().split('?');
  const pairs = rest
    .join('?')
    .split('&')
    .filter((pair) => pair !== '');
  const isSchema = (pair: string) => pair.split('=')[0] === 'schema';
  const given = pairs.find(isSchema);
  // Not decoded: a valid schema name has no character that needs encoding (PostgresStore checks it).
  const schema = given?.slice('schema='.length) || defaultSchema;
  const query = pairs.filter((pair) => !isSchema(pair)).join('&');
  const url = query === '' ? base : `${base}?${query}`;
  if (!parsePgUrl(url)) {
    return {
      problem:
        `${where}: ${JSON.stringify(maskPassword(raw))} is not a valid URL; check the host and port, and percent-encode ` +
        'special characters of the user name and password (e.g. @ as %40)',
    };
  }
  return { url, schema, label: `${maskPassword(url)} (schema ${schema})` };
}
