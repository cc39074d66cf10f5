import { readFileSync, statSync } from 'node:fs';
import { BatonError } from '../../core/errors.js';

/**
 * The options `baton serve`, `baton mcp --http` and `baton worker --metrics` share: the port to
 * listen on and a token read from a file (never a flag's value, which `ps` would show).
 */

/** The port `flag` gives (default `--port`); absent: 0, a free one. */
export function parsePort(value: string | undefined, flag = '--port'): number {
  if (value === undefined) return 0;
  if (!/^\d{1,5}$/.test(value) || Number(value) > 65_535)
    throw new BatonError(
      'INVALID_ARGUMENT',
      `${flag}: expected a port from 0 to 65535 (0: a free one), got "${value}"`,
    );
  return Number(value);
}

/** The token in `file` (`flag` names it in a refusal); warns as `command` when others can read the file. */
export function readTokenFile(file: string, minChars: number, flag: string, command: string): string {
  let text: string;
  try {
    text = readFileSync(file, 'utf8').trim();
  } catch (error) {
    throw new BatonError(
      'CONFIG_INVALID',
      `${flag} ${file}: cannot read it (${(error as NodeJS.ErrnoException).code ?? 'error'})`,
    );
  }
  if (text.length < minChars || /\s/.test(text))
    throw new BatonError(
      'CONFIG_INVALID',
      `${flag} ${file}: expected one token of at least ${minChars} characters without spaces (e.g. openssl rand -hex 32 > ${file})`,
    );
  if ((statSync(file).mode & 0o077) !== 0)
    process.stderr.write(`${command}: warning: ${file} can be read by other users; chmod 600 ${file}\n`);
  return text;
}
