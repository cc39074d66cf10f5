import { z } from 'zod';
import { BatonError } from '../core/errors.js';
import type { CommandContext } from '../runtime/commands/context.js';
import type { ScheduleView } from '../runtime/schedule-view.js';
import type { McpContext } from './mcp-context.js';
import { defineTool, runSummaryOutput } from './tool-kit.js';
import { loadPlan, planSource, runOptions, stepList } from './tools-plans.js';
import { summaryOf } from './tools-runs.js';

/** The runtime, loaded by the first call (see runtime-calls.ts). */
const runtime = () => import('./runtime-calls.js');

/**
 * The tools on schedules: schedule_preview, schedule_list, schedule_show, schedule_add,
 * schedule_update, schedule_pause, schedule_resume, schedule_trigger, schedule_rm, each a runtime
 * command (schedule-commands.ts), whose answers are masked by each schedule's plan. A schedule added (or given a new plan)
 * through MCP is stored paused: no slot starts a run until the person's yes, relayed with
 * schedule_resume; `start: true` stores it active, only on a server started with --allow-run.
 */

const nameField = z.string().min(1).max(200).describe('the schedule name ([A-Za-z0-9_-], at most 40)');

const timing = {
  cron: z
    .string()
    .min(1)
    .max(200)
    .optional()
    .describe(
      'a cron expression ([second] minute hour day-of-month month day-of-week), e.g. "0 8 * * *"; at most once a minute; give it or every',
    ),
  tz: z
    .string()
    .min(1)
    .max(100)
    .optional()
    .describe('the IANA time zone of cron, e.g. "Asia/Shanghai" (default UTC)'),
  every: z
    .string()
    .min(1)
    .max(50)
    .optional()
    .describe('a fixed interval instead of cron, e.g. "5m", "15m"; 1m or more'),
};

const scheduleOptions = {
  ...timing,
  overlap: z
    .enum(['skip', 'queue', 'allow'])
    .optional()
    .describe('a slot while the previous run still goes: skip (default), queue or allow'),
  catchUp: z
    .string()
    .min(1)
    .max(50)
    .optional()
    .describe(
      'missed slots of this window start after downtime, e.g. "5m" (default 1h); "none": only the latest',
    ),
  startAt: z.string().min(1).max(100).optional().describe('no slot before this time (ISO 8601)'),
  endAt: z.string().min(1).max(100).optional().describe('no slot after this time (ISO 8601)'),
  inputs: runOptions.inputs,
  workspace: runOptions.workspace,
  labels: runOptions.labels.describe('the labels of its runs, e.g. {"team": "growth"}'),
  priority: runOptions.priority.describe(
    "the claim priority of its runs, 0 to 9, higher first (default: the plan's priority, else 0)",
  ),
  shadow: z
    .boolean()
    .optional()
    .describe(
      'its runs are shadow runs (true: side effects recorded, not executed) or live ones (false), whatever the plan says',
    ),
  start: z
    .boolean()
    .optional()
    .describe(
      'store it active at once: only on a server started with --allow-run (default: paused until the person says yes)',
    ),
};

/** A schedule as `baton schedule list --json` gives it. */
const scheduleView = z.looseObject({
  name: z.string(),
  planName: z.string(),
  paused: z.boolean(),
  timing: z.string(),
  nextFireTimes: z.array(z.number()),
  missedSlots: z.number(),
});

const fireTimes = z.array(z.object({ at: z.string(), local: z.string(), tz: z.string() }));

/** The commands on the store holding `name`: where nothing was ever stored, the schedule is not found. */
async function commandsOf(ctx: McpContext, name: string): Promise<CommandContext> {
  const { scheduleNotFound, validateScheduleName } = await runtime();
  validateScheduleName(name);
  return ctx.existingCommands(() => scheduleNotFound(name));
}

function refuseStartUnlessAllowed(start: boolean | undefined, ctx: McpContext): void {
  if (start && !ctx.options.allowRun)
    throw new BatonError(
      'INVALID_ARGUMENT',
      'start: true needs a server started with baton mcp --allow-run; leave it out: the schedule is stored paused and starts with schedule_resume after the person says yes',
    );
}

/** A plan handed in for a schedule, checked as propose checks it (a plan trusts nothing); nothing stored. */
async function snapshotOf(
  args: z.infer<z.ZodObject<typeof planSource & typeof scheduleOptions>>,
  ctx: McpContext,
) {
  const loaded = await loadPlan(args, ctx);
  const { prepareRun, scheduleSnapshot } = await runtime();
  return scheduleSnapshot(
    prepareRun(ctx.starting, {
      ...loaded,
      inputs: args.inputs ?? {},
      ...(args.workspace ? { workspace: args.workspace } : {}),
    }),
  );
}

