import { FINAL_RUN_STATUSES, type StepStatus } from '../../core/run-state.js';
import { staleSteps } from '../../core/stale-steps.js';
import { fanOutProgress } from '../../runtime/fan-out-progress.js';
import { stepProgress } from '../../runtime/format.js';
import type { ChildRun } from '../../runtime/run-reads.js';
import type { RunDetail } from '../../runtime/types.js';
import { consolePath, html, type SafeHtml } from '../html.js';
import { GRAPH_MAX_STEPS, planGraphSvg } from '../plan-graph.js';
import {
  actionForm,
  emptyRow,
  firstLine,
  formatDuration,
  formatTime,
  statusBadge,
  usageText,
} from './parts.js';

/** The approve button with the proposal's one question: wait between dependent steps? */
export function approveForm(runId: string, csrf: string, back: 'inbox' | 'run'): SafeHtml {
  const fields = html`<label class="delay">Wait before each step that follows another <input type="text" name="delay" value="" placeholder="none, or 30s, 2m" size="10"></label>`;
  return html`${actionForm(consolePath('runs', runId, 'approve'), 'Approve', csrf, back, { fields, kind: 'primary' })}${actionForm(consolePath('runs', runId, 'reject'), 'Reject', csrf, back, { kind: 'danger' })}`;
}

/** What can be done to the run as a whole now. */
function runActions(run: RunDetail, csrf: string): SafeHtml {
  if (run.status === 'awaiting_approval') return approveForm(run.id, csrf, 'run');
  if (FINAL_RUN_STATUSES.has(run.status)) return html``;
  const resume =
    run.status === 'blocked' && run.blockedReason?.startsWith('budget:')
      ? actionForm(consolePath('runs', run.id, 'resume'), 'Resume', csrf, 'run', { kind: 'primary' })
      : html``;
  return html`${resume}${actionForm(consolePath('runs', run.id, 'cancel'), 'Cancel', csrf, 'run', { kind: 'danger' })}`;
}

/** Steps that ran and may be done again: rerun from them (not in a cancelled run), or fork from them. */
const DONE_AGAIN: ReadonlySet<StepStatus> = new Set(['succeeded', 'degraded', 'skipped', 'blocked']);

/** Rerun from a step and fork from it (`baton rerun`, `baton fork`), for a step that ran. */
function doAgainActions(
  run: RunDetail,
  step: RunDetail['steps'][number],
  stepPath: string,
  csrf: string,
): SafeHtml {
  if (!DONE_AGAIN.has(step.status) || run.status === 'awaiting_approval') return html``;
  const rerun =
    run.status === 'cancelled'
      ? html``
      : actionForm(`${stepPath}/rerun`, 'Rerun from here', csrf, 'run', {
          fields: html`<label class="only"><input type="checkbox" name="only"> only this step</label>`,
        });
  return html`${rerun}${actionForm(`${stepPath}/fork`, 'Fork from here', csrf, 'run')}`;
}

