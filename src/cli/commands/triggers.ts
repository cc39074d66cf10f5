import { parseLabels } from '../../core/labels.js';
import {
  parseTriggerSource,
  triggerNotFound,
  validateTriggerName,
} from '../../core/triggers/trigger-rules.js';
import {
  addTrigger,
  removeTrigger,
  setTriggerPaused,
  showTrigger,
} from '../../runtime/commands/trigger-commands.js';
import { formatTime } from '../../runtime/format.js';
import { storeExists, withCommandContext } from '../../runtime/open-store.js';
import { parsePositiveInt } from '../../runtime/parse-values.js';
import type { TriggerDelivery, TriggerSummary } from '../../runtime/types.js';
import { printJson, table } from '../format.js';
import type { GlobalOptions } from '../global-options.js';
import { prepareRunFromCli } from '../prepare-run.js';

interface TriggerCliOptions extends GlobalOptions {
  source: string;
  secretEnv: string;
  when?: string;
  input?: string[];
  propose?: boolean;
  label?: string[];
  workspace?: string;
  allowWorkspace?: string;
  agent?: string;
  limit?: string;
  priority?: string;
}

/** `baton trigger add <name> <plan> --source <kind> --secret-env <VAR>`: checked before a store is opened. */
export async function triggerAddCommand(name: string, planPath: string, options: TriggerCliOptions) {
  validateTriggerName(name);
  const source = parseTriggerSource(options.source);
  const labels = options.label ? parseLabels(options.label, '--label') : undefined;
  const prepared = await prepareRunFromCli(planPath, { ...options, id: undefined, shadow: false });
  const added = await withCommandContext(
    options,
    (ctx) =>
      addTrigger(ctx, {
        name,
        prepared,
        source,
        secretEnv: options.secretEnv,
        ...(options.when !== undefined ? { when: options.when } : {}),
        ...(options.propose ? { propose: true } : {}),
        ...(labels ? { labels } : {}),
      }),
    'write',
  );
  if (options.json) printJson(added);
  else {
    process.stdout.write(
      `trigger ${added.name} added: ${added.source} deliveries to POST /hooks/${added.name} start plan ${added.planName}${added.propose ? ' (proposed)' : ''}\n`,
    );
    if (process.env[added.secretEnv] === undefined)
      process.stderr.write(
        `baton: note: ${added.secretEnv} is not set here: baton serve needs it in its environment to verify deliveries\n`,
      );
  }
  return 0;
}

export async function triggerListCommand(options: GlobalOptions) {
  const triggers = storeExists(options)
    ? await withCommandContext(options, (ctx) => ctx.store.listTriggers())
    : [];
  if (options.json) printJson(triggers);
  else if (triggers.length === 0)
    process.stdout.write(
      'no triggers yet: add one with baton trigger add <name> <plan> --source github --secret-env <VAR>\n',
    );
  else
    process.stdout.write(
      `${table([
        ['NAME', 'SOURCE', 'PLAN', 'WHEN', 'STATE'],
        ...triggers.map((t) => [t.name, t.source, t.planName, t.when ?? '(every delivery)', stateOf(t)]),
      ])}\n`,
    );
  return 0;
}

export async function triggerShowCommand(name: string, options: TriggerCliOptions) {
  validateTriggerName(name);
  const limit = options.limit === undefined ? 20 : parsePositiveInt(options.limit, '--limit');
  if (!storeExists(options)) throw triggerNotFound(name);
  const shown = await withCommandContext(options, (ctx) => showTrigger(ctx, name, limit));
  if (options.json) {
    const { plan: _plan, ...trigger } = shown.trigger;
    printJson({ ...trigger, deliveries: shown.deliveries });
    return 0;
  }
  const t = shown.trigger;
  const lines = [
    `trigger ${t.name}: ${t.source} deliveries (secret in ${t.secretEnv}) to POST /hooks/${t.name}; ${stateOf(t)}`,
    `  plan ${t.planName}${t.propose ? ', runs proposed' : ''}; when ${t.when ?? 'every delivery'}`,
    ...Object.entries(t.inputs).map(([key, value]) => `  input ${key} = ${value}`),
    ...Object.entries(t.labels).map(([key, value]) => `  label ${key}=${value}`),
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
  if (shown.deliveries.length === 0) process.stdout.write('no deliveries yet\n');
  else
    process.stdout.write(
      `${table([
        ['RECEIVED', 'OUTCOME', 'DELIVERY', 'RUN', 'WHY'],
        ...shown.deliveries.map((d: TriggerDelivery) => [
          formatTime(d.receivedAt),
          d.outcome,
          d.deliveryId ?? '-',
          d.runId ?? '-',
          d.reason ?? '',
        ]),
      ])}\n`,
    );
  return 0;
}

export function triggerPauseCommand(name: string, options: GlobalOptions) {
  return changePaused(name, true, options);
}

export function triggerResumeCommand(name: string, options: GlobalOptions) {
  return changePaused(name, false, options);
}

async function changePaused(name: string, paused: boolean, options: GlobalOptions) {
  validateTriggerName(name);
  if (!storeExists(options)) throw triggerNotFound(name);
  const changed = await withCommandContext(options, (ctx) => setTriggerPaused(ctx, name, paused));
  if (options.json) printJson(changed);
  else process.stdout.write(`trigger ${name} ${paused ? 'paused' : 'resumed'}\n`);
  return 0;
}

export async function triggerRemoveCommand(name: string, options: GlobalOptions) {
  validateTriggerName(name);
  if (!storeExists(options)) throw triggerNotFound(name);
  await withCommandContext(options, (ctx) => removeTrigger(ctx, name));
  if (options.json) printJson({ removed: name });
  else process.stdout.write(`trigger ${name} removed (its runs stay)\n`);
  return 0;
}

function stateOf(trigger: TriggerSummary): string {
  return trigger.paused ? 'paused' : 'active';
}
