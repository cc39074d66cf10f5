/**
 * The types the front doors (cli/, console/, mcp/, workflow/) read and render, re-exported from the
 * layers below: a door imports them from here, never from store/ or engine/ (biome's layer rules
 * refuse that), so what a door may touch is what the runtime hands it.
 */

export type { BlockedAction } from '../engine/blocked-urls.js';
export type { Engine, EngineOptions, EngineReport } from '../engine/engine.js';
export { emptyEngineReport } from '../engine/engine.js';
export { EngineMeter } from '../engine/engine-meter.js';
export type { WaitAction, WaitIdentity } from '../engine/wait-urls.js';
export type { EventDelivery } from '../store/cycle/send-event.js';
export { scheduleNotFound } from '../store/schedules/schedule-rows.js';
export type {
  AttemptRecord,
  BlockedStep,
  ClaimedStep,
  Completion,
  FlowLimitStatus,
  LiveLease,
  NewRun,
  NewSchedule,
  RerunSummary,
  RunDetail,
  RunListQuery,
  RunPage,
  RunPageQuery,
  RunSummary,
  RunWithSteps,
  ScheduleDetail,
  ScheduleSlot,
  ScheduleSummary,
  StepSelection,
  Store,
  TriggerDelivery,
  TriggerDetail,
  TriggerSummary,
  WaitingStep,
} from '../store/store.js';
export { NO_STEPS } from '../store/store.js';
