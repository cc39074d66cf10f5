import type { Plan } from '../../core/plan/types.js';
import type { TriggerSource } from '../../core/triggers/trigger-rules.js';

// The webhook triggers of the Store contract (core/triggers/). A trigger is stored with its plan
// snapshot, as a schedule is; a delivery starts its run through createRun under the run id the
// delivery names, so a redelivery (or the same delivery at two servers) finds the run. Deliveries
// are recorded, the newest DELIVERIES_KEPT per trigger. Contract suite:
// test/store-triggers-contract.ts.

/** The deliveries a trigger keeps (`baton trigger show`): older ones are dropped as new ones come. */
export const DELIVERIES_KEPT = 200;

/** A trigger to store (`baton trigger add`): its plan snapshot, as a run would be started. */
export interface NewTrigger {
  name: string;
  source: TriggerSource;
  /** The variable of `baton serve`'s environment holding the secret (never the secret). */
  secretEnv: string;
  /** `--when`: CEL over `event` and `body`; null: every delivery. */
  when: string | null;
  /** The run's inputs: templates over the delivery (`{{body.issue.title}}`), with the plan's defaults. */
  inputs: Record<string, string>;
  plan: Plan;
  planHash: string;
  workspace: string;
  /** `--propose`: its runs are stored awaiting approval. */
  propose: boolean;
  labels: Record<string, string>;
  /** Stored paused (one an agent added over MCP waits for the person's yes). */
  paused: boolean;
  now: number;
}

export interface TriggerSummary extends Omit<NewTrigger, 'plan' | 'now'> {
  planName: string;
  createdAt: number;
  updatedAt: number;
}

export interface TriggerDetail extends TriggerSummary {
  plan: Plan;
}

/** What became of one delivery. Never the secret, the signature or the body. */
export interface TriggerDelivery {
  trigger: string;
  /** The delivery id (the sender's, else a hash of the body); null when it was refused before one was read. */
  deliveryId: string | null;
  outcome: 'started' | 'duplicate' | 'filtered' | 'refused';
  runId: string | null;
  /** Why it was refused or filtered. */
  reason: string | null;
  receivedAt: number;
}

export interface TriggerStore {
  /** Stores a trigger; throws TRIGGER_EXISTS for a name in use. */
  addTrigger(spec: NewTrigger): Promise<TriggerSummary>;
  getTrigger(name: string): Promise<TriggerDetail | null>;
  /** Every trigger, by name. */
  listTriggers(): Promise<TriggerSummary[]>;
  /** Throws TRIGGER_NOT_FOUND for an unknown name. */
  setTriggerPaused(name: string, paused: boolean, now: number): Promise<TriggerSummary>;
  /** Removes a trigger and its deliveries (its runs stay); false when there was none. */
  removeTrigger(name: string): Promise<boolean>;
  /** Records a delivery, keeping the newest DELIVERIES_KEPT of its trigger. */
  recordTriggerDelivery(delivery: TriggerDelivery): Promise<void>;
  /** A trigger's deliveries, newest first, at most `limit` (default 20). */
  listTriggerDeliveries(name: string, limit?: number): Promise<TriggerDelivery[]>;
}
