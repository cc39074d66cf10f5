import type { AttemptRecord, RunSummary } from '../store/store.js';
import { displayWidth, padToWidth } from './text-width.js';

export function formatDuration(ms: number | null): string {
  if (ms === null || !Number.isFinite(ms)) return '-';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  if (ms < 3_600_000) return `${Math.floor(ms / 60_000)} m ${Math.round((ms % 60_000) / 1000)} s`;
  return `${Math.floor(ms / 3_600_000)} h ${Math.round((ms % 3_600_000) / 60_000)} m`;
}

export function formatTime(ms: number | null): string {
  if (ms === null) return '-';
  return new Date(ms)
    .toISOString()
    .replace('T', ' ')
    .replace(/\.\d+Z$/, 'Z');
}

export function clockTime(ms: number): string {
  return new Date(ms).toISOString().slice(11, 19);
}

export function stepProgress(run: RunSummary): string {
  const counts = run.stepCounts;
  const total = Object.values(counts).reduce((sum, n) => sum + (n ?? 0), 0);
  const done = (counts.succeeded ?? 0) + (counts.skipped ?? 0) + (counts.degraded ?? 0);
  return `${done}/${total}`;
}

/**
 * Left-aligned columns, for plain terminals and logs alike, measured in terminal columns (wide CJK
 * characters and emoji take two, colour escapes none). `minWidths`: columns at least this wide
 * (rows appended later, as `timeline --watch` does, line up with the first ones).
 */
export function table(rows: string[][], minWidths: readonly number[] = []): string {
  const widths = columnWidths(rows, minWidths);
  return rows.map((row) => tableRow(row, widths)).join('\n');
}

/** The widths `table` gives the columns of these rows. */
export function columnWidths(rows: string[][], minWidths: readonly number[] = []): number[] {
  const widths = [...minWidths];
  for (const row of rows) {
    row.forEach((cell, i) => {
      widths[i] = Math.max(widths[i] ?? 0, displayWidth(cell));
    });
  }
  return widths;
}

/** One line of a table whose columns are `widths` wide (the last cell is not padded). */
export function tableRow(row: readonly string[], widths: readonly number[]): string {
  return row.map((cell, i) => (i === row.length - 1 ? cell : padToWidth(cell, widths[i] ?? 0))).join('  ');
}

export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

/** What a human can do about a blocked step. */
export function blockedHints(runId: string, stepId: string): string {
  return (
    `fix the cause, then: baton retry ${runId} ${stepId}   (or skip it: baton skip ${runId} ${stepId}; ` +
    `or say what it did: baton resolve ${runId} ${stepId} --result <json>)`
  );
}

/** The line naming an attempt, for stderr: `# <run> <step> attempt <n>: <outcome, or running>`. */
export function attemptLine(runId: string, stepId: string, attempt: number, record?: AttemptRecord): string {
  const what = !record
    ? 'running'
    : `${record.outcome}${record.message ? ` (${record.failureClass}): ${record.message.split('\n')[0]}` : ''}`;
  return `# ${runId} ${stepId} attempt ${attempt}: ${what}\n`;
}
