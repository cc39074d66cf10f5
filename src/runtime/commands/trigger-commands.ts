import { BatonError, isBatonError } from '../../core/errors.js';
import { scanJsonText } from '../../core/json-text.js';
import { ENV_NAME_PATTERN } from '../../core/plan/types.js';
import {
  type DeliveryEvent,
  deliveryRunId,
  deliveryWanted,
  renderDeliveryInputs,
  type TriggerSource,
  triggerNotFound,
  triggerProblems,
  validateTriggerName,
} from '../../core/triggers/trigger-rules.js';
import type { TriggerDelivery, TriggerDetail, TriggerSummary } from '../../store/store.js';
import { type Headers, sha256Hex, verifyDelivery } from '../triggers/verify-delivery.js';
import type { CommandContext } from './context.js';
import type { PreparedRun } from './start-commands.js';
import { startRun } from './start-commands.js';

/**
 * Webhook triggers, the same for every door (`baton trigger ...`, the MCP server) and the one
 * place a delivery becomes a run (`POST /hooks/<name>` of `baton serve`): verified before anything
 * is read or stored, filtered by `--when`, started under `<name>-<delivery id>` so a redelivery,
 * or the same delivery at another server, finds the run it started.
 */

export interface AddTriggerRequest {
  name: string;
  /** The run as `prepareRun` prepared it (its inputs the templates, with the plan's defaults). */
  prepared: Pick<PreparedRun, 'run'>;
  source: TriggerSource;
  secretEnv: string;
  when?: string;
  propose?: boolean;
  labels?: Readonly<Record<string, string>>;
  /** Stored paused: a trigger an agent added (MCP) waits for the person's yes. */
  paused?: boolean;
}

/** `baton trigger add`: refused (nothing stored) for a bad name, variable, condition or template. */
export async function addTrigger(ctx: CommandContext, request: AddTriggerRequest): Promise<TriggerSummary> {
  validateTriggerName(request.name);
  if (!ENV_NAME_PATTERN.test(request.secretEnv) || request.secretEnv.length > 128)
    throw new BatonError(
      'INVALID_ARGUMENT',
      `--secret-env ${request.secretEnv}: give the NAME of the variable holding the secret (e.g. GITHUB_WEBHOOK_SECRET), never the secret itself`,
    );
  const { run } = request.prepared;
  const problems = triggerProblems(request.when ?? null, run.inputs);
  if (problems.length > 0) throw new BatonError('INVALID_ARGUMENT', problems.join('; '));
  return ctx.store.addTrigger({
    name: request.name,
    source: request.source,
    secretEnv: request.secretEnv,
    when: request.when ?? null,
    inputs: run.inputs,
    plan: run.plan,
    planHash: run.planHash,
    workspace: run.workspace,
    propose: request.propose === true,
    labels: { ...(request.labels ?? {}) },
    paused: request.paused === true,
    now: ctx.now(),
  });
}

/** A trigger with its recent deliveries (`baton trigger show`). */
export async function showTrigger(
  ctx: CommandContext,
  name: string,
  limit = 20,
): Promise<{ trigger: TriggerDetail; deliveries: TriggerDelivery[] }> {
  const trigger = await ctx.store.getTrigger(name);
  if (!trigger) throw triggerNotFound(name);
  return { trigger, deliveries: await ctx.store.listTriggerDeliveries(name, limit) };
}

export function setTriggerPaused(
  ctx: CommandContext,
  name: string,
  paused: boolean,
): Promise<TriggerSummary> {
  return ctx.store.setTriggerPaused(name, paused, ctx.now());
}

export async function removeTrigger(ctx: CommandContext, name: string): Promise<void> {
  if (!(await ctx.store.removeTrigger(name))) throw triggerNotFound(name);
}

/** One HTTP delivery: the trigger's name, its headers, and its raw body (null: over the limit). */
export interface Delivery {
  name: string;
  headers: Headers;
  body: Buffer | null;
}

/** What the server answers: a status and a JSON body (none for 204). */
export interface DeliveryAnswer {
  status: number;
  body?: Record<string, unknown>;
}

/**
 * A delivery to a trigger: 202 `{ runId }` for a new run, 200 with the same id for a redelivery
 * (nothing stored), 204 when `--when` filtered it out, 401 for a bad signature, 413 for a body over
 * 1 MiB, 503 for a paused trigger (or one whose secret variable is not set), 404 for an unknown
 * name, 400/422 for a body it cannot read. Every outcome but an unknown name is recorded.
 */
