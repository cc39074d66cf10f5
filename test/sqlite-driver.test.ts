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
import { afterAll, describe, expect, it } from 'vitest';
import { offerSqliteDriver, openSqliteFile } from '../src/store/sqlite/sqlite-driver.js';

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

class Refused extends Database {}
class Bundled extends Database {}

describe('a bundled better-sqlite3', () => {
  it('is refused for another version than the installed one, and used for the same', () => {
    offerSqliteDriver({ driver: Refused, version: `${installed}-other` });
    offerSqliteDriver({ driver: Bundled, version: installed });
    const db = openSqliteFile(join(dir, 'x.db'));
    try {
      expect(db).toBeInstanceOf(Bundled);
      expect(db).not.toBeInstanceOf(Refused);
      expect(db.prepare('SELECT 41 + 1').pluck().get()).toBe(42);
    } finally {
      db.close();
    }
  });
});
