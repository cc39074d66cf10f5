import { redactSecrets, redactValue } from '../core/redact.js';
import { planSecretEnv, runSecrets } from '../core/run-secrets.js';
import { timingText } from '../core/schedule/slot-clock.js';
import type { ScheduleDetail } from '../store/store.js';
import { formatDuration, formatTime } from './format.js';
import { describePlanWork } from './proposal.js';
import { type FireTime, previewFireTimes } from './schedule-view.js';

/**
 * A schedule stored paused until a person says yes (the MCP server's schedule_add, or a new plan
 * through schedule_update), and the summary an agent shows them: when it fires, what each run does
 * and how to answer, with the secrets of the environment, `secretValues` and the plan masked.
 */

/** The question a schedule awaiting approval ends with. */
export const SCHEDULE_QUESTION =
  'Start this schedule? From then on each slot starts a run of this plan without asking again.';

/** How the person's answer is given: the tool calls that start or drop the schedule. */
export interface ScheduleAnswers {
  start: string;
  drop: string;
}

/** The slots shown in the summary of a schedule awaiting approval. */
const SLOTS_SHOWN = 3;

function rulesText(schedule: ScheduleDetail): string {
  const { rules } = schedule;
  const parts = [
    `overlap ${rules.overlap}`,
    `catch-up ${rules.catchUpMs === null ? 'none' : formatDuration(rules.catchUpMs)}`,
  ];
  if (rules.startAt !== null) parts.push(`from ${formatTime(rules.startAt)}`);
  if (rules.endAt !== null) parts.push(`until ${formatTime(rules.endAt)}`);
  return `${timingText(rules.timing)}; ${parts.join(', ')}`;
}

/** A slot as the person reads it: their wall clock, and UTC beside another zone's. */
function slotText(time: FireTime): string {
  const local = `${time.local} ${time.tz}`;
  return time.tz === 'UTC' ? local : `${local} (${formatTime(Date.parse(time.at))})`;
}

/** The secrets masked in what is said about a schedule: the environment's, `values`, its plan's. */
export function scheduleSecrets(
  schedule: ScheduleDetail,
  masking: { env: NodeJS.ProcessEnv; secretValues: readonly string[] },
): string[] {
  return runSecrets({ env: masking.env, values: masking.secretValues, plan: planSecretEnv(schedule.plan) });
}

/** `value` (a schedule's view: its inputs, workspace) with the schedule's secrets masked. */
export function maskedForSchedule<T>(
  value: T,
  schedule: ScheduleDetail,
  masking: { env: NodeJS.ProcessEnv; secretValues: readonly string[] },
): T {
  return redactValue(value, scheduleSecrets(schedule, masking));
}

/**
 * The summary of a stored schedule for the person, and its next slots were it started now (a
 * paused schedule has none of its own: resumed, it goes on from the first slot after then).
 */
export function describeSchedule(
  schedule: ScheduleDetail,
  now: number,
  masking: { env: NodeJS.ProcessEnv; secretValues: readonly string[] },
  answers: ScheduleAnswers,
): { summary: string; firesAt: FireTime[] } {
  const firesAt = previewFireTimes(schedule.rules, now, SLOTS_SHOWN);
  const state = schedule.paused ? 'stored paused: nothing runs until you say yes' : 'active';
  const lines = [
    `Schedule "${schedule.name}" of plan "${schedule.planName}": ${rulesText(schedule)}; ${state}.`,
    `Its next slots${schedule.paused ? ' once started' : ''}: ${firesAt.map(slotText).join(', ') || 'none'}`,
    `Each slot starts a run of ${schedule.plan.steps.length} steps:`,
    ...describePlanWork(schedule.plan, schedule.inputs, schedule.workspace),
  ];
  if (schedule.paused)
    lines.push('', SCHEDULE_QUESTION, `  start it:  ${answers.start}`, `  drop it:   ${answers.drop}`);
  const secrets = scheduleSecrets(schedule, masking);
  return { summary: redactSecrets(lines.join('\n'), secrets), firesAt };
}
