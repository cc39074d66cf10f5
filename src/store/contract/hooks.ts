import type { StoredEvent } from '../../core/events.js';
import type { HookSpec } from '../../core/plan/types.js';
import type { PlanSecretEnv } from '../../core/run-secrets.js';
import type { RunStatus } from '../../core/run-state.js';

// The hook outbox of the Store contract: a call owed once per matching event, written with the
// event, leased to one worker at a time, retried, then given up. When a call is due is one rule
// (store/hook-calls-due.ts). Contract suite: test/store-contract.ts ("hooks").

export interface HookStore {
  /** Leases up to `limit` hook calls that are due (each owed once per event, see hook_deliveries). */
  claimHookDeliveries(owner: string, now: number, leaseMs: number, limit: number): Promise<HookDelivery[]>;
  /** Records a hook call's result: done, due again at `retryAt`, or failed for good (`retryAt` null). */
  finishHookDelivery(
    key: HookDeliveryKey,
    result: { ok: true } | { ok: false; error: string; retryAt: number | null },
    now: number,
  ): Promise<void>;
}

export interface HookDeliveryKey {
  runId: string;
  eventSeq: number;
  /** Index of the hook in the plan's `hooks`. */
  hook: number;
}

/** A hook call owed for one event. */
export interface HookDelivery extends HookDeliveryKey {
  /** Calls already made (and failed). */
  attempts: number;
  spec: HookSpec;
  event: StoredEvent;
  planName: string;
  runStatus: RunStatus;
  blockedReason: string | null;
  /** The secret variables the run's plan names: withheld from a hook command, masked in its error. */
  secretEnv?: PlanSecretEnv;
}