export async function deliver(ctx: CommandContext, delivery: Delivery): Promise<DeliveryAnswer> {
  const now = ctx.now();
  const trigger = await ctx.unmasked.getTrigger(delivery.name);
  if (!trigger) return { status: 404, body: { error: `no trigger named "${delivery.name}"` } };
  const record = async (
    outcome: TriggerDelivery['outcome'],
    answer: DeliveryAnswer,
    fields: { deliveryId?: string | null; runId?: string | null; reason?: string | null } = {},
  ): Promise<DeliveryAnswer> => {
    await ctx.unmasked.recordTriggerDelivery({
      trigger: trigger.name,
      deliveryId: fields.deliveryId ?? null,
      outcome,
      runId: fields.runId ?? null,
      reason: fields.reason ?? null,
      receivedAt: now,
    });
    return answer;
  };
  const refuse = (status: number, reason: string, deliveryId: string | null = null) =>
    record('refused', { status, body: { error: reason } }, { reason, deliveryId });

  if (delivery.body === null) return refuse(413, 'the body is over 1 MiB');
  const secret = ctx.env[trigger.secretEnv];
  if (secret === undefined || secret === '')
    return refuse(
      503,
      `the variable ${trigger.secretEnv} holding the secret is not set where baton serve runs`,
    );
  const verified = verifyDelivery(trigger.source, secret, delivery.headers, delivery.body, now);
  if (!verified.ok) return refuse(401, verified.reason);
  if (trigger.paused)
    return refuse(503, `trigger ${trigger.name} is paused (baton trigger resume ${trigger.name})`);

  const body = readBody(delivery.body, delivery.headers);
  if ('problem' in body) return refuse(400, body.problem);
  // Slack's Events API asks once, when the URL is set up, that the challenge be answered back.
  if (trigger.source === 'slack' && isRecord(body.value) && body.value.type === 'url_verification')
    return { status: 200, body: { challenge: String(body.value.challenge ?? '') } };

  const deliveryId =
    verified.deliveryId ?? bodyDeliveryId(trigger.source, body.value) ?? sha256Hex(delivery.body);
  const event: DeliveryEvent = {
    source: trigger.source,
    type: verified.type || bodyType(body.value),
    id: deliveryId,
  };
  const runId = deliveryRunId(trigger.name, deliveryId, sha256Hex);
  const duplicate = () =>
    record('duplicate', { status: 200, body: { runId, duplicate: true } }, { deliveryId, runId });
  const wanted = deliveryWanted(trigger.when, event, body.value);
  if ('invalid' in wanted) return refuse(422, wanted.invalid, deliveryId);
  if (!wanted.wanted)
    return record('filtered', { status: 204 }, { deliveryId, reason: `--when ${trigger.when}` });
  let inputs: Record<string, string>;
  try {
    inputs = renderDeliveryInputs(trigger.inputs, event, body.value);
  } catch (error) {
    return refuse(422, (error as Error).message, deliveryId);
  }
  // A redelivery (or the same delivery at another server) is found by the run id's conflict: no
  // read before the insert on the common path.
  const started = await startRun(ctx, {
    run: {
      id: runId,
      plan: trigger.plan,
      planHash: trigger.planHash,
      inputs,
      workspace: trigger.workspace,
      now,
      ...(trigger.propose ? { awaitingApproval: true } : {}),
      ...(Object.keys(trigger.labels).length > 0 ? { labels: trigger.labels } : {}),
    },
    idGiven: false,
  }).catch(async (error: unknown) => {
    // The run of that id differs (the trigger was replaced since): it is still that delivery's run.
    if (isBatonError(error, 'INVALID_ARGUMENT') && (await ctx.unmasked.getRun(runId))) return null;
    throw error;
  });
  if (started === null || !started.created) return duplicate();
  return record('started', { status: 202, body: { runId } }, { deliveryId, runId });
}

/** JSON, or a form (`a=1&payload={...}`, Slack's commands and actions); nesting bounded. */
function readBody(raw: Buffer, headers: Headers): { value: unknown } | { problem: string } {
  const text = raw.toString('utf8');
  const type = String(headers['content-type'] ?? '').toLowerCase();
  const looksJson = /^\s*[[{]/.test(text);
  if (type.startsWith('application/x-www-form-urlencoded') && !looksJson) {
    const fields: Record<string, unknown> = {};
    for (const [key, value] of new URLSearchParams(text)) fields[key] = value;
    if (typeof fields.payload !== 'string') return { value: fields };
    // GitHub's form deliveries and Slack's actions: the JSON is the `payload` field.
    const payload = readJson(fields.payload);
    if ('problem' in payload) return payload;
    return Object.keys(fields).length === 1 ? payload : { value: { ...fields, payload: payload.value } };
  }
  if (text.trim() === '') return { value: {} };
  return readJson(text);
}

function readJson(text: string): { value: unknown } | { problem: string } {
  if (scanJsonText(text)?.kind === 'too-deep') return { problem: 'the body nests deeper than 64 levels' };
  try {
    return { value: JSON.parse(text) };
  } catch {
    return { problem: 'the body is not JSON (nor a form)' };
  }
}

/** The sender's own delivery id in the body: Stripe's event id, Slack's event or trigger id. */
function bodyDeliveryId(source: TriggerSource, body: unknown): string | null {
  if (!isRecord(body)) return null;
  const candidates =
    source === 'stripe' ? [body.id] : source === 'slack' ? [body.event_id, body.trigger_id] : [];
  const found = candidates.find((value) => typeof value === 'string' && value !== '');
  return typeof found === 'string' ? found : null;
}

function bodyType(body: unknown): string {
  if (!isRecord(body)) return '';
  const event = isRecord(body.event) ? body.event.type : undefined;
  for (const value of [body.type, event, body.command])
    if (typeof value === 'string' && value !== 'event_callback') return value;
  return typeof body.type === 'string' ? body.type : '';
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