/** The answer after a change: its view, and for the person the summary (and question while paused). */
async function scheduleAnswer(commands: CommandContext, view: ScheduleView, note?: string) {
  const { describeSchedule, scheduleNotFound, SCHEDULE_QUESTION } = await runtime();
  const { name } = view;
  // The schedule with its plan, as the masking boundary answers it.
  const detail = await commands.store.getSchedule(name);
  if (!detail) throw scheduleNotFound(name);
  const { summary, firesAt } = describeSchedule(detail, commands.now(), commands, {
    start: `schedule_resume { "name": "${name}" }`,
    drop: `schedule_rm { "name": "${name}" }`,
  });
  return {
    name,
    paused: detail.paused,
    summary: note ? `${note}\n${summary}` : summary,
    ...(detail.paused ? { question: SCHEDULE_QUESTION } : {}),
    firesAt,
    steps: stepList(detail.plan),
    schedule: view,
  };
}

const changeOutput = { name: z.string(), paused: z.boolean(), summary: z.string(), schedule: scheduleView };

const TIMING_KEYS = ['cron', 'tz', 'every', 'overlap', 'catchUp', 'startAt', 'endAt'] as const;

/** The timing options given: the fields of these tools are named as ScheduleOptions (and its messages). */
function timingOf(args: Partial<Record<(typeof TIMING_KEYS)[number], string | undefined>>) {
  const options: Record<string, string> = {};
  for (const key of TIMING_KEYS) if (args[key] !== undefined) options[key] = args[key];
  return options;
}

/** The rules given: the timing, and whether its runs are shadow runs. */
function rulesOf(
  args: Parameters<typeof timingOf>[0] & {
    shadow?: boolean | undefined;
    labels?: Record<string, string> | undefined;
    priority?: number | undefined;
  },
) {
  return {
    ...timingOf(args),
    ...(args.shadow === undefined ? {} : { shadow: args.shadow }),
    ...(args.labels === undefined ? {} : { labels: args.labels }),
    ...(args.priority === undefined ? {} : { priority: args.priority }),
  };
}

