import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { expectRefused, runBaton } from './helpers/cli.js';

/**
 * Bad `baton mock-llm` options, through the real built command: each ends with exit 2 and one line
 * naming the option and what it allows, never an internal error with a stack trace.
 */

const STATUSES_5XX = '500, 502, 503, 529';
const STATUSES_4XX = '400, 401, 403, 404';

/** [options, what the one line must contain] */
const BAD_OPTIONS: ReadonlyArray<readonly [string[], ...string[]]> = [
  [['--mix', 'rate_limit=0.6,server_error=0.6'], '--mix', 'add up to 1.2', 'at most'],
  [['--mix', 'rate_limit=1.5'], '--mix rate_limit=1.5', 'probability from 0 to 1'],
  [['--mix', 'rate_limit=-0.1'], '--mix rate_limit=-0.1', 'probability from 0 to 1'],
  [['--mix', 'rate_limit=1e-1'], '--mix rate_limit=1e-1', 'probability from 0 to 1'],
  [['--mix', 'rate_limit'], '--mix rate_limit', 'probability from 0 to 1'],
  [['--mix', 'rate_limit=0.1,rate_limit=0.2'], '--mix rate_limit=0.2', 'given twice'],
  [['--mix', 'bogus=0.1'], '--mix bogus=0.1', 'unknown fault "bogus"', 'rate_limit, rate_window_too_large'],
  [['--script', 'server_error:abc'], '--script server_error:abc', STATUSES_5XX],
  [['--script', 'server_error:418'], '--script server_error:418', STATUSES_5XX],
  [['--script', 'fatal:500'], '--script fatal:500', STATUSES_4XX],
  [['--script', 'rate_limit:-1'], '--script rate_limit:-1', 'a number >= 0 (seconds)'],
  [['--script', 'rate_limit:soon'], '--script rate_limit:soon', 'a number >= 0 (seconds)'],
  [['--script', 'stall:abc'], '--script stall:abc', 'a number >= 0 (milliseconds)'],
  [['--script', 'reset:-5'], '--script reset:-5', 'a number >= 0 (bytes)'],
  [['--script', 'overflow:nope'], '--script overflow:nope', 'openai, openai_output, azure, anthropic'],
  [['--script', 'ok:extra'], '--script ok:extra', 'takes no'],
  [['--script', 'ok,nope'], '--script nope', 'unknown fault "nope"', 'server_error:<500|502|503|529>'],
  [['--port', '-1'], '--port -1', 'from 0 to 65535'],
  [['--seed', '-5'], '--seed -5', 'from 0 to 4294967295'],
  [['--host', 'no-such-host.invalid'], '--host no-such-host.invalid', 'does not resolve'],
];

describe('baton mock-llm refuses bad options with exit 2 and one line', () => {
  it.each(BAD_OPTIONS)('%j', async (args, ...expected) => {
    const result = await runBaton(['mock-llm', ...args], { timeoutMs: 30_000 });
    expectRefused(result, ...expected);
    expect(result.stderr.trimEnd().split('\n')).toHaveLength(1);
  });

  it('a port already taken', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const { port } = taken.address() as AddressInfo;
    try {
      const result = await runBaton(['mock-llm', '--port', String(port)], { timeoutMs: 30_000 });
      expectRefused(result, `--port ${port}`, 'already in use', '0 for a free one');
      expect(result.stderr.trimEnd().split('\n')).toHaveLength(1);
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
  });
});