export function runPage(
  run: RunDetail,
  csrf: string,
  now: number,
  children: readonly ChildRun[] = [],
): SafeHtml {
  const wall = (run.finishedAt ?? now) - run.createdAt;
  const stale = new Set(staleSteps(run));
  const stepRows = run.steps.map((step) => {
    const stepPath = consolePath('runs', run.id, 'steps', step.stepId);
    const actions =
      step.status === 'blocked' || step.status === 'retry_wait'
        ? html`${actionForm(`${stepPath}/retry`, 'Retry', csrf, 'run', { kind: 'primary' })}${step.status === 'blocked' ? actionForm(`${stepPath}/skip`, 'Skip', csrf, 'run') : ''}${doAgainActions(run, step, stepPath, csrf)}`
        : doAgainActions(run, step, stepPath, csrf);
    const due =
      step.dueAt !== null && (step.status === 'ready' || step.status === 'retry_wait')
        ? formatTime(step.dueAt)
        : '';
    return html`<tr data-step="${step.stepId}"><td><a href="${stepPath}">${step.stepId}</a></td><td>${step.title}</td><td>${statusBadge(step.status)}${stale.has(step.stepId) ? html` <span class="stale" title="rests on an older result of a step before it: rerun from it">stale</span>` : ''}</td>
<td>${step.attempt}</td><td>${due}</td><td class="reason">${firstLine(step.blockedReason ?? step.lastError)}</td><td class="actions">${actions}</td></tr>`;
  });
  const inputs = Object.entries(run.inputs).map(
    ([name, value]) => html`<dt>${name}</dt><dd><pre>${value}</pre></dd>`,
  );
  // A fan-out is drawn as its one group node with its items' progress, not as its items.
  const groups = new Map(
    fanOutProgress(run.plan, run.steps).map((p) => [
      p.groupId,
      `${p.done}/${p.total} done, ${p.running} running${p.blocked > 0 ? `, ${p.blocked} blocked` : ''}`,
    ]),
  );
  const drawn = run.steps
    .filter((_, position) => run.plan.steps[position]?.forEachItem === undefined)
    .map((step) => (groups.has(step.stepId) ? { ...step, note: groups.get(step.stepId)! } : step));
  const graph =
    drawn.length <= GRAPH_MAX_STEPS
      ? planGraphSvg(run.id, drawn)
      : html`<p class="note">${drawn.length} steps: too many to draw; see the table below.</p>`;
  return html`<h1>Run <span class="id">${run.id}</span> ${statusBadge(run.status)}</h1>
<p class="plan-name">plan <a href="/?plan=${encodeURIComponent(run.planName)}">${run.planName}</a>${run.plan.description ? html` — ${run.plan.description}` : ''}${run.plan.shadow ? ' · shadow run' : ''}</p>
${run.plan.parent ? html`<p class="parent-run">child of run <a href="${consolePath('runs', run.plan.parent.runId)}">${run.plan.parent.runId}</a> (its step ${run.plan.parent.stepId})</p>` : ''}
${children.length > 0 ? html`<ul class="child-runs">${children.map((child) => html`<li>step ${child.stepId} waits on child run <a href="${consolePath('runs', child.runId)}">${child.runId}</a> ${statusBadge(child.status)}${child.blockedReason ? html` <span class="reason">${firstLine(child.blockedReason)}</span>` : ''}</li>`)}</ul>` : ''}
${run.plan.forkedFrom ? html`<p class="forked-from">forked from run <a href="${consolePath('runs', run.plan.forkedFrom.runId)}">${run.plan.forkedFrom.runId}</a> at step ${run.plan.forkedFrom.stepId}</p>` : ''}
${run.blockedReason ? html`<p class="blocked-reason">${run.blockedReason}</p>` : ''}
<div class="run-actions">${runActions(run, csrf)}</div>
<dl class="totals" id="totals"><dt>Steps done</dt><dd>${stepProgress(run)}</dd><dt>Attempts</dt><dd>${run.attemptsTotal}</dd>
<dt>Usage</dt><dd>${usageText(run.usage)}</dd><dt>Wall time</dt><dd>${formatDuration(wall)}${run.finishedAt === null ? ' so far' : ''}</dd>
<dt>Created</dt><dd>${formatTime(run.createdAt)}</dd><dt>Finished</dt><dd>${formatTime(run.finishedAt)}</dd></dl>
<h2>Plan</h2><div class="graph-box" id="graph">${graph}</div>
<h2>Timeline</h2><div class="timeline" id="timeline" data-src="${consolePath('runs', run.id, 'timeline.json')}" data-run="${run.id}"><p class="note">drawing…</p></div>
<ul class="legend"><li class="k-succeeded">succeeded</li><li class="k-failed">failed</li><li class="k-interrupted">interrupted</li><li class="k-running">running</li><li class="k-wait">retry wait</li><li class="k-fallback">fallback attempt</li><li class="m-recovery">recovery</li><li class="m-fallback">fallback / degraded</li><li class="m-budget">budget</li><li class="m-blocked">blocked</li><li class="m-human">human action</li><li class="m-skipped">skipped by the plan (when, rejection, timeout)</li></ul>
<h2>Steps</h2><table class="steps" id="steps"><thead><tr><th>Step</th><th>Title</th><th>Status</th><th>Attempt</th><th>Due</th><th>Reason / last error</th><th></th></tr></thead>
<tbody>${stepRows.length > 0 ? stepRows : emptyRow(7, 'no steps')}</tbody></table>
<h2>Inputs and workspace</h2><dl class="inputs" id="inputs">${inputs.length > 0 ? inputs : html`<dt>inputs</dt><dd>none</dd>`}<dt>workspace</dt><dd><code>${run.workspace}</code></dd></dl>`;
}
