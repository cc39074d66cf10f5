import { createReadStream, existsSync } from 'node:fs';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { BatonError, runNotFound } from '../../core/errors.js';
import type { StoredEvent } from '../../core/events.js';
import { flowKeyOf, formatFlowRate } from '../../core/flow.js';
import type { RunDetail, RunSummary, Store } from '../../store/store.js';
import { EXIT } from '../exit-codes.js';
import {
  blockedHints,
  clockTime,
  formatDuration,
  formatTime,
  printJson,
  stepProgress,
  table,
} from '../format.js';
import { ganttChart } from '../gantt.js';
import { type GlobalOptions, parsePositiveInt, resolveHome } from '../home.js';
import { maskedReads } from '../masked-reads.js';
import { openStore } from '../open-store.js';

async function withStore<T>(
  options: GlobalOptions,
  fn: (store: Store, home: string) => Promise<T>,
): Promise<T> {
  const home = resolveHome(options);
  const store = await openStore(options, 'read');
  try {
    return await fn(maskedReads(store, process.env, options.store ? [options.store] : []), home);
  } finally {
    await store.close();
  }
}

async function requireRun(store: Store, runId: string): Promise<RunDetail> {
  const run = await store.getRun(runId);
  if (!run) throw runNotFound(runId);
  return run;
}

/** `baton status [run]`: recent runs, or one run's steps with what to do about blocked ones. */
export async function statusCommand(
  runId: string | undefined,
  options: GlobalOptions & { limit?: string },
): Promise<number> {
  return withStore(options, async (store) => {
    if (runId === undefined) {
      const runs = await store.listRuns({
        limit: options.limit ? parsePositiveInt(options.limit, '--limit') : 20,
      });
      if (options.json) printJson(runs);
      else if (runs.length === 0) process.stdout.write('no runs yet: start one with baton run <plan.yaml>\n');
      else {
        const rows = [['RUN', 'PLAN', 'STATUS', 'STEPS', 'UPDATED']];
        for (const run of runs)
          rows.push([run.id, run.planName, run.status, stepProgress(run), formatTime(run.updatedAt)]);
        process.stdout.write(`${table(rows)}\n`);
      }
      return EXIT.ok;
    }
    const run = await requireRun(store, runId);
    const waits = await flowWaits(store, run, Date.now());
    if (options.json) printJson({ ...run, flowWaits: waits });
    else {
      process.stdout.write(
        `run ${run.id}  plan ${run.planName}  ${run.status}  ${stepProgress(run)} steps done  ${run.attemptsTotal} attempts\n`,
      );
      process.stdout.write(`workspace ${run.workspace}\n`);
      if (run.blockedReason) process.stdout.write(`blocked: ${run.blockedReason}\n`);
      const rows = [['STEP', 'STATUS', 'ATTEMPTS', 'DUE', 'LAST ERROR']];
      for (const step of run.steps) {
        const due =
          step.dueAt !== null && (step.status === 'ready' || step.status === 'retry_wait')
            ? formatTime(step.dueAt)
            : '-';
        rows.push([
          step.stepId,
          step.status,
          String(step.attempt),
          due,
          (step.lastError ?? '').split('\n')[0]!.slice(0, 80),
        ]);
      }
      process.stdout.write(`${table(rows)}\n`);
      for (const wait of waits) {
        process.stdout.write(
          `${wait.stepId} is due and waits for flow key ${wait.key}: ${wait.reason} (baton flow list)\n`,
        );
      }
      for (const step of run.steps.filter((s) => s.status === 'blocked')) {
        process.stdout.write(
          `\n${step.stepId} is blocked: ${step.blockedReason}\n${blockedHints(run.id, step.stepId)}\n`,
        );
      }
    }
    return run.status === 'blocked' || run.status === 'failed' || run.status === 'cancelled'
      ? EXIT.workFailed
      : EXIT.ok;
  });
}

/** Due steps of a running run held back by a flow limit now, with why (for `status`). */
async function flowWaits(
  store: Store,
  run: RunDetail,
  now: number,
): Promise<{ stepId: string; key: string; reason: string }[]> {
  if (run.status !== 'running') return [];
  const due = run.steps
    .map((step, position) => ({ step, position }))
    .filter(
      ({ step }) =>
        (step.status === 'ready' || step.status === 'retry_wait') && (step.dueAt ?? now + 1) <= now,
    );
  if (due.length === 0) return [];
  const limits = new Map((await store.listFlowLimits(now)).map((limit) => [limit.key, limit]));
  const waits: { stepId: string; key: string; reason: string }[] = [];
  for (const { step, position } of due) {
    const key = flowKeyOf(run.plan.steps[position]!, step.onFallback === true);
    const limit = limits.get(key);
    if (!limit) continue;
    if (limit.concurrency !== null && limit.running >= limit.concurrency)
      waits.push({ stepId: step.stepId, key, reason: `${limit.running} of ${limit.concurrency} running` });
    else if (limit.rate !== null && limit.recentStarts >= limit.rate.count)
      waits.push({
        stepId: step.stepId,
        key,
        reason: `${limit.recentStarts} started in the last ${formatFlowRate(limit.rate).split('/')[1]}`,
      });
  }
  return waits;
}

