import { type ScheduleView, scheduleRunsText } from '../../runtime/schedule-view.js';
import type { ScheduleSlot } from '../../runtime/types.js';
import { consolePath, html, type SafeHtml } from '../html.js';
import { CSRF_FIELD } from '../session.js';
import { emptyRow, formatTime, statusBadge } from './parts.js';

/** One schedule action (pause, resume, trigger): a POST to /schedules/<name>/<action> with the CSRF token. */
function scheduleAction(name: string, action: 'pause' | 'resume' | 'trigger', label: string, csrf: string) {
  return html`<form method="post" action="${consolePath('schedules', name, action)}" class="action"><input type="hidden" name="${CSRF_FIELD}" value="${csrf}"><button type="submit" class="${action === 'trigger' ? 'primary' : ''}" data-action="${action}">${label}</button></form>`;
}

function slotRow(slot: ScheduleSlot): SafeHtml {
  const when =
    slot.count > 1
      ? `${formatTime(slot.slotAt)} .. ${formatTime(slot.lastSlotAt)} (${slot.count} slots)`
      : formatTime(slot.slotAt);
  const run = slot.runId
    ? html`<a href="${consolePath('runs', slot.runId)}">${slot.runId}</a> ${slot.runStatus ? statusBadge(slot.runStatus) : 'removed'}`
    : '-';
  return html`<tr data-slot="${slot.slotAt}"><td>${when}</td><td>${slot.outcome}</td><td>${run}</td><td>${slot.reason ?? ''}</td></tr>`;
}

/** Every schedule: its timing, next three slots, last run, and recent slots with their runs; pause/resume/trigger. */
export function schedulesPage(
  schedules: readonly { view: ScheduleView; slots: ScheduleSlot[] }[],
  csrf: string,
): SafeHtml {
  if (schedules.length === 0)
    return html`<h1>Schedules</h1><p class="note">no schedules: add one with baton schedule add &lt;name&gt; &lt;plan&gt; --cron "&lt;expr&gt;" --tz &lt;zone&gt;</p>`;
  const sections = schedules.map(({ view, slots }) => {
    const next = view.paused
      ? 'paused'
      : view.nextFireTimes.length > 0
        ? view.nextFireTimes.map(formatTime).join(', ')
        : 'no more slots';
    const last = view.lastRun
      ? html`<a href="${consolePath('runs', view.lastRun.id)}">${view.lastRun.id}</a> ${view.lastRun.status ? statusBadge(view.lastRun.status) : 'removed'}`
      : '-';
    const runsText = scheduleRunsText(view.rules);
    const runs = runsText === '' ? '' : `, ${runsText}`;
    const actions = html`${view.paused ? scheduleAction(view.name, 'resume', 'Resume', csrf) : scheduleAction(view.name, 'pause', 'Pause', csrf)}${scheduleAction(view.name, 'trigger', 'Run now', csrf)}`;
    return html`<section class="schedule" data-schedule="${view.name}"><h2>${view.name}</h2>
<dl><dt>Plan</dt><dd>${view.planName}</dd><dt>When</dt><dd>${view.timing}, overlap ${view.rules.overlap}${runs}</dd><dt>Next</dt><dd class="next">${next}</dd><dt>Last run</dt><dd>${last}</dd><dt>Missed</dt><dd>${view.missedSlots}</dd></dl>
<div class="actions">${actions}</div>
<table class="slots"><thead><tr><th>Slot</th><th>Outcome</th><th>Run</th><th>Why</th></tr></thead>
<tbody>${slots.length > 0 ? slots.map(slotRow) : emptyRow(4, 'no slot yet')}</tbody></table></section>`;
  });
  return html`<h1>Schedules</h1>${sections}`;
}
