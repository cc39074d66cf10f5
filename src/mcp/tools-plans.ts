import { z } from 'zod';
import { classifyRequest } from '../core/classify-request.js';
import { BatonError } from '../core/errors.js';
import { PlanInvalidError } from '../core/plan/issues.js';
import type { Plan } from '../core/plan/types.js';
import type { McpContext } from './mcp-context.js';
import { defineTool } from './tool-kit.js';

/** The runtime, loaded by the first call (see runtime-calls.ts). */
const runtime = () => import('./runtime-calls.js');

/** The tools that judge a request or a plan and store runs: classify, validate_plan, propose, run. */

/** Plan text a tool accepts at most (a plan file may have 5 MB; one handed over in a call less). */
const MAX_PLAN_TEXT_CHARS = 1_000_000;

export const planSource = {
  plan: z
    .string()
    .min(1)
    .max(MAX_PLAN_TEXT_CHARS)
    .optional()
    .describe('the plan itself, YAML or JSON text (give this or path)'),
  path: z
    .string()
    .min(1)
    .max(4096)
    .optional()
    .describe(
      "a plan file's path inside the server's folder (relative to it) or its Baton home (give this or plan)",
    ),
};

/**
 * The plan of a call: from `plan` (text) or `path`, exactly one of them; a path only inside the
 * server's folder or its home, and a file that is not a plan never quoted (plan-path.ts).
 */
export async function loadPlan(
  args: { plan?: string | undefined; path?: string | undefined },
  ctx: McpContext,
) {
  if ((args.plan === undefined) === (args.path === undefined))
    throw new BatonError(
      'INVALID_ARGUMENT',
      'give the plan as text in "plan" or as a file in "path": one of them',
    );
  const { loadProjectPlanFile, parsePlanText, namesUnknownPlans, withKnownPlans, homePlans } =
    await runtime();
  const text = args.plan;
  const loaded: { plan: Plan; planPath?: string } =
    args.path !== undefined
      ? await loadProjectPlanFile(args.path, ctx.planFolders)
      : { plan: parsePlanText(text!, text!.trimStart().startsWith('{') ? 'plan.json' : 'plan.yaml') };
  // `plan: { name }` children: the plans this home knows (none where nothing was ever stored).
  if (!namesUnknownPlans(loaded.plan)) return loaded;
  const lookup = ctx.hasStore() ? homePlans((await ctx.commands()).store) : async () => null;
  return { ...loaded, plan: await withKnownPlans(loaded.plan, lookup) };
}

export const runOptions = {
  inputs: z
    .record(z.string().max(200), z.string().max(100_000))
    .optional()
    .describe('values of the inputs the plan declares, by name'),
  workspace: z
    .string()
    .min(1)
    .max(4096)
    .optional()
    .describe("the folder the agents work in (default: the plan's workspace, else the plan file's folder)"),
  labels: z
    .record(z.string().max(63), z.string().max(200))
    .optional()
    .describe('what the run is for, e.g. {"team": "growth"}: list_runs and the bulk tools find runs by it'),
  runId: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,64}$/)
    .optional()
    .describe(
      'use this run id instead of a generated one: the same run given again is answered as it is, another plan or inputs under it are refused',
    ),
  priority: z
    .number()
    .int()
    .min(0)
    .max(9)
    .optional()
    .describe(
      "claim priority of the run's steps, 0 to 9, higher first (default: the plan's priority, else 0)",
    ),
};

/** The run of a call, prepared as every door prepares one (runtime prepareRun): nothing stored yet. */
async function prepare(
  args: z.infer<z.ZodObject<typeof planSource & typeof runOptions>>,
  ctx: McpContext,
  awaitingApproval: boolean,
) {
  const loaded = await loadPlan(args, ctx);
  const { prepareRun } = await runtime();
  return prepareRun(ctx.starting, {
    ...loaded,
    inputs: args.inputs ?? {},
    ...(args.workspace ? { workspace: args.workspace } : {}),
    ...(args.runId ? { runId: args.runId } : {}),
    ...(args.labels ? { labels: args.labels } : {}),
    ...(args.priority === undefined ? {} : { priority: args.priority }),
    awaitingApproval,
  });
}

