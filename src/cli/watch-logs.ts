import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { BatonError } from '../core/errors.js';
import { attemptLogPath } from '../executors/step-executor.js';
import { formatDuration } from '../runtime/format.js';
import type { AttemptRecord, RunDetail, Store } from '../runtime/types.js';
import { EXIT } from './exit-codes.js';
import { attemptLine } from './format.js';
import { requireRun, runSettled } from './status-view.js';
import { watchUntil } from './watch.js';

type StepView = RunDetail['steps'][number];

/** Steps in these states will not start another attempt without a human. */
const STEP_DONE = new Set(['succeeded', 'degraded', 'skipped', 'cancelled', 'blocked']);
const STEP_OK = new Set(['succeeded', 'degraded', 'skipped']);

/** Copies what the file holds past `offset` to stdout; returns the new offset. */
async function copyFrom(file: string, offset: number): Promise<number> {
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(file, 'r');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return offset;
    throw error;
  }
  try {
    const buffer = Buffer.alloc(64 * 1024);
    for (;;) {
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, offset);
      if (bytesRead === 0) return offset;
      offset += bytesRead;
      // Copied: the next read reuses the buffer.
      if (!process.stdout.write(Buffer.from(buffer.subarray(0, bytesRead))))
        await once(process.stdout, 'drain');
    }
  } finally {
    await handle.close();
  }
}

/**
 * `baton logs <run> <step> -f`: the attempt's log as it grows, then each new attempt's (named on
 * stderr), until the step settles: exit 0 when it succeeded (or was skipped or degraded), 1 when
 * it is blocked or cancelled, or the run ended without running it. With `only`: that attempt, until
 * it ends (exit 0 if it succeeded).
 */
export async function followLogs(
  store: Store,
  home: string,
  runId: string,
  stepId: string,
  only?: number,
): Promise<number> {
  let afterSeq = 0;
  let first = true;
  let current: { attempt: number; offset: number; ended: boolean } | null = null;
  let said = '';
  const note = (line: string) => {
    if (line !== said) process.stderr.write(line);
    said = line;
  };
  const fileOf = (attempt: number) => join(home, attemptLogPath({ runId, stepId, attempt }));

  /** Prints the rest of the attempt followed now and (with `trailer`) the line of how it ended. */
  const endCurrent = async (record: AttemptRecord, trailer = true) => {
    if (!current || current.ended) return;
    current.offset = await copyFrom(fileOf(current.attempt), current.offset);
    if (record.logPath === null && current.offset === 0)
      process.stdout.write(`${record.summary ?? record.message ?? ''}\n`);
    else if (current.offset === 0 && !existsSync(fileOf(current.attempt)))
      process.stderr.write(`# the log of attempt ${current.attempt} is not in ${home} (another --home?)\n`);
    if (trailer) process.stderr.write(attemptLine(runId, stepId, current.attempt, record));
    current.ended = true;
  };

  return watchUntil(async () => {
    if (current && !current.ended) current.offset = await copyFrom(fileOf(current.attempt), current.offset);
    const events = await store.getEvents(runId, { afterSeq });
    if (events.length === 0 && !first) return null;
    first = false;
    afterSeq = events.at(-1)?.seq ?? afterSeq;
    const run = await requireRun(store, runId);
    const step = run.steps.find((s) => s.stepId === stepId)!;
    if (only !== undefined && only > step.attempt && (STEP_DONE.has(step.status) || runSettled(run)))
      throw new BatonError(
        'INVALID_ARGUMENT',
        `step ${stepId} has no attempt ${only}: it is ${step.status} after ${step.attempt} attempt(s)`,
      );
    const records = new Map((await store.getAttempts(runId, stepId)).map((a) => [a.attempt, a]));
    const target = only ?? step.attempt;
    if (current && current.attempt !== target) {
      const record = records.get(current.attempt);
      if (record) await endCurrent(record);
    }
    if (target >= 1 && target <= step.attempt && current?.attempt !== target) {
      current = { attempt: target, offset: 0, ended: false };
      // An attempt that has ended is named with its outcome first, as logs without -f does.
      const ended = records.get(target);
      process.stderr.write(attemptLine(runId, stepId, target, ended));
      if (ended) await endCurrent(ended, false);
      else current.offset = await copyFrom(fileOf(target), 0);
    }
    const record = current ? records.get(current.attempt) : undefined;
    if (record) await endCurrent(record);
    if (only !== undefined && record) return record.outcome === 'succeeded' ? EXIT.ok : EXIT.workFailed;
    if (STEP_DONE.has(step.status) && (!current || current.ended || step.attempt === 0))
      return STEP_OK.has(step.status) ? EXIT.ok : EXIT.workFailed;
    if (runSettled(run) && step.status !== 'running') {
      if (current && !current.ended) current.offset = await copyFrom(fileOf(current.attempt), current.offset);
      process.stderr.write(`# run ${runId} is ${run.status}; step ${stepId} is ${step.status}\n`);
      return EXIT.workFailed;
    }
    note(waitingLine(step, current?.attempt ?? 0, Date.now()));
    return null;
  });
}

/** What the follow waits for, said once per change on stderr. */
function waitingLine(step: StepView, following: number, now: number): string {
  if (step.status === 'running') return '';
  if (step.status === 'retry_wait' || step.status === 'ready') {
    const late = step.dueAt === null || step.dueAt <= now;
    const due = !late
      ? `in ${formatDuration(step.dueAt! - now)}`
      : following === 0
        ? 'now (baton worker or baton check runs it)'
        : 'now';
    return `# attempt ${following + 1} of ${step.stepId} is due ${due}\n`;
  }
  return `# ${step.stepId} is ${step.status}: waiting for it to start\n`;
}