function describeEvent(event: StoredEvent, starts: Map<string, number>): { what: string; took: string } {
  switch (event.type) {
    case 'step.started':
      starts.set(`${event.stepId}:${event.attempt}`, event.at);
      return { what: `started by ${event.owner}`, took: '' };
    case 'step.succeeded':
      return {
        what: `succeeded: ${event.summary.split('\n')[0]!.slice(0, 80)}`,
        took: formatDuration(event.durationMs),
      };
    case 'step.failed':
      return {
        what: `failed (${event.failureClass}): ${event.message.split('\n')[0]!.slice(0, 100)}`,
        took: formatDuration(event.durationMs),
      };
    case 'step.retry_scheduled':
      return { what: `retry ${event.nextAttempt} due in ${formatDuration(event.delayMs)}`, took: '' };
    case 'step.blocked':
      return {
        what: `blocked (${event.failureClass}): ${event.reason.split('\n')[0]!.slice(0, 100)}`,
        took: '',
      };
    case 'run.blocked':
      return { what: `run blocked: ${event.reason.split('\n')[0]!.slice(0, 100)}`, took: '' };
    case 'run.created':
      return { what: `run created: ${event.planName}, ${event.steps} steps`, took: '' };
    case 'budget.exceeded':
      return { what: `budget ${event.limit} exceeded (${event.value} of ${event.max})`, took: '' };
    case 'run.resumed':
      return { what: `run resumed: ${event.reason}`, took: '' };
    case 'recovery.finished':
      return {
        what: `model call ${event.outcome} after ${event.requests} request(s) (${event.model})`,
        took: '',
      };
    case 'recovery.retried':
      return {
        what: `model ${event.reason ?? 'failure'}${event.status ? ` ${event.status}` : ''}: retry in ${formatDuration(event.waitMs ?? 0)}`,
        took: '',
      };
    case 'recovery.compacted':
      return { what: `context compacted: ~${event.tokensBefore} → ~${event.tokensAfter} tokens`, took: '' };
    case 'recovery.output_reduced':
    case 'recovery.reissued':
      return {
        what: `${event.type.slice('recovery.'.length).replace('_', ' ')}: max output ${event.maxOutputBefore} → ${event.maxOutputAfter}`,
        took: '',
      };
    case 'recovery.fell_back':
      return { what: `fell back from ${event.model} to ${event.toModel}`, took: '' };
    case 'recovery.gave_up':
      return {
        what: `model call gave up (${event.reason ?? event.failureClass}): ${event.message ?? ''}`,
        took: '',
      };
    case 'tool.failed':
      return { what: `tool ${event.tool} failed (${event.code})`, took: '' };
    default:
      return { what: event.type.replace('.', ' '), took: '' };
  }
}

/** `baton timeline <run>`: every transition with time, duration, attempt and outcome. */
export async function timelineCommand(runId: string, options: GlobalOptions): Promise<number> {
  return withStore(options, async (store) => {
    const run = await requireRun(store, runId);
    const events = await store.getEvents(runId);
    if (options.json) {
      printJson(events);
      return EXIT.ok;
    }
    const starts = new Map<string, number>();
    const first = events[0]?.at ?? 0;
    const rows = [['TIME', '+ELAPSED', 'STEP', 'ATTEMPT', 'DURATION', 'EVENT']];
    for (const event of events) {
      const { what, took } = describeEvent(event, starts);
      const stepId = 'stepId' in event ? (event.stepId ?? '') : '';
      const attempt = 'attempt' in event ? String(event.attempt) : '';
      rows.push([clockTime(event.at), formatDuration(event.at - first), stepId, attempt, took, what]);
    }
    process.stdout.write(`${table(rows)}\n`);
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
  options: GlobalOptions & { attempt?: string },
): Promise<number> {
  return withStore(options, async (store, home) => {
    const run = await requireRun(store, runId);
    if (!run.steps.some((s) => s.stepId === stepId)) {
      throw new BatonError(
        'STEP_NOT_FOUND',
        `run ${runId} has no step "${stepId}" (known: ${run.steps.map((s) => s.stepId).join(', ')})`,
      );
    }
    const attempts = await store.getAttempts(runId, stepId);
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
    process.stderr.write(
      `# ${runId} ${stepId} attempt ${attempt.attempt}: ${attempt.outcome}${attempt.message ? ` (${attempt.failureClass}): ${attempt.message.split('\n')[0]}` : ''}\n`,
    );
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

type Command = 'retry' | 'skip' | 'cancel' | 'resume';

const COMMANDS: Record<
  Command,
  { apply: (store: Store, runId: string, stepId: string, now: number) => Promise<RunSummary>; done: string }
> = {
  retry: {
    apply: (store, runId, stepId, now) => store.retryStep(runId, stepId, now),
    done: 'step {step} will run again',
  },
  skip: {
    apply: (store, runId, stepId, now) => store.skipStep(runId, stepId, now),
    done: 'step {step} skipped',
  },
  cancel: { apply: (store, runId, _stepId, now) => store.cancelRun(runId, now), done: 'run {run} cancelled' },
  resume: {
    apply: (store, runId, _stepId, now) => store.resumeRun(runId, now),
    done: 'run {run} resumed with a raised budget',
  },
};

/** `baton retry|skip <run> <step>`, `baton cancel|resume <run>`: one transaction each. */
export async function manageCommand(
  command: Command,
  runId: string,
  stepId: string | undefined,
  options: GlobalOptions,
): Promise<number> {
  return withStore(options, async (store) => {
    await requireRun(store, runId);
    const { apply, done } = COMMANDS[command];
    const summary = await apply(store, runId, stepId ?? '', Date.now());
    if (options.json) printJson(summary);
    else {
      const what = done.replace('{step}', stepId ?? '').replace('{run}', runId);
      const next = summary.status === 'running' ? ' (baton check or baton worker drives it)' : '';
      process.stdout.write(`${what}; run is ${summary.status}${next}\n`);
    }
    return EXIT.ok;
  });
}
