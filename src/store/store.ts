import type { ClaimStore } from './contract/claims.js';
import type { EffectStore } from './contract/effects.js';
import type { EventStore } from './contract/events.js';
import type { FlowLimitStore } from './contract/flow-limits.js';
import type { HookStore } from './contract/hooks.js';
import type { MetricsStore } from './contract/metrics.js';
import type { OverviewStore } from './contract/overview.js';
import type { RetentionStore } from './contract/retention.js';
import type { RunCommands } from './contract/run-commands.js';
import type { RunStore } from './contract/runs.js';
import type { ScheduleStore } from './contract/schedules.js';
import type { TriggerStore } from './contract/triggers.js';

export type { AttemptKey, AttemptRecord } from './contract/attempts.js';
export type {
  ClaimedStep,
  ClaimStore,
  Completion,
  CycleRequest,
  CycleResult,
  ReclaimedAttempt,
  RunFilter,
} from './contract/claims.js';
export type { EffectKey, EffectRecord, EffectStore } from './contract/effects.js';
export type { AppendGuard, EventDelivery, EventStore, SentEvent, WaitingStep } from './contract/events.js';
export type { FlowLimitStatus, FlowLimitStore } from './contract/flow-limits.js';
export type { HookDelivery, HookDeliveryKey, HookStore } from './contract/hooks.js';
export type { MetricsStore } from './contract/metrics.js';
export type {
  BlockedStep,
  BlockedStepFilter,
  LiveLease,
  OverviewStore,
  RunPage,
  RunPageQuery,
  RunRef,
  RunSelectQuery,
} from './contract/overview.js';
export type { FinishedRunsBatch, RetentionStore } from './contract/retention.js';
export {
  BULK_RUNS,
  type BulkOutcome,
  type BulkRetryTarget,
  type RerunSummary,
  type RunCommands,
} from './contract/run-commands.js';
export {
  type NewRun,
  NO_STEPS,
  type RunDetail,
  type RunListQuery,
  type RunStep,
  type RunStore,
  type RunSummary,
  type RunWithSteps,
  type StepSelection,
} from './contract/runs.js';
export type { ScheduleStore } from './contract/schedules.js';
export {
  DELIVERIES_KEPT,
  type NewTrigger,
  type TriggerDelivery,
  type TriggerDetail,
  type TriggerStore,
  type TriggerSummary,
} from './contract/triggers.js';
export type { EndedAttempts, EndedUsage, MetricsQuery, MetricsSnapshot } from './metrics-types.js';
export type {
  NewSchedule,
  ScheduleDetail,
  ScheduleSlot,
  ScheduleSummary,
} from './schedules/schedule-types.js';

/**
 * The one storage contract, by noun: each a small interface in contract/ with its contract suite
 * (runs, run commands, claims, waits and events, schedules, effects, hooks, flow limits, metrics,
 * the console's overview, retention). SQLite (sqlite/, the embedded default) and PostgreSQL
 * (postgres/) implement all of them and pass the same suites (test/store-*-contract.ts, run by
 * test/store-sqlite.test.ts and test/store-postgres.test.ts). The legacy state.json path
 * (src/legacy) does not use a Store.
 *
 * Every method that changes state does it in ONE transaction: the events and the new
 * materialized state are written together or not at all.
 */
export interface Store
  extends RunStore,
    RunCommands,
    ClaimStore,
    EventStore,
    ScheduleStore,
    TriggerStore,
    EffectStore,
    HookStore,
    FlowLimitStore,
    MetricsStore,
    OverviewStore,
    RetentionStore {
  readonly kind: 'sqlite' | 'postgres';
  /** Names this store among others on the machine (see store-id.ts): part of an attempt's process marker. */
  readonly id: string;
  close(): Promise<void>;
}
