import { writeSync } from 'node:fs';
import { isatty } from 'node:tty';
import { NEEDS_A_PERSON_LIMIT } from '../../runtime/due-work.js';
import { databasePath, resolveHome } from '../../runtime/home.js';
import { type IdleWaiting, readIdle } from '../../runtime/idle-read.js';
import { engineSettings } from '../../runtime/settings.js';
import type { EngineReport, WaitingStep } from '../../runtime/types.js';
import { EXIT } from '../exit-codes.js';
import type { GlobalOptions } from '../global-options.js';
import { guardStdout } from '../stdout-guard.js';
import { WAITING_SHOWN, waitingLines } from './check-waiting.js';

/** Straight to fd 1: process.stdout would first build its stream (about 6 ms on a pipe). */
function writeOut(text: string): void {
  const bytes = Buffer.from(text);
  let offset = 0;
  try {
    while (offset < bytes.length) offset += writeSync(1, bytes, offset);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    // A reader that went away (`| head`) is not a failure; a full non-blocking pipe gets the rest later.
    if (code === 'EPIPE') return;
    if (code !== 'EAGAIN') throw error;
    guardStdout();
    process.stdout.write(bytes.subarray(offset));
  }
}

/**
 * The heartbeat's usual answer, fast: `baton check` on the embedded store with nothing to do (see
 * runtime/idle-read.ts), so a check every few minutes costs little more than starting Node.
 * Anything else returns null and the full check runs.
 */
export function idleCheck(options: GlobalOptions & { quiet?: boolean }): number | null {
  // Bad flags or BATON_* settings are refused as the full check would refuse them.
  const settings = engineSettings({});
  if (process.env.BATON_DATABASE_URL) return null;
  const waiting = readIdle(databasePath(resolveHome(options)), {
    waitingLimit: options.quiet ? 0 : options.json ? NEEDS_A_PERSON_LIMIT : WAITING_SHOWN,
    env: process.env,
    secretValues: settings.secrets ?? [],
    now: Date.now(),
  });
  return waiting === null ? null : answerNothingDue(options, waiting);
}

/**
 * What `baton check` prints when it did nothing and nothing is blocked (here, and for a home that
 * has no store yet): `nothing due` and the steps that wait, the empty report with `--json` (with
 * the waiting steps), nothing with `--quiet`.
 */
export function answerNothingDue(
  options: { json?: boolean; quiet?: boolean },
  waiting: IdleWaiting = { shown: [], total: 0 },
): number {
  if (options.json) {
    const report = {
      attemptsStarted: 0,
      attemptsCommitted: 0,
      attemptsDiscarded: 0,
      reclaimed: 0,
      scheduleRunsStarted: 0,
      scheduleSlotsLeft: false,
      blocked: [],
      waiting: waiting.shown.map((entry) => entry.waiting),
      toolApprovals: [],
    } satisfies EngineReport & { blocked: []; waiting: WaitingStep[]; toolApprovals: [] };
    // As printJson (cli/format.ts) writes it, without building process.stdout (see writeOut).
    writeOut(`${JSON.stringify(report, null, isatty(1) ? 2 : undefined)}\n`);
  } else if (!options.quiet) writeOut(`nothing due\n${waitingLines(waiting.shown, waiting.total)}`);
  return EXIT.ok;
}
