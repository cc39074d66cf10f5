/**
 * The `baton` launcher bundles better-sqlite3's JavaScript; the store uses that copy only when it
 * is the version installed beside the native addon it drives (a newer or older install after the
 * build would otherwise pair a wrapper with an addon it was not written for).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeEach, describe, expect, it, vi } from 'vitest';

const dir = mkdtempSync(join(tmpdir(), 'baton-driver-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const installed = (
  JSON.parse(
    readFileSync(
      join(dirname(createRequire(import.meta.url).resolve('better-sqlite3')), '..', 'package.json'),
      'utf8',
    ),
  ) as { version: string }
).version;

class Bundled extends Database {}

/** The driver module afresh: it keeps the driver it chose for the rest of the process. */
const driverModule = () => import('../src/store/sqlite/sqlite-driver.js');
beforeEach(() => {
  vi.resetModules();
});

function openAndRead(open: (path: string) => Database.Database, name: string): Database.Database {
  const db = open(join(dir, name));
  expect(db.prepare('SELECT 41 + 1').pluck().get()).toBe(42);
  db.close();
  return db;
}

describe('a bundled better-sqlite3', () => {
  it('is used when it is the installed version', async () => {
    const { offerSqliteDriver, openSqliteFile } = await driverModule();
    offerSqliteDriver({ driver: Bundled, version: installed });
    expect(openAndRead(openSqliteFile, 'same.db')).toBeInstanceOf(Bundled);
  });

  it('is not used for another version: the installed package is', async () => {
    const { offerSqliteDriver, openSqliteFile } = await driverModule();
    offerSqliteDriver({ driver: Bundled, version: `${installed}-other` });
    const db = openAndRead(openSqliteFile, 'other.db');
    expect(db).not.toBeInstanceOf(Bundled);
    expect(db).toBeInstanceOf(Database);
  });
});