export function stepList(plan: Plan) {
  return plan.steps.map((step) => ({ id: step.id, title: step.title, dependsOn: step.dependsOn }));
}

export const planTools = [
  defineTool({
    name: 'classify',
    description:
      "Does this request need a multi-step plan? MULTI_STEP or SINGLE_STEP, with the criteria that fired (Baton's skill rule, English and Chinese).",
    input: { request: z.string().min(1).max(20_000).describe("the user's request, as they wrote it") },
    output: { verdict: z.enum(['MULTI_STEP', 'SINGLE_STEP']), fired: z.array(z.string()) },
    readOnly: true,
    call: async ({ request }) => {
      if (request.trim() === '')
        throw new BatonError('INVALID_ARGUMENT', 'request: give the request to classify');
      return { ...classifyRequest(request) };
    },
  }),
  defineTool({
    name: 'validate_plan',
    description:
      'Check a Baton plan without storing anything: every problem with its field path (steps.<id>.<field>), agent commands against the trust policy included.',
    input: { ...planSource, workspace: runOptions.workspace },
    output: {
      valid: z.boolean(),
      problems: z.array(
        z.looseObject({ path: z.string(), problem: z.string(), line: z.number().optional() }),
      ),
    },
    readOnly: true,
    call: async (args, ctx) => {
      let loaded: Awaited<ReturnType<typeof loadPlan>>;
      try {
        loaded = await loadPlan(args, ctx);
      } catch (error) {
        if (!(error instanceof PlanInvalidError)) throw error;
        return { valid: false, problems: error.issues };
      }
      const { planRunProblems } = await runtime();
      const problems = planRunProblems(ctx.starting, loaded, {
        ...(args.workspace ? { workspace: args.workspace } : {}),
      });
      return {
        valid: problems.length === 0,
        problems,
        plan: { name: loaded.plan.name, steps: stepList(loaded.plan) },
      };
    },
  }),
  defineTool({
    name: 'propose',
    description:
      'Store a plan as a run awaiting the person\'s approval; nothing runs yet. Show them the returned summary and ask its question ("wait between steps?"), then call approve_run or reject_run with their answer.',
    input: { ...planSource, ...runOptions },
    output: { runId: z.string(), status: z.string(), summary: z.string(), question: z.string() },
    call: async (args, ctx) => {
      const prepared = await prepare(args, ctx, true);
      const { DELAY_QUESTION, proposeRun } = await runtime();
      const runId = prepared.run.id;
      const { run, summary } = await proposeRun(await ctx.commands(), prepared, {
        approve: `approve_run { "runId": "${runId}" }`,
        approveWithDelay: `approve_run { "runId": "${runId}", "delay": "2m" }`,
        reject: `reject_run { "runId": "${runId}" }`,
      });
      return {
        runId: run.id,
        status: run.status,
        summary,
        question: DELAY_QUESTION,
        workspace: run.workspace,
        steps: stepList(run.plan),
      };
    },
  }),
];

/** `run`: only with `baton mcp --allow-run`, the operator's choice to let a host start work unasked. */
export const runTool = defineTool({
  name: 'run',
  description:
    'Store a plan as a running run at once, without asking the person (this server allows it: --allow-run). check (or a worker) drives it.',
  input: { ...planSource, ...runOptions },
  output: { runId: z.string(), status: z.string() },
  call: async (args, ctx) => {
    const prepared = await prepare(args, ctx, false);
    const { startRun } = await runtime();
    const { run, created } = await startRun(await ctx.commands(), prepared);
    return {
      runId: run.id,
      status: run.status,
      created,
      workspace: prepared.run.workspace,
      steps: stepList(prepared.run.plan),
    };
  },
});
