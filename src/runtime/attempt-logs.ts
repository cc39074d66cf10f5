import { open, stat } from 'node:fs/promises';
import { isAbsolute, relative, resolve } from 'node:path';
import { redactSecrets } from '../core/redact.js';
import { attemptLogPath } from '../executors/step-executor.js';
import type { AttemptRecord, RunDetail } from '../store/store.js';

/** How much of a finished log a step page shows (its end); the whole log is a link away. */
const LOG_TAIL_BYTES = 64 * 1024;
/** Most read from a growing log per poll of its live stream. */
const LIVE_CHUNK_BYTES = 256 * 1024;

/**
 * Where an attempt's log is: its recorded path, or for the attempt running now the path its
 * executor writes to. Null when it has none, or when the path would leave the home's `runs/`.
 */
export function attemptLogFile(
  home: string,
  run: RunDetail,
  stepId: string,
  attempt: number,
  attempts: readonly AttemptRecord[],
): string | null {
  const recorded = attempts.find((a) => a.stepId === stepId && a.attempt === attempt);
  const state = run.steps.find((s) => s.stepId === stepId);
  const rel = recorded
    ? recorded.logPath
    : state && state.status === 'running' && state.attempt === attempt
      ? attemptLogPath({ runId: run.id, stepId, attempt })
      : null;
  if (rel === null) return null;
  const root = resolve(home, 'runs');
  const file = resolve(home, rel);
  const inside = relative(root, file);
  return inside !== '' && !inside.startsWith('..') && !isAbsolute(inside) ? file : null;
}

/** The end of a log file, masked; `truncated` when it is longer than `maxBytes`. */
export async function readLogTail(
  file: string,
  secrets: readonly string[],
  maxBytes = LOG_TAIL_BYTES,
): Promise<{ text: string; truncated: boolean; size: number }> {
  let size: number;
  try {
    size = (await stat(file)).size;
  } catch {
    return { text: '', truncated: false, size: 0 };
  }
  const start = Math.max(0, size - maxBytes);
  const bytes = await readRange(file, start, size - start);
  let text = bytes.toString('utf8');
  // Start at a line: the first one may be cut (and so may a secret in it).
  if (start > 0) text = text.slice(text.indexOf('\n') + 1);
  return { text: redactSecrets(text, secrets), truncated: start > 0, size };
}

async function readRange(file: string, position: number, length: number): Promise<Buffer> {
  const handle = await open(file, 'r');
  try {
    const buffer = Buffer.alloc(length);
    const { bytesRead } = await handle.read(buffer, 0, length, position);
    return buffer.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}

/**
 * Follows a growing log: each `read()` returns the complete lines written since the last one,
 * masked (a secret is never split across two reads); `flush` also returns an unfinished last line.
 */
export class LogFollower {
  private offset = 0;
  private pending = Buffer.alloc(0);

  constructor(
    private readonly file: string,
    private readonly secrets: readonly string[],
  ) {}

  async read(flush = false): Promise<string> {
    let size = 0;
    try {
      size = (await stat(this.file)).size;
    } catch {
      return '';
    }
    if (size > this.offset) {
      const chunk = await readRange(this.file, this.offset, Math.min(size - this.offset, LIVE_CHUNK_BYTES));
      this.offset += chunk.length;
      this.pending = Buffer.concat([this.pending, chunk]);
    }
    const cut =
      flush || this.pending.length >= LIVE_CHUNK_BYTES
        ? this.pending.length
        : this.pending.lastIndexOf(10) + 1;
    if (cut <= 0) return '';
    const text = this.pending.subarray(0, cut).toString('utf8');
    this.pending = this.pending.subarray(cut);
    return redactSecrets(text, this.secrets);
  }

  /** Whether everything in the file was read. */
  async atEnd(): Promise<boolean> {
    try {
      return (await stat(this.file)).size <= this.offset;
    } catch {
      return true;
    }
  }
}
