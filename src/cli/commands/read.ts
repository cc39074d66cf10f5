import { createReadStream, existsSync } from 'node:fs';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { cleanupProgress } from '../../core/cleanup.js';
import { BatonError } from '../../core/errors.js';
import { labelsText, parseLabels } from '../../core/labels.js';
import { RUN_STATUSES, type RunStatus } from '../../core/run-state.js';
import { staleSteps } from '../../core/stale-steps.js';
import { verificationOf } from '../../core/verify.js';
import { attemptsWithSessions } from '../../runtime/attempt-sessions.js';
import { lastOutputTimes } from '../../runtime/last-output.js';
import { withCommandContext } from '../../runtime/open-store.js';
import { parseDurationOption, parsePositiveInt } from '../../runtime/parse-values.js';
import type { RunListQuery, RunWithSteps, ScheduleSlot } from '../../runtime/types.js';
import { painter, useColour } from '../colour.js';
import { EXIT } from '../exit-codes.js';
import { attemptLine, printJson } from '../format.js';
import { ganttChart } from '../gantt.js';
import type { GlobalOptions } from '../global-options.js';
import {
  addSkipReasons,
  flowWaits,
  requireRun,
  requireRunSteps,
  runChildren,
  runExitCode,
  runListLines,
  runStatusLines,
  waitingToolCalls,
} from '../status-view.js';
import { timelineTable } from '../timeline-view.js';

/** The schedule and slot that started a run (`baton status <run>`); null: none did. */
function scheduleOfRun(slot: ScheduleSlot | null) {
  if (!slot) return null;
  return { name: slot.schedule, slotAt: new Date(slot.slotAt).toISOString(), manual: slot.manual };
}

function scheduleLine(schedule: NonNullable<ReturnType<typeof scheduleOfRun>>): string {
  return schedule.manual
    ? `schedule: ${schedule.name}, triggered by hand at ${schedule.slotAt} (baton schedule show ${schedule.name})`
    : `schedule: ${schedule.name}, slot ${schedule.slotAt} (baton schedule show ${schedule.name})`;
}

/** Colours for this command's stdout: on a TTY (or FORCE_COLOR), never in --json or with NO_COLOR. */
/** `cleanup: { ending, done, total }` of a run that ended with cleanup to do (core/cleanup.ts). */
function cleanupField(run: RunWithSteps) {
  const cleanup = cleanupProgress(run.plan, run.steps);
  return cleanup === null ? {} : { cleanup };
}

function paintFor(options: GlobalOptions) {
  return painter(!options.json && useColour(process.stdout));
}

/** Refuses an option that needs another (`--watch` without a run, `--follow` with `--json`). */
function refuse(message: string): never {
  throw new BatonError('INVALID_ARGUMENT', message);
}

/**
 * `baton status [run]`: recent runs, or one run's steps with what to do about blocked ones (of a
 * large run, those that need a look; `--all`: every one); with `--watch`, that view live until
 * the run settles. `--json` is the whole run, every step.
 */
export async function statusCommand(
  runId: string | undefined,
  options: GlobalOptions & StatusFilterOptions & { limit?: string; watch?: boolean; all?: boolean },
): Promise<number> {
  if (options.watch && runId === undefined)
    refuse('status --watch follows one run: baton status <run> --watch (baton status lists the runs)');
  const filter = statusFilter(options);
  if (runId !== undefined && filter !== null)
    refuse('--label, --plan, --status and --since choose runs to list: give them without a run id');
  return withCommandContext(options, async ({ store, home }) => {
    if (runId === undefined) {
      const limit = options.limit ? parsePositiveInt(options.limit, '--limit') : 20;
      const runs = await store.listRuns({ ...filter, limit });
      const labels = await store.getRunLabels(runs.map((run) => run.id));
      if (options.json)
        printJson(runs.map((run) => (labels[run.id] ? { ...run, labels: labels[run.id] } : run)));
      else if (runs.length === 0)
        process.stdout.write(
          filter === null ? 'no runs yet: start one with baton run <plan.yaml>\n' : 'no run matches\n',
        );
      else process.stdout.write(`${runListLines(runs, paintFor(options), labels)}\n`);
      return EXIT.ok;
    }
    if (options.watch) {
      const { watchRunStatus } = await import('../watch-run.js');
      return watchRunStatus(store, runId, { json: options.json === true, all: options.all === true });
    }
    if (options.json) {
      const run = await requireRun(store, runId);
      const schedule = scheduleOfRun(await store.scheduleSlotOfRun(runId));
      printJson({
        ...run,
        // A verified step's verification, read out of its stored result for scripts.
        steps: run.steps.map((step) => {
          const verification = verificationOf(step.resultJson);
          return verification ? { ...step, verification } : step;
        }),
        stale: staleSteps(run),
        ...cleanupField(run),
        // A child run (a sub-plan step's): the run and step that started it.
        ...(run.plan.parent
          ? { parentRunId: run.plan.parent.runId, parentStepId: run.plan.parent.stepId }
          : {}),
        children: await runChildren(store, run),
        // Its claim priority (0 to 9, in its snapshot: core/priority.ts).
        priority: run.plan.priority ?? 0,
        labels: (await store.getRunLabels([runId]))[runId] ?? {},
        toolApprovals: await waitingToolCalls(store, run),
        flowWaits: await flowWaits(store, run, Date.now()),
        ...(schedule ? { schedule } : {}),
      });
      return runExitCode(run);
    }
    const run = await requireRunSteps(store, runId, options.all === true);
    const now = Date.now();
    const waits = await flowWaits(store, run, now);
    // Why a listed step was skipped is in its event (a `when` skip, a rejection, a wait's timeout).
    const skips = run.steps.some((step) => step.status === 'skipped')
      ? addSkipReasons(await store.getEvents(runId))
      : undefined;
    const lastOutput = run.steps.some((step) => step.status === 'running')
      ? await lastOutputTimes(home, run)
      : undefined;
    const toolCalls = await waitingToolCalls(store, run);
    const children = await runChildren(store, run);
    const context = {
      now,
      ...(children.length > 0 ? { children } : {}),
      ...(skips ? { skips } : {}),
      ...(lastOutput ? { lastOutput } : {}),
      ...(toolCalls.length > 0 ? { toolCalls } : {}),
    };
    process.stdout.write(`${runStatusLines(run, waits, paintFor(options), context).join('\n')}\n`);
    const labels = (await store.getRunLabels([runId]))[runId];
    if (labels) process.stdout.write(`labels: ${labelsText(labels)}\n`);
    const schedule = scheduleOfRun(await store.scheduleSlotOfRun(runId));
    if (schedule) process.stdout.write(`${scheduleLine(schedule)}\n`);
    return runExitCode(run);
  });
}

