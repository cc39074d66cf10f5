import { formatFlowRate } from '../../core/flow.js';
import type { FlowLimitStatus, LiveLease } from '../../runtime/types.js';
import { consolePath, html, type SafeHtml } from '../html.js';
import { emptyRow, formatDuration, formatTime } from './parts.js';

export function workersPage(limits: FlowLimitStatus[], leases: LiveLease[], now: number): SafeHtml {
  const limitRows = limits.map(
    (
      l,
    ) => html`<tr data-key="${l.key}"><td><code>${l.key}</code></td><td>${l.concurrency ?? '-'}</td><td>${l.running}</td>
<td>${l.rate ? formatFlowRate(l.rate) : '-'}</td><td>${l.rate ? l.recentStarts : '-'}</td><td>${formatTime(l.updatedAt)}</td></tr>`,
  );
  const owners = new Map<string, LiveLease[]>();
  for (const lease of leases) owners.set(lease.owner, [...(owners.get(lease.owner) ?? []), lease]);
  const leaseRows = leases.map((l) => {
    const left = l.leaseExpiresAt - now;
    return html`<tr data-owner="${l.owner}"><td><code>${l.owner}</code></td><td><a href="${consolePath('runs', l.runId)}">${l.runId}</a></td>
<td><a href="${consolePath('runs', l.runId, 'steps', l.stepId)}">${l.stepId}</a></td><td>${l.attempt}</td><td>${l.planName}</td><td><code>${l.flowKey ?? '-'}</code></td>
<td>${l.startedAt === null ? '-' : formatDuration(now - l.startedAt)}</td><td class="${left < 0 ? 'expired' : ''}">${left < 0 ? `expired ${formatDuration(-left)} ago` : `in ${formatDuration(left)}`}</td>
<td>${l.pid === null ? '-' : `${l.pid}${l.host ? ` on ${l.host}` : ''}`}</td></tr>`;
  });
  const ownerList = [...owners].map(
    ([owner, held]) => html`<li><code>${owner}</code>: ${held.length} running</li>`,
  );
  return html`<h1>Flow limits and workers</h1>
<h2>Flow limits</h2><table class="limits" id="limits"><thead><tr><th>Key</th><th>Concurrency</th><th>Running</th><th>Rate</th><th>Started in window</th><th>Set</th></tr></thead>
<tbody>${limitRows.length > 0 ? limitRows : emptyRow(6, 'no limits: set one with baton flow set <key> --concurrency <n>')}</tbody></table>
<h2>Workers <b class="count">${owners.size}</b></h2>${ownerList.length > 0 ? html`<ul class="owners" id="owners">${ownerList}</ul>` : html`<p class="note">no worker holds a lease now</p>`}
<h2>Live leases</h2><table class="leases" id="leases"><thead><tr><th>Owner</th><th>Run</th><th>Step</th><th>Attempt</th><th>Plan</th><th>Flow key</th><th>Running for</th><th>Lease ends</th><th>Process</th></tr></thead>
<tbody>${leaseRows.length > 0 ? leaseRows : emptyRow(9, 'nothing runs now')}</tbody></table>`;
}
