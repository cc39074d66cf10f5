import { BatonError } from '../../core/errors.js';
import { parseLabels } from '../../core/labels.js';
import { validateScheduleName } from '../../core/schedule/schedule-rules.js';
import {
  addSchedule,
  listSchedules,
  removeSchedule,
  scheduleSnapshot,
  setSchedulePaused,
  showSchedule,
  triggerSchedule,
  updateSchedule,
} from '../../runtime/commands/schedule-commands.js';
import { formatTime } from '../../runtime/format.js';
import { storeExists, withCommandContext } from '../../runtime/open-store.js';
import { parsePositiveInt } from '../../runtime/parse-values.js';
import { parseTimeOption, type ScheduleOptions, scheduleRules } from '../../runtime/schedule-options.js';
import type { ScheduleSnapshot } from '../../runtime/schedule-update.js';
import {
  scheduleNotFound as noSchedule,
  previewFireTimes,
  type ScheduleView,
  scheduleRunsText,
} from '../../runtime/schedule-view.js';
import { parsePriority } from '../../runtime/settings.js';
import type { ScheduleSlot } from '../../runtime/types.js';
import { EXIT } from '../exit-codes.js';
import { printJson, table } from '../format.js';
import type { GlobalOptions } from '../global-options.js';
import { prepareRunFromCli } from '../prepare-run.js';

interface ScheduleCliOptions extends GlobalOptions, Omit<ScheduleOptions, 'priority'> {
  /** `--priority <0-9>` as given; the rules take it as a number. */
  priority?: string | number;
  input?: string[];
  workspace?: string;
  allowWorkspace?: string;
  agent?: string;
  plan?: string;
  /** `schedule update --live`: the runs from the next slot on are live (shadow: false). */
  live?: boolean;
  /** `-l key=value`, repeatable: the labels of its runs. */
  label?: string[];
}

/** The CLI's options once parsed: `--priority` as a number. */
type ParsedCliOptions = Omit<ScheduleCliOptions, 'priority'> & { priority?: number };

/** The options with `-l key=value` as the schedule's labels and `--priority` as a number. */
function withLabels(options: ScheduleCliOptions): ParsedCliOptions {
  const labelled =
    options.label === undefined ? options : { ...options, labels: parseLabels(options.label, '--label') };
  const { priority, ...rest } = labelled;
  return priority === undefined ? rest : { ...rest, priority: parsePriority(String(priority), '--priority') };
}

/** The plan snapshot of `schedule add` / `update`, checked before a store is opened. */
async function planSnapshot(planPath: string, options: ScheduleCliOptions): Promise<ScheduleSnapshot> {
  // Shadow and priority are the schedule's rules (applied to each slot's run), not its snapshot's.
  return scheduleSnapshot(
    await prepareRunFromCli(planPath, { ...options, id: undefined, shadow: false, priority: undefined }),
  );
}

/** `baton schedule add <name> <plan> (--cron … | --every …)`: stores the schedule with its plan snapshot. */
export async function scheduleAddCommand(name: string, planPath: string, cli: ScheduleCliOptions) {
  const options = withLabels(cli);
  // Name and timing checked before the plan, and all before a store is opened (or a home made).
  validateScheduleName(name);
  scheduleRules(options, Date.now());
  const snapshot = await planSnapshot(planPath, options);
  return withCommandContext(
    options,
    async (ctx) => printAdded(await addSchedule(ctx, { name, snapshot, options }), 'added', options.json),
    'write',
  );
}

/**
 * `baton schedule update <name> [--plan <file>] [timing and options]`: a new plan snapshot, or new
 * rules (the options given replace theirs; the others stay). Slots already decided stay decided.
 */
export async function scheduleUpdateCommand(name: string, cli: ScheduleCliOptions) {
  validateScheduleName(name);
  if (cli.live && cli.shadow)
    throw new BatonError('INVALID_ARGUMENT', '--live and --shadow: give one of them');
  const { live, ...rest } = withLabels(cli);
  const options: ParsedCliOptions = live ? { ...rest, shadow: false } : rest;
  if (!storeExists(options)) throw noSchedule(name);
  return withCommandContext(options, async (ctx) => {
    const { view } = await updateSchedule(ctx, {
      name,
      options,
      runOptionsGiven: Boolean(options.input || options.workspace),
      ...(options.plan ? { snapshot: () => planSnapshot(options.plan!, options) } : {}),
    });
    return printAdded(view, 'updated', options.json);
  });
}

/** `baton schedule list`: each schedule with its next three slots, last run and outcome, missed slots. */
export async function scheduleListCommand(options: GlobalOptions) {
  const views = storeExists(options) ? await withCommandContext(options, listSchedules) : [];
  if (options.json) printJson(views);
  else if (views.length === 0)
    process.stdout.write('no schedules yet: add one with baton schedule add <name> <plan> --cron "<expr>"\n');
  else process.stdout.write(`${scheduleTable(views)}\n`);
  return EXIT.ok;
}

