import { z } from 'zod';
import { BatonError } from '../core/errors.js';
import type { Store } from '../store/store.js';
import type { McpContext } from './mcp-context.js';
import { defineTool, runSummaryOutput } from './tool-kit.js';
import { loadPlan, planSource, runOptions, stepList } from './tools-plans.js';
import { summaryOf } from './tools-runs.js';

/** The runtime, loaded by the first call (see runtime-calls.ts). */
const runtime = () => import('./runtime-calls.js');

/**
 * The tools on schedules: schedule_preview, schedule_list, schedule_show, schedule_add,
 * schedule_update, schedule_pause, schedule_resume, schedule_trigger, schedule_rm, each the runtime
 * call of the `baton schedule` command of the same job. A schedule added (or given a new plan)
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

/** The store holding `name`: where nothing was ever stored, the schedule is not found. */
async function storeOf(ctx: McpContext, name: string): Promise<Store> {
  const { scheduleNotFound, validateScheduleName } = await runtime();
  validateScheduleName(name);
  if (!ctx.hasStore()) throw scheduleNotFound(name);
  return ctx.store();
}

function refuseStartUnlessAllowed(start: boolean | undefined, ctx: McpContext): void {
  if (start && !ctx.options.allowRun)
    throw new BatonError(
      'INVALID_ARGUMENT',
      'start: true needs a server started with baton mcp --allow-run; leave it out: the schedule is stored paused and starts with schedule_resume after the person says yes',
    );
}

/** A plan handed in for a schedule, checked as propose checks it (a plan trusts nothing). */
async function snapshotOf(
  args: z.infer<z.ZodObject<typeof planSource & typeof scheduleOptions>>,
  ctx: McpContext,
) {
  const loaded = await loadPlan(args, ctx);
  const { preparePlanRun } = await runtime();
  const { prepared } = preparePlanRun(loaded, {
    home: ctx.home,
    env: ctx.env,
    inputs: args.inputs ?? {},
    ...(args.workspace ? { workspace: args.workspace } : {}),
  });
  return {
    plan: prepared.plan,
    planHash: prepared.planHash,
    inputs: prepared.inputs,
    workspace: prepared.workspace,
  };
}

/** The answer after a change: its view, and for the person the summary (and question while paused). */
async function scheduleAnswer(store: Store, name: string, ctx: McpContext, note?: string) {
  const { describeSchedule, maskedForSchedule, scheduleNotFound, scheduleViewOf, SCHEDULE_QUESTION } =
    await runtime();
  const now = ctx.now();
  const detail = await store.getSchedule(name);
  if (!detail) throw scheduleNotFound(name);
  const view = await scheduleViewOf(store, detail, now);
  const masking = { env: ctx.env, secretValues: ctx.secretValues };
  const { summary, firesAt } = describeSchedule(detail, now, masking, {
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
    schedule: maskedForSchedule(view, detail, masking),
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
      const { maskedForSchedule, scheduleViewOf } = await runtime();
      const store = await ctx.store();
      const masking = { env: ctx.env, secretValues: ctx.secretValues };
      const now = ctx.now();
      // Each view masked with its own plan's secret variables too (a hook's urlEnv, an apiKeyEnv),
      // as schedule_show masks it, so each schedule is read with its plan; one removed meanwhile is
      // left out.
      const masked = await Promise.all(
        (await store.listSchedules()).map(async ({ name }) => {
          const detail = await store.getSchedule(name);
          return detail ? maskedForSchedule(await scheduleViewOf(store, detail, now), detail, masking) : null;
        }),
      );
      return { schedules: masked.filter((view) => view !== null) };
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
      const store = await storeOf(ctx, name);
      const { maskedForSchedule, scheduleNotFound, scheduleViewOf } = await runtime();
      const detail = await store.getSchedule(name);
      if (!detail) throw scheduleNotFound(name);
      const view = await scheduleViewOf(store, detail, ctx.now());
      const slots = await store.listScheduleSlots(name, limit ?? 20);
      return maskedForSchedule({ ...view, slots }, detail, { env: ctx.env, secretValues: ctx.secretValues });
    },
  }),
  defineTool({
    name: 'schedule_add',
    description:
      'Store a schedule of a plan (checked as propose checks it), PAUSED: show the person the summary and ask its question; only after their yes call schedule_resume.',
    input: { name: nameField, ...planSource, ...scheduleOptions },
    output: changeOutput,
    call: async (args, ctx) => {
      const { API_OPTION_NAMES, scheduleRules, validateScheduleName } = await runtime();
      validateScheduleName(args.name);
      refuseStartUnlessAllowed(args.start, ctx);
      const now = ctx.now();
      const rules = scheduleRules(timingOf(args), now, API_OPTION_NAMES);
      const snapshot = await snapshotOf(args, ctx);
      const store = await ctx.store();
      await store.addSchedule({ name: args.name, ...snapshot, rules, now, paused: args.start !== true });
      return scheduleAnswer(store, args.name, ctx);
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
      const store = await storeOf(ctx, args.name);
      const { API_OPTION_NAMES, scheduleNotFound, updatedSchedule } = await runtime();
      const current = await store.getSchedule(args.name);
      if (!current) throw scheduleNotFound(args.name);
      const newPlan = args.plan !== undefined || args.path !== undefined;
      const spec = await updatedSchedule(current, {
        options: timingOf(args),
        runOptionsGiven: args.inputs !== undefined || args.workspace !== undefined,
        ...(newPlan ? { snapshot: () => snapshotOf(args, ctx) } : {}),
        now: ctx.now(),
        names: { ...API_OPTION_NAMES, plan: 'plan or path', runOptions: 'inputs and workspace' },
      });
      // A changed schedule is not what the person said yes to (a new plan, or a daily timing made
      // every second): it waits for their yes again, unless the server allows otherwise.
      const changed =
        newPlan ||
        args.inputs !== undefined ||
        args.workspace !== undefined ||
        Object.values(timingOf(args)).some((value) => value !== undefined);
      const paused = args.start ? false : changed ? true : undefined;
      await store.replaceSchedule({ ...spec, ...(paused === undefined ? {} : { paused }) });
      const note =
        paused && !current.paused
          ? 'The change paused the schedule: nothing runs until the person says yes (schedule_resume).'
          : undefined;
      return scheduleAnswer(store, args.name, ctx, note);
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
        const store = await storeOf(ctx, name);
        if (verb === 'pause') await store.pauseSchedule(name, ctx.now());
        else await store.resumeSchedule(name, ctx.now());
        return scheduleAnswer(store, name, ctx);
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
      const store = await storeOf(ctx, name);
      const { scheduleNotFound } = await runtime();
      const detail = await store.getSchedule(name);
      if (!detail) throw scheduleNotFound(name);
      // A paused schedule may be one the person never said yes to (schedule_add stores it paused).
      if (detail.paused && !ctx.options.allowRun)
        throw new BatonError(
          'INVALID_TRANSITION',
          `schedule ${name} is paused: it runs once the person says yes (schedule_resume), or they start one run themselves with baton schedule trigger ${name}`,
        );
      return summaryOf(await store.triggerSchedule(name, ctx.now()));
    },
  }),
  defineTool({
    name: 'schedule_rm',
    description: 'Remove a schedule and its slot history; the runs it started stay.',
    input: { name: nameField },
    output: { name: z.string(), removed: z.boolean() },
    destructive: true,
    call: async ({ name }, ctx) => {
      const store = await storeOf(ctx, name);
      const { scheduleNotFound } = await runtime();
      if (!(await store.removeSchedule(name))) throw scheduleNotFound(name);
      return { name, removed: true };
    },
  }),
];
