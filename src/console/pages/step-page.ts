import type { StepResult } from '../../core/run-state.js';
import { verificationText } from '../../core/verify.js';
import { renderStepText } from '../../executors/render-step-text.js';
import type { AttemptWithSession } from '../../runtime/attempt-sessions.js';
import { CHANGE_MARKS, type StepFileChanges } from '../../runtime/file-changes.js';
import { agoText } from '../../runtime/last-output.js';
import type { ClaimedStep, RunDetail } from '../../runtime/types.js';
import { consolePath, html, type SafeHtml } from '../html.js';
import { actionForm, formatDuration, formatTime, statusBadge, usageText } from './parts.js';
import { waitAnswerForms } from './waiting-items.js';

export interface StepView {
  run: RunDetail;
  stepId: string;
  attempts: AttemptWithSession[];
  results: Record<string, StepResult>;
  /** The attempt whose log is shown, and its text (masked) when it has ended; null: none yet. */
  log: { attempt: number; live: boolean; text: string; truncated: boolean } | null;
  csrf: string;
  now: number;
  /** A running agent step: when it last printed (runtime/last-output.ts); absent: not known. */
  lastOutputAt?: number;
  /** What a checkpointed step (`checkpoint: workspace`) changed in the workspace; null: not checkpointed. */
  files?: StepFileChanges | null;
}

/** The step's prompt as its agent (or model) gets it, or the raw text with why it cannot be rendered yet. */
function renderedText(view: StepView): { label: string; text: string; note: string | null } {
  const step = view.run.plan.steps.find((s) => s.id === view.stepId)!;
  const raw =
    step.kind === 'agent'
      ? { label: 'Instruction', text: step.instruction ?? '' }
      : step.kind === 'model' && step.model
        ? { label: `Prompt (${step.model.provider} ${step.model.model})`, text: step.model.prompt }
        : step.kind === 'wait' && step.wait
          ? step.wait.for === 'approval'
            ? { label: 'Waits for approval', text: step.wait.prompt ?? `Approve step ${step.id}?` }
            : { label: 'Waits for event', text: step.wait.event ?? '' }
          : { label: 'Function', text: `${step.fn ?? ''}(${JSON.stringify(step.args ?? null)})` };
  if (step.kind === 'fn') return { ...raw, note: null };
  const claim = {
    runId: view.run.id,
    workspace: view.run.workspace,
    inputs: view.run.inputs,
    step,
  } as ClaimedStep;
  const rendered = renderStepText(raw.text, { claim, results: view.results });
  return rendered.ok
    ? { ...raw, text: rendered.text, note: null }
    : { ...raw, note: `not rendered yet: ${rendered.message}` };
}

export function stepPage(view: StepView): SafeHtml {
  const { run, stepId } = view;
  const state = run.steps.find((s) => s.stepId === stepId)!;
  const stepPath = consolePath('runs', run.id, 'steps', stepId);
  const text = renderedText(view);
  const wait = run.plan.steps.find((s) => s.id === stepId)?.wait;
  const actions =
    state.status === 'waiting' && wait
      ? waitAnswerForms(stepPath, wait.for, view.csrf, 'step')
      : state.status === 'blocked' || state.status === 'retry_wait'
        ? html`${actionForm(`${stepPath}/retry`, 'Retry', view.csrf, 'step', { kind: 'primary' })}${state.status === 'blocked' ? html`${actionForm(`${stepPath}/skip`, 'Skip', view.csrf, 'step')}${resolveForm(stepPath, view.csrf, 'step')}` : ''}`
        : html``;
  const attempts = [...view.attempts]
    .sort((a, b) => b.attempt - a.attempt)
    .map((a) => attemptBlock(stepPath, a));
  const result = state.resultJson ? (JSON.parse(state.resultJson) as StepResult) : null;
  return html`<p class="crumbs"><a href="${consolePath('runs', run.id)}">run ${run.id}</a> · plan ${run.planName}</p>
<h1>Step <span class="id">${stepId}</span> ${statusBadge(state.status)}</h1><p class="title">${state.title}</p>
${state.blockedReason ? html`<p class="blocked-reason">${state.blockedReason}</p>` : ''}
<div class="run-actions">${actions}</div>
<dl class="totals"><dt>Attempt</dt><dd>${state.attempt}</dd><dt>Tries</dt><dd>${state.tries}</dd><dt>Usage</dt><dd>${usageText(state.usage)}</dd>
<dt>Depends on</dt><dd>${state.dependsOn.length > 0 ? state.dependsOn.map((d, i) => html`${i > 0 ? ', ' : ''}<a href="${consolePath('runs', run.id, 'steps', d)}">${d}</a>`) : 'nothing'}</dd>
${state.onFallback ? html`<dt>Executor</dt><dd>its fallback</dd>` : ''}
${result?.verification ? html`<dt>Verification</dt><dd id="verification">${verificationText(result.verification)}</dd>` : ''}
${view.lastOutputAt !== undefined && state.status === 'running' ? html`<dt>Last output</dt><dd id="last-output">${agoText(view.now - view.lastOutputAt)} ago</dd>` : ''}</dl>
<h2>${text.label}</h2>${text.note ? html`<p class="note">${text.note}</p>` : ''}<pre class="prompt" id="prompt">${text.text}</pre>
${result ? html`<h2>Result</h2><pre class="result" id="result">${result.summary}</pre>` : ''}
${filesBlock(view.files ?? null)}
${logBlock(view, stepPath)}
<h2>Attempts</h2><div id="attempts">${attempts.length > 0 ? attempts : html`<p class="note">no finished attempt yet</p>`}</div>`;
}

