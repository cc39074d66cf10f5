import { closeSync, mkdirSync, openSync } from 'node:fs';
import { join } from 'node:path';
import type Database from 'better-sqlite3';
import { openSqliteFile } from '../store/sqlite/sqlite-driver.js';

/**
 * One `baton check` at a time per state file. The lock is an exclusive SQLite transaction on a
 * sidecar file: the operating system releases it when the holder exits or is killed, so a crash
 * never leaves a stale lock behind and there is nothing to expire or steal.
 */
export class StateLock {
  private constructor(private readonly db: Database.Database) {}

  /** The lock, or null when another process holds it. */
  static tryAcquire(sidecarDir: string): StateLock | null {
    mkdirSync(sidecarDir, { recursive: true, mode: 0o700 });
    const path = join(sidecarDir, 'lock.db');
    closeSync(openSync(path, 'a', 0o600));
    const db = openSqliteFile(path, { timeout: 0 });
    try {
      db.exec('BEGIN EXCLUSIVE');
      return new StateLock(db);
    } catch (error) {
      db.close();
      if ((error as { code?: string }).code === 'SQLITE_BUSY') return null;
      throw error;
    }
  }

  release(): void {
    if (!this.db.open) return;
    this.db.exec('ROLLBACK');
    this.db.close();
  }
}
