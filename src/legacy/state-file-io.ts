import {
  closeSync,
  fsyncSync,
  openSync,
  readFileSync,
  renameSync,
  statSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { BatonError } from '../core/errors.js';
import { type LegacyState, parseLegacyState } from './state-file.js';

const MAX_STATE_BYTES = 16 * 1024 * 1024;

/** Reads and validates a state file; null when it does not exist. */
export function readLegacyState(path: string): LegacyState | null {
  let size: number;
  try {
    const info = statSync(path);
    if (!info.isFile()) throw new BatonError('STATE_CORRUPT', `${path}: is not a regular file`);
    size = info.size;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
  if (size > MAX_STATE_BYTES)
    throw new BatonError(
      'STATE_CORRUPT',
      `${path}: ${size} bytes is more than a state file may have (16 MB)`,
    );
  const bytes = readFileSync(path);
  let text: string;
  try {
    // Fatal: a lenient decode would turn bad bytes into U+FFFD, and the next write would keep that.
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch (error) {
    throw new BatonError(
      'STATE_CORRUPT',
      `${path}: is not valid UTF-8 text (a state file is JSON, which is UTF-8); the file was left untouched`,
      { cause: error },
    );
  }
  return parseLegacyState(text, path);
}

/**
 * Replaces the file atomically: write a temporary file beside it (0600), fsync it, rename it over
 * the original, fsync the folder. A crash at any instant leaves the old file or the new one, whole.
 * One writer per check keeps the folder open, so each write opens only its temporary file.
 */
export class LegacyStateWriter {
  private dirFd: number | null = null;

  constructor(private readonly path: string) {}

  write(state: LegacyState): void {
    const text = `${JSON.stringify(state, null, 2)}\n`;
    const temp = join(dirname(this.path), `.${basename(this.path)}.${process.pid}.tmp`);
    const fd = openSync(temp, 'w', 0o600);
    try {
      writeSync(fd, text);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    try {
      renameSync(temp, this.path);
    } catch (error) {
      unlinkSync(temp);
      throw error;
    }
    this.dirFd ??= openSync(dirname(this.path), 'r');
    fsyncSync(this.dirFd);
  }

  close(): void {
    if (this.dirFd !== null) closeSync(this.dirFd);
    this.dirFd = null;
  }
}