/** The resolve form: a human says what the step came to (JSON, or plain text). */
export function resolveForm(stepPath: string, csrf: string, back: 'inbox' | 'step'): SafeHtml {
  const fields = html`<label class="result-box">Result <textarea name="result" rows="2" cols="30" placeholder='"sent", or {"id": 42}' required></textarea></label>`;
  return actionForm(`${stepPath}/resolve`, 'Resolve', csrf, back, { fields });
}

/** The files the step added (A), changed (M) and removed (D), and their unified diff. */
function filesBlock(files: StepFileChanges | null): SafeHtml {
  if (files === null) return html``;
  if (files.after === null)
    return html`<h2>Changed files</h2><p class="note">no attempt ended with a record of the files yet</p>`;
  const rows = files.changes.map(
    (c) => html`<tr><td class="change-${c.change}">${CHANGE_MARKS[c.change]}</td><td>${c.path}</td></tr>`,
  );
  return html`<h2>Changed files <span class="note">(attempt ${files.attempt})</span></h2>
${rows.length > 0 ? html`<table class="changed-files" id="changed-files"><tbody>${rows}</tbody></table>` : html`<p class="note">no file changed</p>`}
${files.patch !== '' ? html`<pre class="log" id="file-diff">${files.patch}</pre>` : ''}${files.truncated ? html`<p class="note">the diff is cut; baton diff --files --json has the same cut</p>` : ''}`;
}

function logBlock(view: StepView, stepPath: string): SafeHtml {
  if (view.log === null) return html`<h2>Log</h2><p class="note">no attempt log yet</p>`;
  const { attempt, live, text, truncated } = view.log;
  const logPath = `${stepPath}/attempts/${attempt}/log`;
  const stream = live ? html` data-log-stream="${logPath}/live"` : '';
  return html`<h2>Log of attempt ${attempt}${live ? html` <span class="status status-running">live</span>` : ''}</h2>
${truncated ? html`<p class="note">the end of the log; <a href="${logPath}">the whole log</a></p>` : html`<p class="note"><a href="${logPath}">raw log</a></p>`}
<pre class="log" id="log"${stream}>${text}</pre>`;
}

/** The agent CLI's session of an attempt: which, whether it continued the one before, why not. */
function sessionText(a: AttemptWithSession): string {
  if (!a.session) return '-';
  const { sessionId, resumed, reason } = a.session;
  return `${sessionId}${resumed ? ' (resumed the attempt before)' : ''}${reason ? ` (fresh: ${reason})` : ''}`;
}

function attemptBlock(stepPath: string, a: AttemptWithSession): SafeHtml {
  const outputs = a.outputs.map(
    (o) =>
      html`<tr><td><a href="${stepPath}/artifact?attempt=${a.attempt}&amp;path=${encodeURIComponent(o.path)}">${o.path}</a></td><td>${o.size.toLocaleString('en')} B</td><td><code>${o.sha256}</code></td></tr>`,
  );
  const took = a.startedAt !== null && a.endedAt !== null ? formatDuration(a.endedAt - a.startedAt) : '-';
  return html`<section class="attempt" data-attempt="${a.attempt}"><h3>Attempt ${a.attempt} ${statusBadge(a.outcome)}${a.failureClass ? html` <span class="class">${a.failureClass}</span>` : ''}</h3>
<dl class="totals"><dt>Started</dt><dd>${formatTime(a.startedAt)}</dd><dt>Took</dt><dd>${took}</dd><dt>Exit code</dt><dd>${a.exitCode ?? '-'}</dd>
<dt>Fingerprint</dt><dd><code>${a.fingerprint ?? '-'}</code></dd><dt>Usage</dt><dd>${usageText(a.usage)}</dd><dt>Worker</dt><dd>${a.owner ?? '-'}</dd>
${a.session ? html`<dt>Session</dt><dd class="session">${sessionText(a)}</dd>` : ''}
${a.logPath ? html`<dt>Log</dt><dd><a href="${stepPath}/attempts/${a.attempt}/log">attempt-${a.attempt}.log</a></dd>` : ''}</dl>
${a.message ? html`<pre class="message">${a.message}</pre>` : ''}${a.summary ? html`<pre class="summary">${a.summary}</pre>` : ''}
${outputs.length > 0 ? html`<table class="artifacts"><thead><tr><th>Artifact</th><th>Size</th><th>sha256</th></tr></thead><tbody>${outputs}</tbody></table>` : ''}</section>`;
}
