/**
 * `baton-steps/store`: the stores and the storage contract, kept out of the package root. For code
 * that opens a store itself, to give it to `Baton.open({ store })` (a PostgreSQL schema of its
 * own, SQLite without fsync on every commit), and for code that implements a `Store`: the
 * interface and every type it names. The worker protocol (`cycle`, `renewLeases`) is part of that
 * contract, so it is here and not in the root.
 *
 * The stores are exported as their `open` functions, typed to answer a `Store`: the classes have
 * members of the driver's types (and more methods than the contract), and this `.d.ts` names
 * neither better-sqlite3's nor pg's types, so that a consumer type-checks without their `@types`.
 * Importing this loads no driver: better-sqlite3 loads with the first SQLite store, pg with the
 * first PostgreSQL one. test/package-exports.test.ts lists what is exported.
 */
import type { OpenPostgresOptions } from './store/postgres/open-postgres-options.js';
import { PostgresStore as PostgresStoreClass } from './store/postgres/postgres-store.js';
import type { OpenSqliteOptions } from './store/sqlite/open-sqlite-options.js';
import { SqliteStore as SqliteStoreClass } from './store/sqlite/sqlite-store.js';
import type { Store } from './store/store.js';

/** The embedded default store: one SQLite file, WAL, synchronous=FULL, writers serialized. */
export const SqliteStore: {
  /** Opens the SQLite file at `path`, creating it (mode 0600) and its schema if needed. */
  open(path: string, options?: OpenSqliteOptions): Store;
} = SqliteStoreClass;

/** The scale-out store: PostgreSQL, several workers on one schema. */
export const PostgresStore: {
  /**
   * Connects to `url` (`postgres://user:password@host:5432/db`) and creates or migrates Baton's
   * schema; rejects with a BatonError naming the server (never the password) when it cannot.
   */
  open(url: string, options?: OpenPostgresOptions): Promise<Store>;
} = PostgresStoreClass;

// Every type the contract names is exported here or by the root (plans, events, outcomes, run and
// step statuses): test/package-exports.test.ts walks `Store` to hold that.
export type { RandomSource } from './core/backoff.js';
export type { FlowLimit, FlowRate } from './core/flow.js';
export type { KeptStep } from './core/fork.js';
export type { RerunRequest, RerunSelection } from './core/rerun.js';
export type { CancelOptions } from './core/run-commands.js';
export type { PlanSecretEnv } from './core/run-secrets.js';
export type { StepState } from './core/run-state.js';
export type { OverlapPolicy, ScheduleRules, ScheduleTiming } from './core/schedule/schedule-rules.js';
export type { SlotOutcome, SlotRecord } from './core/schedule/schedule-tick.js';
export type { TriggerSource } from './core/triggers/trigger-rules.js';
export type { OpenPostgresOptions } from './store/postgres/open-postgres-options.js';
export type { OpenSqliteOptions } from './store/sqlite/open-sqlite-options.js';
export type {
  AppendGuard,
  AttemptKey,
  AttemptRecord,
  BlockedStep,
  BlockedStepFilter,
  BulkOutcome,
  BulkRetryTarget,
  ClaimedStep,
  ClaimStore,
  Completion,
  CycleRequest,
  CycleResult,
  EffectKey,
  EffectRecord,
  EffectStore,
  EndedAttempts,
  EndedUsage,
  EventStore,
  FinishedRunsBatch,
  FlowLimitStatus,
  FlowLimitStore,
  HookDelivery,
  HookDeliveryKey,
  HookStore,
  LiveLease,
  MetricsQuery,
  MetricsSnapshot,
  MetricsStore,
  NewRun,
  NewSchedule,
  NewTrigger,
  OverviewStore,
  ReclaimedAttempt,
  RerunSummary,
  RetentionStore,
  RunCommands,
  RunDetail,
  RunFilter,
  RunListQuery,
  RunPage,
  RunPageQuery,
  RunRef,
  RunSelectQuery,
  RunStep,
  RunStore,
  RunSummary,
  RunWithSteps,
  ScheduleDetail,
  ScheduleSlot,
  ScheduleStore,
  ScheduleSummary,
  StepSelection,
  Store,
  TriggerDelivery,
  TriggerDetail,
  TriggerStore,
  TriggerSummary,
  WaitingStep,
} from './store/store.js';
