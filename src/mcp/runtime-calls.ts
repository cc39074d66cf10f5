/**
 * The runtime code the tools call, loaded by the first call that needs it rather than at start: a
 * host waits for `initialize` (and lists the tools) before it calls anything, so the server answers
 * that from the SDK and the tools' schemas alone.
 */

export { validateScheduleName } from '../core/schedule/schedule-rules.js';
export { RunSecretsCache } from '../engine/run-secrets-cache.js';
export { startRun } from '../engine/start-run.js';
export { attemptLogFile, readLogTail } from '../runtime/attempt-logs.js';
export { commandContext } from '../runtime/commands/context.js';
export { createEngine } from '../runtime/create-engine.js';
export { drainDueWork, needsAPerson } from '../runtime/due-work.js';
export { parseDurationOption } from '../runtime/parse-values.js';
export { planRunProblems, preparePlanRun } from '../runtime/plan-run.js';
export { DELAY_QUESTION, proposeRun } from '../runtime/proposal.js';
export {
  applyRunCommand,
  decideRun,
  decideWait,
  resolveRunStep,
  sendEventToWaits,
} from '../runtime/run-actions.js';
export { flowWaits, requireRun, requireRunSteps } from '../runtime/run-reads.js';
export { API_OPTION_NAMES, parseTimeOption, scheduleRules } from '../runtime/schedule-options.js';
export {
  describeSchedule,
  maskedForSchedule,
  SCHEDULE_QUESTION,
} from '../runtime/schedule-proposal.js';
export { updatedSchedule } from '../runtime/schedule-update.js';
export { previewFireTimes, scheduleViewOf } from '../runtime/schedule-view.js';
export { engineSettings } from '../runtime/settings.js';
export { resultOfText } from '../runtime/step-result-text.js';
export { eventDataJson } from '../runtime/wait-inputs.js';
export { scheduleNotFound } from '../store/schedules/schedule-rows.js';
export { parsePlanText } from '../workflow/parse-plan-text.js';
export { loadProjectPlanFile } from './plan-path.js';
