import type { ToolAction } from '../../runtime/capability-urls.js';
import type { RunToolCall } from '../../runtime/run-reads.js';
import type { WaitAction, WaitingStep } from '../../runtime/types.js';
import { consolePath, html, type SafeHtml } from '../html.js';
import { actionForm, formatTime, statusBadge } from './parts.js';

/** A waiting step as the inbox shows it: what it waits for, and its capability URLs. */
export interface WaitingItem {
  step: WaitingStep;
  kind: 'approval' | 'event';
  /** Shown to the operator only (the inbox is behind the session): anyone holding one can answer. */
  urls: Partial<Record<WaitAction, string>>;
}

/** The inbox's entry for a waiting step: approve / reject with a comment, or the event's payload. */
export function waitingItem(item: WaitingItem, csrf: string): SafeHtml {
  const { step, kind } = item;
  const stepPath = consolePath('runs', step.runId, 'steps', step.stepId);
  const what =
    kind === 'approval'
      ? html`<pre class="reason prompt">${step.waitingFor}</pre>`
      : html`<p class="next">Waits for event <code>${step.waitingFor}</code>.</p>`;
  const actions = waitAnswerForms(stepPath, kind, csrf, 'inbox');
  const urls = Object.entries(item.urls).map(
    ([action, url]) => html`<li><b>${action}</b> <code class="capability-url">${url}</code></li>`,
  );
  return html`<li class="inbox-item waiting" data-run="${step.runId}" data-step="${step.stepId}"><div class="what"><a href="${stepPath}"><b>${step.stepId}</b></a> of run <a href="${consolePath('runs', step.runId)}">${step.runId}</a> (${step.planName}) ${statusBadge('waiting')} <span class="when">since ${formatTime(step.since)}${step.timeoutAt !== null ? `, times out ${formatTime(step.timeoutAt)}` : ''}</span></div>
${what}<div class="actions">${actions}</div>
<details class="capability-urls"><summary>Capability URLs (POST; anyone holding one can answer, once)</summary><ul>${urls}</ul></details></li>`;
}

/** The answers to a waiting step: approve / reject with a comment, or send its event with a payload. */
export function waitAnswerForms(
  stepPath: string,
  kind: 'approval' | 'event',
  csrf: string,
  back: 'inbox' | 'step',
): SafeHtml {
  const comment = html`<label class="result-box">Comment <input type="text" name="comment" size="30"></label>`;
  if (kind === 'approval')
    return html`${actionForm(`${stepPath}/approve`, 'Approve', csrf, back, { kind: 'primary', fields: comment })}${actionForm(`${stepPath}/reject`, 'Reject', csrf, back, { kind: 'danger', fields: comment })}`;
  return actionForm(`${stepPath}/send`, 'Send', csrf, back, {
    kind: 'primary',
    fields: html`<label class="result-box">Payload (JSON) <textarea name="payload" rows="2" cols="30" placeholder='{"version": "1.2"}'></textarea></label>`,
  });
}

/** A tool call a running agent waits on a person for (`agent.approve`), as the inbox shows it. */
export interface ToolCallItem {
  call: RunToolCall;
  /** Its capability URLs (the inbox is behind the session): anyone holding one can answer. */
  urls: Partial<Record<ToolAction, string>>;
}

/** The inbox's entry for a held tool call: what the agent wants to do; approve or reject with a comment. */
export function toolCallItem(item: ToolCallItem, csrf: string): SafeHtml {
  const { call } = item;
  const stepPath = consolePath('runs', call.runId, 'steps', call.stepId);
  const fields = html`<input type="hidden" name="tool" value="${call.callId}"><label class="result-box">Comment <input type="text" name="comment" size="30"></label>`;
  const urls = Object.entries(item.urls).map(
    ([action, url]) => html`<li><b>${action}</b> <code class="capability-url">${url}</code></li>`,
  );
  return html`<li class="inbox-item tool-call" data-run="${call.runId}" data-step="${call.stepId}" data-call="${call.callId}"><div class="what"><a href="${stepPath}"><b>${call.stepId}</b></a> of run <a href="${consolePath('runs', call.runId)}">${call.runId}</a> (${call.planName}) ${statusBadge('running')} <span class="when">asked ${formatTime(call.requestedAt)}, denied unanswered ${formatTime(call.timeoutAt)}</span></div>
<p class="next">Its agent waits in its session to use <b>${call.tool}</b> (call <code>${call.callId}</code>):</p><pre class="reason prompt">${call.summary}</pre>
<div class="actions">${actionForm(`${stepPath}/approve-tool`, 'Approve', csrf, 'inbox', { kind: 'primary', fields })}${actionForm(`${stepPath}/reject-tool`, 'Reject', csrf, 'inbox', { kind: 'danger', fields })}</div>
${urls.length > 0 ? html`<details class="capability-urls"><summary>Capability URLs (POST; anyone holding one can answer, once)</summary><ul>${urls}</ul></details>` : ''}</li>`;
}
