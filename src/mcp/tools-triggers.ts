import { z } from 'zod';
import { TRIGGER_SOURCES } from '../core/triggers/trigger-rules.js';
import type { CommandContext } from '../runtime/commands/context.js';
import type { McpContext } from './mcp-context.js';
import { defineTool } from './tool-kit.js';
import { loadPlan, planSource, runOptions } from './tools-plans.js';

/** The runtime, loaded by the first call (see runtime-calls.ts). */
const runtime = () => import('./runtime-calls.js');

/**
 * The tools on webhook triggers: trigger_add, trigger_list, trigger_show, trigger_pause and
 * trigger_resume, each a runtime command (trigger-commands.ts). A trigger added through MCP is
 * stored PAUSED, as a schedule is: no delivery starts a run until the person's yes, relayed with
 * trigger_resume. Removing one is the person's (baton trigger rm).
 */

const nameField = z.string().min(1).max(200).describe('the trigger name ([A-Za-z0-9_-], at most 24)');

const triggerView = z.looseObject({
  name: z.string(),
  source: z.string(),
  planName: z.string(),
  when: z.string().nullable(),
  paused: z.boolean(),
});

async function commandsOf(ctx: McpContext, name: string): Promise<CommandContext> {
  const { triggerNotFound, validateTriggerName } = await runtime();
  validateTriggerName(name);
  return ctx.existingCommands(() => triggerNotFound(name));
}

/** What the person is asked before a trigger starts runs. */
function question(view: { name: string; source: string; planName: string; when: string | null }): string {
  return `Trigger "${view.name}": ${view.source} deliveries to POST /hooks/${view.name} of baton serve start plan ${view.planName} (${view.when === null ? 'every delivery' : `when ${view.when}`}). It is paused: start runs from its deliveries? (yes: trigger_resume)`;
}

export const triggerTools = [
  defineTool({
    name: 'trigger_list',
    description: 'Every webhook trigger: its source, plan, condition, and whether it is paused.',
    input: {},
    output: { triggers: z.array(triggerView) },
    readOnly: true,
    call: async (_args, ctx) => {
      if (!ctx.hasStore()) return { triggers: [] };
      return { triggers: await (await ctx.commands()).store.listTriggers() };
    },
  }),
  defineTool({
    name: 'trigger_show',
    description:
      'One trigger and its recent deliveries, newest first: started (with the run), duplicate, filtered, refused (why). Never the secret or a signature.',
    input: {
      name: nameField,
      limit: z.number().int().min(1).max(200).optional().describe('how many deliveries (default 20)'),
    },
    output: { trigger: triggerView, deliveries: z.array(z.unknown()) },
    readOnly: true,
    call: async ({ name, limit }, ctx) => {
      const commands = await commandsOf(ctx, name);
      const { showTrigger } = await runtime();
      const { trigger, deliveries } = await showTrigger(commands, name, limit ?? 20);
      const { plan: _plan, ...view } = trigger;
      return { trigger: view, deliveries };
    },
  }),
  defineTool({
    name: 'trigger_add',
    description:
      "Store a webhook trigger of a plan (checked as propose checks it), PAUSED: signed deliveries to baton serve's POST /hooks/<name> will start runs of it once the person says yes (trigger_resume). secretEnv names the variable holding the secret in baton serve's environment, never the secret.",
    input: {
      name: nameField,
      ...planSource,
      source: z.enum(TRIGGER_SOURCES).describe('how deliveries are signed'),
      secretEnv: z
        .string()
        .min(1)
        .max(128)
        .describe(
          'the NAME of the variable holding the secret where baton serve runs, e.g. GITHUB_WEBHOOK_SECRET',
        ),
      when: z
        .string()
        .min(1)
        .max(4096)
        .optional()
        .describe('a CEL condition over event (type, id, source) and body, e.g. body.action == "opened"'),
      inputs: runOptions.inputs.describe(
        'the plan inputs: text, or templates over the delivery, e.g. {"title": "{{body.issue.title}}"}',
      ),
      workspace: runOptions.workspace,
      labels: runOptions.labels.describe('the labels of its runs, e.g. {"source": "github"}'),
      propose: z.boolean().optional().describe('store its runs awaiting approval'),
      priority: z
        .number()
        .int()
        .min(0)
        .max(9)
        .optional()
        .describe("claim priority of its runs' steps, 0 to 9, higher first"),
    },
    output: { trigger: triggerView, question: z.string() },
    call: async (args, ctx) => {
      const { addTrigger, prepareRun, validateTriggerName } = await runtime();
      validateTriggerName(args.name);
      const loaded = await loadPlan(args, ctx);
      const prepared = prepareRun(ctx.starting, {
        ...loaded,
        inputs: args.inputs ?? {},
        ...(args.workspace ? { workspace: args.workspace } : {}),
        ...(args.priority === undefined ? {} : { priority: args.priority }),
      });
      const added = await addTrigger(await ctx.commands(), {
        name: args.name,
        prepared,
        source: args.source,
        secretEnv: args.secretEnv,
        ...(args.when === undefined ? {} : { when: args.when }),
        ...(args.propose ? { propose: true } : {}),
        ...(args.labels ? { labels: args.labels } : {}),
        paused: true,
      });
      return { trigger: added, question: question(added) };
    },
  }),
  defineTool({
    name: 'trigger_pause',
    description: 'Pause a trigger: its deliveries are answered 503 (recorded) until it is resumed.',
    input: { name: nameField },
    output: { trigger: triggerView },
    call: async ({ name }, ctx) => {
      const { setTriggerPaused } = await runtime();
      return { trigger: await setTriggerPaused(await commandsOf(ctx, name), name, true) };
    },
  }),
  defineTool({
    name: 'trigger_resume',
    description:
      'Resume a trigger, after the person said yes to it: signed deliveries start runs from now on.',
    input: { name: nameField },
    output: { trigger: triggerView },
    call: async ({ name }, ctx) => {
      const { setTriggerPaused } = await runtime();
      return { trigger: await setTriggerPaused(await commandsOf(ctx, name), name, false) };
    },
  }),
];
