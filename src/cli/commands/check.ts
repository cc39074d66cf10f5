import { SLOT_RUNS_PER_CHECK } from '../../core/schedule/schedule-rules.js';
import { drainDueWork, needsAPerson } from '../../runtime/due-work.js';
import { blockedHints } from '../../runtime/format.js';
import { databasePath, homeIsNamed, resolveHome } from '../../runtime/home.js';
import { storeExists, storeWaitMs } from '../../runtime/open-store.js';
import { parseDurationOption } from '../../runtime/parse-values.js';
import { engineSettings } from '../../runtime/settings.js';
import type { EngineReport, Store } from '../../runtime/types.js';
import { type EngineCliOptions, engineFromCli } from '../engine-setup.js';
import { EXIT } from '../exit-codes.js';
import { printJson } from '../format.js';
import type { GlobalOptions } from '../global-options.js';
import { LineProgress } from '../progress.js';
import { openStoreUntilStopped } from '../store-wait.js';
import { answerNothingDue } from './check-idle.js';
import { toolCallLines, WAITING_SHOWN, waitingLines } from './check-waiting.js';

interface CheckOptions extends GlobalOptions, EngineCliOptions {
  maxTime?: string;
  quiet?: boolean;
  storeWait?: string;
}

/**
 * `baton check`: do everything that is due now, then exit. Safe for a heartbeat or cron and for
 * several copies at once (claims are leased). Exit 1 when a run is blocked, so a heartbeat reports it.
 */
export async function checkCommand(options: CheckOptions): Promise<number> {
  const settings = engineSettings(options);
  const maxTimeMs = options.maxTime ? parseDurationOption(options.maxTime, '--max-time') : null;
  const home = resolveHome(options);
  if (!storeExists(options)) {
    // Nothing was ever run with this home, so nothing is due; no home or database is made for it.
    // A home named by --home or BATON_HOME that has no store may be a typo: say so (on stderr).
    if (homeIsNamed(options)) {
      process.stderr.write(`baton check: no Baton store at ${databasePath(home)} yet: nothing due\n`);
    }
    return answerNothingDue(options);
  }
  const opened = await openStoreUntilStopped(options, storeWaitMs(options.storeWait, 30_000), 'check');
  if (opened === null) return EXIT.ok;
  const { ctx } = opened;
  try {
    const progress = options.json || options.quiet ? null : new LineProgress(process.stdout, true);
    const engine = engineFromCli(
      ctx,
      settings,
      progress ? { onClaim: progress.onClaim, onSettle: progress.onSettle } : {},
    );
    const stop = () => engine.stop(0);
    process.once('SIGTERM', stop);
    process.once('SIGINT', stop);
    const report = await drainDueWork(engine, maxTimeMs);
    const { blocked, waiting, toolApprovals } = await needsAPerson(ctx.store);
    if (options.json) {
      printJson({
        ...report,
        blocked: blocked.map((run) => ({ id: run.id, reason: run.reason })),
        waiting,
        toolApprovals,
      });
    } else {
      if (!options.quiet) process.stdout.write(scheduleText(report));
      for (const run of blocked) {
        process.stdout.write(`BLOCKED run ${run.id} (${run.planName}): ${run.reason}\n`);
        for (const stepId of run.stepIds) process.stdout.write(`  ${blockedHints(run.id, stepId)}\n`);
      }
      // Waiting is not a failure: the exit code stays 0 while only waiting.
      if (!options.quiet)
        process.stdout.write(`${await waitingText(ctx.store)}${toolCallLines(toolApprovals)}`);
    }
    return blocked.length > 0 ? EXIT.workFailed : EXIT.ok;
  } finally {
    await opened.close();
  }
}

/**
 * `nothing due` when the check started nothing, and a line when it left due schedule slots for the
 * next check (its bound, SLOT_RUNS_PER_CHECK).
 */
function scheduleText(report: EngineReport): string {
  const idle = report.attemptsStarted === 0 && report.scheduleRunsStarted === 0 ? 'nothing due\n' : '';
  if (!report.scheduleSlotsLeft) return idle;
  return `${idle}schedule slots left due for the next check: one check starts at most ${SLOT_RUNS_PER_CHECK} runs of schedules, this one started ${report.scheduleRunsStarted}\n`;
}

/** The WAITING lines of the steps that wait now, read through the masked store. */
async function waitingText(reads: Store): Promise<string> {
  const { steps, total } = await reads.listWaitingSteps(WAITING_SHOWN);
  const shown = [];
  for (const waiting of steps) {
    const run = await reads.getRunSteps(waiting.runId, { statuses: ['waiting'], everyStepUpTo: 0 });
    shown.push({ waiting, step: run?.plan.steps.find((s) => s.id === waiting.stepId) });
  }
  return waitingLines(shown, total);
}
