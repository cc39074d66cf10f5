/**
 * The one runtime: the CLI and `Baton.open` read the same BATON_* variables the same way (an option
 * wins over its variable), and every setting is in the one table the configuration page follows.
 */
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { isBatonError } from '../src/core/errors.js';
import { engineSettings, SETTINGS } from '../src/runtime/settings.js';
import { Baton } from '../src/workflow/baton.js';
import { defineWorkflow } from '../src/workflow/define-workflow.js';

const made: string[] = [];
const newFolder = () => {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'baton-runtime-')));
  made.push(dir);
  return dir;
};
const savedEnv = { ...process.env };
afterEach(() => {
  for (const name of ['BATON_HOME', 'BATON_CONCURRENCY', 'BATON_LEASE_MS']) {
    if (savedEnv[name] === undefined) delete process.env[name];
    else process.env[name] = savedEnv[name];
  }
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** Three independent steps that note how many of them run at once. */
function overlapping() {
  const seen = { running: 0, most: 0 };
  const step = async () => {
    seen.running++;
    seen.most = Math.max(seen.most, seen.running);
    // Long enough for the others claimed in the same cycle to start; nothing is asserted on time.
    await new Promise((done) => setTimeout(done, 50));
    seen.running--;
    return 'ok';
  };
  const workflow = defineWorkflow({ name: 'overlap' }).step('a', step).step('b', step).step('c', step);
  return { workflow, seen };
}

describe('Baton.open reads the BATON_* variables as the CLI does', () => {
  it('BATON_HOME is the home when the options name none; the option wins over it', async () => {
    const home = newFolder();
    process.env.BATON_HOME = home;
    const fromEnv = Baton.open();
    expect(fromEnv.home).toBe(home);
    await fromEnv.close();
    const other = newFolder();
    const fromOption = Baton.open({ home: other });
    expect(fromOption.home).toBe(other);
    await fromOption.close();
  });

  it('BATON_CONCURRENCY limits the steps at once; the concurrency option wins over it', async () => {
    process.env.BATON_CONCURRENCY = '1';
    const limited = overlapping();
    const baton = Baton.open({ home: newFolder(), pollMs: 20 });
    try {
      await baton.run(limited.workflow, {});
      expect(limited.seen.most).toBe(1);
    } finally {
      await baton.close();
    }
    const free = overlapping();
    const wider = Baton.open({ home: newFolder(), pollMs: 20, concurrency: 3 });
    try {
      await wider.run(free.workflow, {});
      expect(free.seen.most).toBe(3);
    } finally {
      await wider.close();
    }
  });

  it('a bad BATON_LEASE_MS or BATON_CONCURRENCY is refused at open, naming the variable', () => {
    process.env.BATON_LEASE_MS = '5';
    const lease = (() => {
      try {
        Baton.open({ home: newFolder() });
      } catch (error) {
        return error;
      }
    })();
    expect(isBatonError(lease)).toBe(true);
    expect(String(lease)).toMatch(/BATON_LEASE_MS 5: a lease must be from 100ms to 24h/);
    delete process.env.BATON_LEASE_MS;
    process.env.BATON_CONCURRENCY = 'many';
    expect(() => Baton.open({ home: newFolder() })).toThrow(/BATON_CONCURRENCY: expected a whole number/);
  });
});

describe('an option of Baton.open wins over its variable, bad or not (as a flag on the CLI)', () => {
  it('the concurrency and leaseMs options mean BATON_CONCURRENCY and BATON_LEASE_MS are never read', async () => {
    process.env.BATON_CONCURRENCY = '512';
    process.env.BATON_LEASE_MS = '50';
    const baton = Baton.open({ home: newFolder(), concurrency: 4, leaseMs: 30_000 });
    await baton.ready();
    await baton.close();
    expect(engineSettings({ concurrency: '4', lease: '1m' }, process.env)).toEqual({
      concurrency: 4,
      leaseMs: 60_000,
    });
  });
});

describe('Baton.open on a SQLite home that cannot hold a store', () => {
  it('throws from Baton.open itself, not later from ready()', () => {
    const dir = newFolder();
    const file = join(dir, 'not-a-folder');
    writeFileSync(file, 'x');
    expect(() => Baton.open({ home: file })).toThrow(/a file is in the way/);
    writeFileSync(join(dir, 'baton.db'), 'not a database '.repeat(200), { mode: 0o600 });
    expect(() => Baton.open({ home: dir })).toThrow(/not a readable Baton database/);
  });
});

describe('the settings table', () => {
  it('names each flag and variable once', () => {
    const options = SETTINGS.map((s) => s.option).filter((o) => o !== null);
    const variables = SETTINGS.map((s) => s.variable).filter((v) => v !== null);
    expect(new Set(options).size).toBe(options.length);
    expect(new Set(variables).size).toBe(variables.length);
  });

  it('a flag wins over its variable, and a --store URL is a secret to mask', () => {
    const env = { BATON_CONCURRENCY: '2', BATON_LEASE_MS: '10s' };
    expect(engineSettings({}, env)).toEqual({ concurrency: 2, leaseMs: 10_000 });
    expect(engineSettings({ concurrency: '5', lease: '1m', store: 'postgres://u:pw@h/db' }, env)).toEqual({
      concurrency: 5,
      leaseMs: 60_000,
      secrets: ['postgres://u:pw@h/db'],
    });
  });
});
