import type { FailureClass } from '../../core/failure.js';
import type { BlockedStep, RunDetail, RunSummary } from '../../runtime/types.js';
import { consolePath, html, type SafeHtml } from '../html.js';
import { CSRF_FIELD } from '../session.js';
import { actionForm, formatTime, statusBadge } from './parts.js';
import { approveForm } from './run-page.js';
import { resolveForm } from './step-page.js';
import { type ToolCallItem, toolCallItem, type WaitingItem, waitingItem } from './waiting-items.js';

/** What the operator should do about a step blocked with this class. */
function nextActionFor(failureClass: FailureClass | null): string {
  switch (failureClass) {
    case 'unknown_outcome':
      return 'An attempt with a side effect was cut off: check whether its effect happened, then resolve the step with what it did, or retry it.';
    case 'fatal':
      return 'Fix what was refused (credentials, permissions, the model name), then retry.';
    case 'invalid':
      return 'Fix the plan, its inputs or the step’s parameters, then retry, or skip the step.';
    case 'no_progress':
      return 'The same failure kept coming back: fix its cause, then retry.';
    case 'budget':
      return 'The step reached its budget: raise it or accept what it did (resolve), or skip it.';
    default:
      return 'Fix the cause, then retry; or skip the step, or resolve it with its result.';
  }
}

interface InboxView {
  blocked: BlockedStep[];
  /** Runs stopped by a run budget: resume gives them as many attempts again. */
  budgetBlocked: RunSummary[];
  proposed: RunDetail[];
  /** Steps waiting for a person or an event. */
  waiting: WaitingItem[];
  /** Tool calls running agents wait on a person for. */
  toolCalls: ToolCallItem[];
  csrf: string;
}

export function inboxPage(view: InboxView): SafeHtml {
  const { csrf } = view;
  const blocked = view.blocked.map((b) => {
    const stepPath = consolePath('runs', b.runId, 'steps', b.stepId);
    return html`<li class="inbox-item" data-run="${b.runId}" data-step="${b.stepId}"><div class="what"><input type="checkbox" name="run" value="${b.runId}" form="bulk-blocked" aria-label="select run ${b.runId}"> <a href="${stepPath}"><b>${b.stepId}</b></a> of run <a href="${consolePath('runs', b.runId)}">${b.runId}</a> (${b.planName}) ${statusBadge('blocked')} <span class="class">${b.failureClass ?? ''}</span> <span class="when">since ${formatTime(b.blockedAt)}, attempt ${b.attempt}</span></div>
<pre class="reason">${b.reason ?? ''}</pre><p class="next">${nextActionFor(b.failureClass)}</p>
<div class="actions">${actionForm(`${stepPath}/retry`, 'Retry', csrf, 'inbox', { kind: 'primary' })}${actionForm(`${stepPath}/skip`, 'Skip', csrf, 'inbox')}${resolveForm(stepPath, csrf, 'inbox')}${actionForm(consolePath('runs', b.runId, 'cancel'), 'Cancel run', csrf, 'inbox', { kind: 'danger' })}</div></li>`;
  });
  const budget = view.budgetBlocked.map(
    (
      run,
    ) => html`<li class="inbox-item" data-run="${run.id}"><div class="what">run <a href="${consolePath('runs', run.id)}">${run.id}</a> (${run.planName}) ${statusBadge(run.status)}</div>
<pre class="reason">${run.blockedReason ?? ''}</pre><p class="next">The run reached its budget: resume gives it as many attempts again.</p>
<div class="actions">${actionForm(consolePath('runs', run.id, 'resume'), 'Resume', csrf, 'inbox', { kind: 'primary' })}${actionForm(consolePath('runs', run.id, 'cancel'), 'Cancel run', csrf, 'inbox', { kind: 'danger' })}</div></li>`,
  );
  const proposed = view.proposed.map(
    (
      run,
    ) => html`<li class="inbox-item proposal" data-run="${run.id}"><div class="what">proposed plan <b>${run.planName}</b>, run <a href="${consolePath('runs', run.id)}">${run.id}</a>, ${run.steps.length} steps, ${formatTime(run.createdAt)}</div>
${run.plan.description ? html`<p>${run.plan.description}</p>` : ''}<ol class="proposal-steps">${run.plan.steps.map((s) => html`<li>${s.title}${s.dependsOn.length > 0 ? html` <span class="after">(after ${s.dependsOn.join(', ')})</span>` : ''}</li>`)}</ol>
<div class="actions">${approveForm(run.id, csrf, 'inbox')}</div></li>`,
  );
  const none = (text: string) => html`<p class="note empty">${text}</p>`;
  const waiting = view.waiting.map((item) => waitingItem(item, csrf));
  const toolCalls = view.toolCalls.map((item) => toolCallItem(item, csrf));
  return html`<h1>Blockers</h1>
${toolCalls.length > 0 ? html`<h2>Tool calls waiting <b class="count" id="tool-call-count">${toolCalls.length}</b></h2><ul class="inbox" id="tool-calls">${toolCalls}</ul>` : ''}
<h2>Waiting steps <b class="count" id="waiting-count">${view.waiting.length}</b></h2>${waiting.length > 0 ? html`<ul class="inbox" id="waiting">${waiting}</ul>` : none('no step waits for a person or an event')}
<h2>Blocked steps <b class="count" id="blocked-count">${view.blocked.length}</b></h2>${blocked.length > 0 ? html`${bulkForm(csrf)}<ul class="inbox" id="blocked">${blocked}</ul>` : none('nothing is blocked')}
${budget.length > 0 ? html`<h2>Runs stopped by their budget</h2><ul class="inbox" id="budget">${budget}</ul>` : ''}
<h2>Proposed plans <b class="count" id="proposed-count">${view.proposed.length}</b></h2>${proposed.length > 0 ? html`<ul class="inbox" id="proposed">${proposed}</ul>` : none('no plan waits for approval')}`;
}

/**
 * The blocked steps' multi-select: the runs ticked (each item's checkbox belongs to this form) have
 * every blocked step retried, or are cancelled, in one bulk command (runtime/commands/bulk-commands.ts).
 */
function bulkForm(csrf: string): SafeHtml {
  return html`<form id="bulk-blocked" method="post" action="/inbox/retry" class="bulk"><input type="hidden" name="${CSRF_FIELD}" value="${csrf}">With the runs ticked: <button type="submit" class="primary" data-action="retry-selected">Retry their blocked steps</button> <button type="submit" class="danger" formaction="/inbox/cancel" data-action="cancel-selected">Cancel them</button></form>`;
}