/** `baton schedule show <name>`: one schedule with its slot history and their runs. */
export async function scheduleShowCommand(name: string, options: GlobalOptions & { limit?: string }) {
  if (!storeExists(options)) throw noSchedule(name);
  const limit = options.limit ? parsePositiveInt(options.limit, '--limit') : 20;
  return withCommandContext(options, async (ctx) => {
    const shown = await showSchedule(ctx, { name, limit });
    if (options.json) printJson(shown);
    else process.stdout.write(`${scheduleTable([shown])}\n\n${slotTable(shown.slots)}\n`);
    return EXIT.ok;
  });
}

export async function schedulePauseCommand(name: string, options: GlobalOptions) {
  return pausedOrNot(name, options, true);
}

export async function scheduleResumeCommand(name: string, options: GlobalOptions) {
  return pausedOrNot(name, options, false);
}

/** `baton schedule rm <name>`: the schedule and its slot history go; its runs stay. */
export async function scheduleRemoveCommand(name: string, options: GlobalOptions) {
  if (!storeExists(options)) throw noSchedule(name);
  const removed = await withCommandContext(options, (ctx) => removeSchedule(ctx, { name }));
  if (options.json) printJson(removed);
  else process.stdout.write(`schedule ${name}: removed (its runs stay)\n`);
  return EXIT.ok;
}

/** `baton schedule trigger <name>`: starts a run of it now, whatever its timing and overlap. */
export async function scheduleTriggerCommand(name: string, options: GlobalOptions) {
  if (!storeExists(options)) throw noSchedule(name);
  return withCommandContext(options, async (ctx) => {
    const run = await triggerSchedule(ctx, { name });
    if (options.json) printJson(run);
    else process.stdout.write(`schedule ${name}: started run ${run.id}; baton check (or a worker) runs it\n`);
    return EXIT.ok;
  });
}

/** `baton schedule preview --cron "<expr>" [--tz] [--from] [--count]`: when an expression fires. Opens no store. */
export async function schedulePreviewCommand(
  options: ScheduleCliOptions & { from?: string; count?: string },
) {
  const from = options.from === undefined ? Date.now() : parseTimeOption(options.from, '--from');
  const count = options.count === undefined ? 5 : parsePositiveInt(options.count, '--count', 1000);
  const rules = scheduleRules({ ...options, overlap: 'skip', priority: undefined }, from);
  const times = previewFireTimes(rules, from, count);
  if (options.json) {
    printJson(times);
    return EXIT.ok;
  }
  process.stdout.write(`${table(times.map((t) => [formatTime(Date.parse(t.at)), `${t.local} ${t.tz}`]))}\n`);
  return EXIT.ok;
}

/** `baton schedule pause|resume <name>`. */
async function pausedOrNot(name: string, options: GlobalOptions, paused: boolean): Promise<number> {
  if (!storeExists(options)) throw noSchedule(name);
  return withCommandContext(options, async (ctx) =>
    printAdded(await setSchedulePaused(ctx, { name, paused }), paused ? 'paused' : 'resumed', options.json),
  );
}

function printAdded(view: ScheduleView, verb: string, json: boolean | undefined): number {
  if (json) printJson(view);
  else {
    const next = view.nextFireTimes.map(formatTime).join(', ') || 'none';
    process.stdout.write(
      `schedule ${view.name} ${verb}: ${view.timing}, plan ${view.planName}${runsOf(view)}; next: ${next}\n`,
    );
  }
  return EXIT.ok;
}

/** What its runs are, when the schedule says (`--shadow`, `--live`). */
function runsOf(view: ScheduleView): string {
  const runs = scheduleRunsText(view.rules);
  return runs === '' ? '' : `, ${runs}`;
}

function scheduleTable(views: readonly ScheduleView[]): string {
  const rows = [['NAME', 'PLAN', 'WHEN', 'NEXT', 'LAST RUN', 'MISSED']];
  for (const v of views) {
    const next = v.paused ? 'paused' : v.nextFireTimes.map(formatTime).join(', ') || 'ended';
    const last = v.lastRun ? `${v.lastRun.id} (${v.lastRun.status ?? 'removed'})` : '-';
    const when = `${v.timing}, ${v.rules.overlap}${runsOf(v)}`;
    rows.push([v.name, v.planName, when, next, last, String(v.missedSlots)]);
  }
  return table(rows);
}

function slotTable(slots: readonly ScheduleSlot[]): string {
  if (slots.length === 0) return 'no slots yet';
  const rows = [['SLOT', 'OUTCOME', 'RUN', 'WHY']];
  for (const s of slots) {
    const when =
      s.count > 1
        ? `${formatTime(s.slotAt)} .. ${formatTime(s.lastSlotAt)} (${s.count})`
        : formatTime(s.slotAt);
    const run = s.runId ? `${s.runId} (${s.runStatus ?? 'removed'})` : '-';
    rows.push([when, s.manual ? 'triggered' : s.outcome, run, s.reason ?? '']);
  }
  return table(rows);
}