interface StatusFilterOptions {
  label?: string[];
  plan?: string;
  status?: string;
  since?: string;
}

/** The list's filters (`--label`, `--plan`, `--status`, `--since`), checked; null when none is given. */
function statusFilter(options: StatusFilterOptions): RunListQuery | null {
  if (
    options.label === undefined &&
    options.plan === undefined &&
    options.status === undefined &&
    options.since === undefined
  )
    return null;
  if (options.status !== undefined && !(RUN_STATUSES as readonly string[]).includes(options.status))
    refuse(
      `--status: "${options.status.slice(0, 40)}" is not a run status (one of ${RUN_STATUSES.join(', ')})`,
    );
  return {
    ...(options.label !== undefined ? { labels: parseLabels(options.label, '--label') } : {}),
    ...(options.plan !== undefined ? { planName: options.plan } : {}),
    ...(options.status !== undefined ? { status: options.status as RunStatus } : {}),
    ...(options.since !== undefined
      ? { createdFrom: Date.now() - parseDurationOption(options.since, '--since') }
      : {}),
  };
}

/** `baton timeline <run>`: every transition with time, duration, attempt and outcome (`--watch`: as they happen). */
export async function timelineCommand(
  runId: string,
  options: GlobalOptions & { watch?: boolean },
): Promise<number> {
  return withCommandContext(options, async ({ store }) => {
    if (options.watch) {
      const { watchTimeline } = await import('../watch-run.js');
      return watchTimeline(store, runId, options.json === true);
    }
    const run = await requireRun(store, runId);
    const events = await store.getEvents(runId);
    if (options.json) {
      printJson(events);
      return EXIT.ok;
    }
    process.stdout.write(`${timelineTable(events, paintFor(options))}\n`);
    const chart = ganttChart(
      events,
      run.steps.map((step) => step.stepId),
      Date.now(),
    );
    if (chart.length > 0) process.stdout.write(`\n${chart.join('\n')}\n`);
    return EXIT.ok;
  });
}

/** `baton logs <run> <step>`: the full output of an attempt (the last one by default). */
export async function logsCommand(
  runId: string,
  stepId: string,
  options: GlobalOptions & { attempt?: string; follow?: boolean },
): Promise<number> {
  if (options.follow && options.json)
    refuse('logs --follow prints the log as it grows, --json lists finished attempts: give one of them');
  return withCommandContext(options, async ({ store, home }) => {
    const run = await requireRun(store, runId);
    const step = run.steps.find((s) => s.stepId === stepId);
    if (!step) {
      throw new BatonError(
        'STEP_NOT_FOUND',
        `run ${runId} has no step "${stepId}" (known: ${run.steps.map((s) => s.stepId).join(', ')})`,
      );
    }
    if (options.follow) {
      const only = options.attempt ? parsePositiveInt(options.attempt, '--attempt') : undefined;
      if (only !== undefined && only > step.attempt + 1)
        refuse(
          `step ${stepId} has started ${step.attempt} attempt(s): --attempt ${only} -f can follow one of them or the next (${step.attempt + 1})`,
        );
      const { followLogs } = await import('../watch-logs.js');
      return followLogs(store, home, runId, stepId, only);
    }
    const attempts = await attemptsWithSessions(store, runId, stepId);
    if (options.json) {
      printJson(attempts);
      return EXIT.ok;
    }
    if (attempts.length === 0) {
      process.stdout.write(`step ${stepId} has no finished attempt yet\n`);
      return EXIT.ok;
    }
    const wanted = options.attempt
      ? parsePositiveInt(options.attempt, '--attempt')
      : Math.max(...attempts.map((a) => a.attempt));
    const attempt = attempts.find((a) => a.attempt === wanted);
    if (!attempt) {
      throw new BatonError(
        'INVALID_ARGUMENT',
        `step ${stepId} has no attempt ${wanted} (attempts: ${attempts.map((a) => a.attempt).join(', ')})`,
      );
    }
    process.stderr.write(attemptLine(runId, stepId, attempt.attempt, attempt));
    if (attempt.logPath === null) {
      process.stdout.write(attempt.summary ?? attempt.message ?? '');
      process.stdout.write('\n');
      return EXIT.ok;
    }
    const file = join(home, attempt.logPath);
    if (!existsSync(file))
      throw new BatonError('INVALID_ARGUMENT', `the log file ${file} is gone (removed by hand?)`);
    // Streamed: an agent that printed gigabytes must not be read into memory.
    await pipeline(createReadStream(file), process.stdout, { end: false });
    return EXIT.ok;
  });
}
