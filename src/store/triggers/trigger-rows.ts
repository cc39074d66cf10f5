import { BatonError } from '../../core/errors.js';
import type { Plan } from '../../core/plan/types.js';
import type { TriggerSource } from '../../core/triggers/trigger-rules.js';

export { triggerNotFound } from '../../core/triggers/trigger-rules.js';

import type { NewTrigger, TriggerDelivery, TriggerDetail, TriggerSummary } from '../contract/triggers.js';

/** The rows of triggers and their deliveries, the same in both dialects (store/contract/triggers.ts). */

export const TRIGGER_COLUMNS =
  'name, source, secret_env, when_expr, inputs_json, plan_name, plan_hash, workspace, propose, labels_json, paused, created_at, updated_at';

export const DELIVERY_COLUMNS = 'trigger, delivery_id, outcome, run_id, reason, received_at';

export interface TriggerRow {
  name: string;
  source: string;
  secret_env: string;
  when_expr: string | null;
  inputs_json: string;
  plan_name: string;
  plan_hash: string;
  workspace: string;
  propose: number | boolean;
  labels_json: string;
  paused: number | boolean;
  created_at: number | string;
  updated_at: number | string;
  plan_json?: string;
}

export interface DeliveryRow {
  trigger: string;
  delivery_id: string | null;
  outcome: TriggerDelivery['outcome'];
  run_id: string | null;
  reason: string | null;
  received_at: number | string;
}

/** The values of a new trigger's row, in TRIGGER_COLUMNS order then plan_json. */
export function triggerValues(spec: NewTrigger): unknown[] {
  return [
    spec.name,
    spec.source,
    spec.secretEnv,
    spec.when,
    JSON.stringify(spec.inputs),
    spec.plan.name,
    spec.planHash,
    spec.workspace,
    spec.propose,
    JSON.stringify(spec.labels),
    spec.paused,
    spec.now,
    spec.now,
    JSON.stringify(spec.plan),
  ];
}

export function triggerFromRow(row: TriggerRow): TriggerSummary {
  return {
    name: row.name,
    source: row.source as TriggerSource,
    secretEnv: row.secret_env,
    when: row.when_expr,
    inputs: JSON.parse(row.inputs_json) as Record<string, string>,
    planName: row.plan_name,
    planHash: row.plan_hash,
    workspace: row.workspace,
    propose: row.propose === true || row.propose === 1,
    labels: JSON.parse(row.labels_json) as Record<string, string>,
    paused: row.paused === true || row.paused === 1,
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
  };
}

export function triggerDetailFromRow(row: TriggerRow & { plan_json: string }): TriggerDetail {
  return { ...triggerFromRow(row), plan: JSON.parse(row.plan_json) as Plan };
}

export function deliveryFromRow(row: DeliveryRow): TriggerDelivery {
  return {
    trigger: row.trigger,
    deliveryId: row.delivery_id,
    outcome: row.outcome,
    runId: row.run_id,
    reason: row.reason,
    receivedAt: Number(row.received_at),
  };
}

export function deliveryValues(delivery: TriggerDelivery): unknown[] {
  return [
    delivery.trigger,
    delivery.deliveryId,
    delivery.outcome,
    delivery.runId,
    delivery.reason,
    delivery.receivedAt,
  ];
}

export function triggerExists(name: string): BatonError {
  return new BatonError(
    'TRIGGER_EXISTS',
    `a trigger named "${name}" exists already: remove it first with baton trigger rm ${name}, or choose another name`,
  );
}
