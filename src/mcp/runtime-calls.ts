/**
 * The runtime code the tools call, loaded by the first call that needs it rather than at start: a
 * host waits for `initialize` (and lists the tools) before it calls anything, so the server answers
 * that from the SDK and the tools' schemas alone. Every change is a command of the runtime
 * (runtime/commands/), every read goes through the command context's masked store.
 */

export { validateScheduleName } from '../core/schedule/schedule-rules.js';
export { triggerNotFound, validateTriggerName } from '../core/triggers/trigger-rules.js';
export { cancelRuns, retryBlocked } from '../runtime/commands/bulk-commands.js';
export { checkDueWork } from '../runtime/commands/check-commands.js';
export { fileChanges, rollbackRun } from '../runtime/commands/file-commands.js';
export { rerunRun } from '../runtime/commands/rerun-commands.js';
export {
  applyRunCommand,
  approvalDelayMs,
  decideRun,
  decideStep,
  decideToolCall,
  resolveStep,
  sendEvent,
} from '../runtime/commands/run-commands.js';
export {
  addSchedule,
  listSchedules,
  removeSchedule,
  scheduleSnapshot,
  setSchedulePaused,
  showSchedule,
  triggerSchedule,
  updateSchedule,
} from '../runtime/commands/schedule-commands.js';
export { prepareRun, startRun } from '../runtime/commands/start-commands.js';
export { addTrigger, setTriggerPaused, showTrigger } from '../runtime/commands/trigger-commands.js';
export { homePlans, namesUnknownPlans, withKnownPlans } from '../runtime/known-plans.js';
export { parseDurationOption } from '../runtime/parse-values.js';
export { planRunProblems } from '../runtime/plan-problems.js';
export { DELAY_QUESTION, proposeRun } from '../runtime/proposal.js';
export {
  flowWaits,
  requireRun,
  requireRunSteps,
  runChildren,
  waitingToolCalls,
} from '../runtime/run-reads.js';
export { API_OPTION_NAMES, parseTimeOption, scheduleRules } from '../runtime/schedule-options.js';
export { describeSchedule, SCHEDULE_QUESTION } from '../runtime/schedule-proposal.js';
export { previewFireTimes } from '../runtime/schedule-view.js';
export { engineSettings } from '../runtime/settings.js';
export { readStepLog } from '../runtime/step-log.js';
export { scheduleNotFound } from '../runtime/types.js';
export { parsePlanText } from '../workflow/parse-plan-text.js';
export { loadProjectPlanFile } from './plan-path.js';
