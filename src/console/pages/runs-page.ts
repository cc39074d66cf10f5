import { BatonError } from '../../core/errors.js';
import { parseLabels } from '../../core/labels.js';
import { RUN_STATUSES, type RunStatus } from '../../core/run-state.js';
import { stepProgress } from '../../runtime/format.js';
import type { RunPage, RunPageQuery } from '../../runtime/types.js';
import { consolePath, html, type SafeHtml } from '../html.js';
import { emptyRow, firstLine, formatTime, statusBadge } from './parts.js';

const RUNS_PER_PAGE = 50;

/** `/?status=&plan=&from=&to=&q=&page=`: the filters of the runs list; refuses what it cannot read. */
export function runsQueryOf(params: URLSearchParams): { query: RunPageQuery; page: number } {
  const text = (name: string) => {
    const value = params.get(name)?.trim();
    return value === undefined || value === '' ? undefined : value;
  };
  const query: RunPageQuery = { limit: RUNS_PER_PAGE };
  const status = text('status');
  if (status !== undefined) {
    if (!(RUN_STATUSES as readonly string[]).includes(status))
      throw new BatonError(
        'INVALID_ARGUMENT',
        `status: unknown status "${status}" (known: ${RUN_STATUSES.join(', ')})`,
      );
    query.status = status as RunStatus;
  }
  const plan = text('plan');
  if (plan !== undefined) query.planName = plan;
  const q = text('q');
  if (q !== undefined) query.idContains = q;
  // `team=growth`, or several: `team=growth,env=prod` (every one must match).
  const label = text('label');
  if (label !== undefined) query.labels = parseLabels(label.split(','), 'label');
  const from = text('from');
  if (from !== undefined) query.createdFrom = dateOf(from, 'from');
  const to = text('to');
  // A day given alone ends the day after it: "to 2025-01-31" includes the 31st.
  if (to !== undefined)
    query.createdBefore = dateOf(to, 'to') + (/^\d{4}-\d{2}-\d{2}$/.test(to) ? 86_400_000 : 0);
  const pageText = text('page') ?? '1';
  if (!/^\d{1,6}$/.test(pageText) || Number(pageText) < 1)
    throw new BatonError('INVALID_ARGUMENT', `page: expected a page number from 1, got "${pageText}"`);
  const page = Number(pageText);
  query.offset = (page - 1) * RUNS_PER_PAGE;
  return { query, page };
}

function dateOf(value: string, name: string): number {
  const time = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2})?)?$/.test(value)
    ? Date.parse(`${value}${value.length === 10 ? 'T00:00:00Z' : 'Z'}`)
    : Number.NaN;
  if (Number.isNaN(time))
    throw new BatonError(
      'INVALID_ARGUMENT',
      `${name}: expected a UTC date such as 2025-01-31 or 2025-01-31T14:00, got "${value}"`,
    );
  return time;
}

/** The list page's link with one filter changed (and back to page 1 unless the page is what changes). */
function linkWith(params: URLSearchParams, changes: Record<string, string | null>): string {
  const next = new URLSearchParams(params);
  if (!('page' in changes)) next.delete('page');
  for (const [name, value] of Object.entries(changes)) {
    if (value === null) next.delete(name);
    else next.set(name, value);
  }
  const text = next.toString();
  return text === '' ? '/' : `/?${text}`;
}

export function runsPage(
  result: RunPage,
  page: number,
  params: URLSearchParams,
  labels: Readonly<Record<string, Record<string, string>>> = {},
): SafeHtml {
  const status = params.get('status') ?? '';
  const all = Object.values(result.counts).reduce((sum, n) => sum + (n ?? 0), 0);
  const chips = [
    html`<a class="chip${status === '' ? ' current' : ''}" href="${linkWith(params, { status: null })}" data-status="all">all <b>${all}</b></a>`,
    ...RUN_STATUSES.map(
      (s) =>
        html`<a class="chip status-${s}${status === s ? ' current' : ''}" href="${linkWith(params, { status: s })}" data-status="${s}">${s.replace('_', ' ')} <b>${result.counts[s] ?? 0}</b></a>`,
    ),
  ];
  const value = (name: string) => params.get(name) ?? '';
  const filters = html`<form class="filters" method="get" action="/">
<input type="hidden" name="status" value="${status}">
<label>Run id <input type="search" name="q" value="${value('q')}" placeholder="part of an id"></label>
<label>Plan <input type="text" name="plan" value="${value('plan')}" placeholder="exact plan name"></label>
<label>Label <input type="text" name="label" value="${value('label')}" placeholder="team=growth"></label>
<label>From <input type="text" name="from" value="${value('from')}" placeholder="2025-01-31"></label>
<label>To <input type="text" name="to" value="${value('to')}" placeholder="2025-01-31T18:00"></label>
<button type="submit">Filter</button> <a href="/">clear</a></form>`;
  const rows = result.runs.map(
    (run) => html`<tr data-run="${run.id}"><td><a href="${consolePath('runs', run.id)}">${run.id}</a></td>
<td><a href="${linkWith(params, { plan: run.planName })}">${run.planName}</a></td><td>${statusBadge(run.status)}</td>
<td>${stepProgress(run)}</td><td>${run.attemptsTotal}</td><td>${formatTime(run.createdAt)}</td><td>${formatTime(run.updatedAt)}</td>
<td class="reason">${firstLine(run.blockedReason, 100)}</td><td class="labels">${Object.entries(labels[run.id] ?? {}).map(([key, label]) => html`<a class="label" href="${linkWith(params, { label: `${key}=${label}` })}">${key}=${label}</a> `)}</td></tr>`,
  );
  const pages = Math.max(1, Math.ceil(result.total / RUNS_PER_PAGE));
  const pager = html`<nav class="pager">${page > 1 ? html`<a rel="prev" href="${linkWith(params, { page: String(page - 1) })}">← newer</a>` : ''}
<span>page ${page} of ${pages} · ${result.total} runs</span>${page < pages ? html`<a rel="next" href="${linkWith(params, { page: String(page + 1) })}">older →</a>` : ''}</nav>`;
  return html`<h1>Runs</h1><div class="chips" id="run-counts">${chips}</div>${filters}
<table class="runs" id="runs"><thead><tr><th>Run</th><th>Plan</th><th>Status</th><th>Steps done</th><th>Attempts</th><th>Created</th><th>Updated</th><th>Blocked</th><th>Labels</th></tr></thead>
<tbody>${rows.length > 0 ? rows : emptyRow(9, 'no runs match')}</tbody></table>${pager}`;
}
