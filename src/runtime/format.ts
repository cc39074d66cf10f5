import type { PlanStep } from '../core/plan/types.js';
import { waitCommands } from '../core/wait-commands.js';
import type { RunSummary } from '../store/store.js';

/** How every front door (the CLI, the console, the MCP server) writes times, durations and progress. */

/**
 * `12,345`: an integer with its thousands grouped, as `toLocaleString('en')` writes it without
 * loading ICU's number formats (about 20 ms, the first time, in every `baton status`).
 */
export function groupedNumber(value: number): string {
  if (!Number.isSafeInteger(value)) return String(value);
  return String(value).replace(/\B(?=(\d{3})+$)/g, ',');
}

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
 * What skipped a step, from its `step.skipped` event, worded once for the CLI's `baton timeline`
 * and the console's timeline: a person (`baton skip` records no reason), or the plan itself, with
 * the reason it recorded (its `when` was false, a rejection or a wait's timeout before it, a
 * tolerated fan-out failure).
 */
export function skipCause(event: { reason?: string }): { by: 'person' | 'plan'; text: string } {
  return event.reason
    ? { by: 'plan', text: `skipped: ${event.reason}` }
    : { by: 'person', text: 'skipped by a person (baton skip)' };
}

/** What a human can do about a blocked step. */
/**
 * What a step that waits (or timed out waiting) is waiting for, and the exact commands that end it:
 * `status`, `check` and the console show these lines. `waitingFor`: the step's rendered prompt or
 * event name.
 */
export function waitingHints(runId: string, step: PlanStep, waitingFor: string | undefined): string[] {
  if (!step.wait) return [];
  const what =
    step.wait.for === 'event'
      ? `waits for event ${waitingFor ?? step.wait.event}`
      : `waits for approval: ${waitingFor ?? ''}`;
  return [
    `${step.id} ${what}`,
    ...waitCommands(runId, step.id, step.wait, waitingFor).map((line) => `  ${line}`),
  ];
}

export function blockedHints(runId: string, stepId: string): string {
  return (
    `fix the cause, then: baton retry ${runId} ${stepId}   (or skip it: baton skip ${runId} ${stepId}; ` +
    `or say what it did: baton resolve ${runId} ${stepId} --result <json>)`
  );
}