export const scheduleTools = [
  defineTool({
    name: 'schedule_preview',
    description:
      'When a timing fires, without storing anything: the next count (default 5, at most 100) slots after from (default now), in UTC and local time.',
    input: {
      ...timing,
      from: z.string().min(1).max(100).optional().describe('start from this time (ISO 8601; default now)'),
      count: z.number().int().min(1).max(100).optional().describe('how many slots (default 5, at most 100)'),
    },
    output: { fireTimes },
    readOnly: true,
    call: async (args, ctx) => {
      const { API_OPTION_NAMES, parseTimeOption, previewFireTimes, scheduleRules } = await runtime();
      const from = args.from === undefined ? ctx.now() : parseTimeOption(args.from, 'from');
      const rules = scheduleRules(timingOf(args), from, API_OPTION_NAMES);
      return { fireTimes: previewFireTimes(rules, from, args.count ?? 5) };
    },
  }),
  defineTool({
    name: 'schedule_list',
    description:
      'Every schedule with its next three slots (ms since the epoch), last run and its status, and missed slots, as baton schedule list --json.',
    input: {},
    output: { schedules: z.array(scheduleView) },
    readOnly: true,
    call: async (_args, ctx) => {
      if (!ctx.hasStore()) return { schedules: [] };
      const { listSchedules } = await runtime();
      return { schedules: await listSchedules(await ctx.commands()) };
    },
  }),
  defineTool({
    name: 'schedule_show',
    description:
      'One schedule with its slot history, newest first (started with its run, skipped, queued, missed).',
    input: {
      name: nameField,
      limit: z.number().int().min(1).max(100).optional().describe('how many slots (default 20, at most 100)'),
    },
    output: { name: z.string(), paused: z.boolean(), slots: z.array(z.unknown()) },
    readOnly: true,
    call: async ({ name, limit }, ctx) => {
      const commands = await commandsOf(ctx, name);
      const { showSchedule } = await runtime();
      return { ...(await showSchedule(commands, { name, ...(limit === undefined ? {} : { limit }) })) };
    },
  }),
  defineTool({
    name: 'schedule_add',
    description:
      'Store a schedule of a plan (checked as propose checks it), PAUSED: show the person the summary and ask its question; only after their yes call schedule_resume.',
    input: { name: nameField, ...planSource, ...scheduleOptions },
    output: changeOutput,
    call: async (args, ctx) => {
      const { API_OPTION_NAMES, addSchedule, scheduleRules, validateScheduleName } = await runtime();
      validateScheduleName(args.name);
      refuseStartUnlessAllowed(args.start, ctx);
      // The timing and the plan are checked before a store is opened (and so made) for them.
      scheduleRules(rulesOf(args), ctx.now(), API_OPTION_NAMES);
      const snapshot = await snapshotOf(args, ctx);
      const commands = await ctx.commands();
      const view = await addSchedule(commands, {
        name: args.name,
        snapshot,
        options: rulesOf(args),
        names: API_OPTION_NAMES,
        paused: args.start !== true,
      });
      return scheduleAnswer(commands, view);
    },
  }),
  defineTool({
    name: 'schedule_update',
    description:
      'Change a schedule: a new plan (plan or path) and/or timing and options; what is not given stays. Any change pauses it until the person says yes to the changed schedule (schedule_resume).',
    input: {
      name: nameField,
      plan: planSource.plan.describe('a new plan, YAML or JSON text (or path; neither: the plan stays)'),
      path: planSource.path,
      ...scheduleOptions,
    },
    output: changeOutput,
    call: async (args, ctx) => {
      refuseStartUnlessAllowed(args.start, ctx);
      const commands = await commandsOf(ctx, args.name);
      const { API_OPTION_NAMES, updateSchedule } = await runtime();
      const newPlan = args.plan !== undefined || args.path !== undefined;
      // A changed schedule is not what the person said yes to (a new plan, or a daily timing made
      // every second): it waits for their yes again, unless the server allows otherwise.
      const changed =
        newPlan ||
        args.inputs !== undefined ||
        args.workspace !== undefined ||
        Object.values(rulesOf(args)).some((value) => value !== undefined);
      const paused = args.start ? false : changed ? true : undefined;
      const { view, wasPaused } = await updateSchedule(commands, {
        name: args.name,
        options: rulesOf(args),
        runOptionsGiven: args.inputs !== undefined || args.workspace !== undefined,
        ...(newPlan ? { snapshot: () => snapshotOf(args, ctx) } : {}),
        names: { ...API_OPTION_NAMES, plan: 'plan or path', runOptions: 'inputs and workspace' },
        ...(paused === undefined ? {} : { paused }),
      });
      const note =
        paused && !wasPaused
          ? 'The change paused the schedule: nothing runs until the person says yes (schedule_resume).'
          : undefined;
      return scheduleAnswer(commands, view, note);
    },
  }),
  ...(['pause', 'resume'] as const).map((verb) =>
    defineTool({
      name: `schedule_${verb}`,
      description:
        verb === 'pause'
          ? 'Pause a schedule: no slot starts a run until it is resumed (its running runs go on).'
          : "Start or resume a schedule, relaying the person's yes: it goes on from the first slot after now.",
      input: { name: nameField },
      output: changeOutput,
      call: async ({ name }, ctx) => {
        const commands = await commandsOf(ctx, name);
        const { setSchedulePaused } = await runtime();
        const view = await setSchedulePaused(commands, { name, paused: verb === 'pause' });
        return scheduleAnswer(commands, view);
      },
    }),
  ),
  defineTool({
    name: 'schedule_trigger',
    description:
      "Start one run of an active schedule now, whatever its timing, relaying the person's request; check (or a worker) drives it. A paused one needs the person's yes first (schedule_resume).",
    input: { name: nameField },
    output: runSummaryOutput,
    call: async ({ name }, ctx) => {
      const commands = await commandsOf(ctx, name);
      const { triggerSchedule } = await runtime();
      // A paused schedule may be one the person never said yes to (schedule_add stores it paused).
      return summaryOf(await triggerSchedule(commands, { name, activeOnly: !ctx.options.allowRun }));
    },
  }),
  defineTool({
    name: 'schedule_rm',
    description: 'Remove a schedule and its slot history; the runs it started stay.',
    input: { name: nameField },
    output: { name: z.string(), removed: z.boolean() },
    destructive: true,
    call: async ({ name }, ctx) => {
      const commands = await commandsOf(ctx, name);
      const { removeSchedule } = await runtime();
      return { ...(await removeSchedule(commands, { name })) };
    },
  }),
];
