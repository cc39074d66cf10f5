import type { AttemptRecord } from '../runtime/types.js';
import { displayWidth, padToWidth } from './text-width.js';

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

/**
 * A command's `--json` answer: indented on a terminal, one line when piped or redirected (what a
 * script or `jq` reads; a 10,000-step `status --json` is a third smaller and quicker that way).
 */
export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, process.stdout.isTTY ? 2 : undefined)}\n`);
}

/** The line naming an attempt, for stderr: `# <run> <step> attempt <n>: <outcome, or running>`. */
export function attemptLine(runId: string, stepId: string, attempt: number, record?: AttemptRecord): string {
  const what = !record
    ? 'running'
    : `${record.outcome}${record.message ? ` (${record.failureClass}): ${record.message.split('\n')[0]}` : ''}`;
  return `# ${runId} ${stepId} attempt ${attempt}: ${what}\n`;
}
