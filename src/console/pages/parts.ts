import { formatDuration, formatTime } from '../../runtime/format.js';
import { usageText } from '../../runtime/usage-text.js';
import { html, type SafeHtml } from '../html.js';
import { CSRF_FIELD } from '../session.js';

export { formatDuration, formatTime, usageText };

export function statusBadge(status: string): SafeHtml {
  return html`<span class="status status-${status}">${status.replace('_', ' ')}</span>`;
}

/** Where an action returns to: the page it was clicked on. */
type ReturnTo = 'inbox' | 'run' | 'step';

/**
 * One action button: a POST form carrying the CSRF token and the page to come back to. `fields`
 * are extra inputs (already escaped markup, e.g. a delay box).
 */
export function actionForm(
  action: string,
  label: string,
  csrf: string,
  back: ReturnTo,
  options: { fields?: SafeHtml; kind?: 'danger' | 'primary' } = {},
): SafeHtml {
  return html`<form method="post" action="${action}" class="action"><input type="hidden" name="${CSRF_FIELD}" value="${csrf}"><input type="hidden" name="back" value="${back}">${options.fields ?? ''}<button type="submit" class="${options.kind ?? ''}" data-action="${label.toLowerCase()}">${label}</button></form>`;
}

/** Long text cut for a table cell; the full text is on the step page. */
export function firstLine(text: string | null | undefined, max = 160): string {
  if (!text) return '';
  const line = text.split('\n')[0]!;
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

export function emptyRow(columns: number, text: string): SafeHtml {
  return html`<tr><td colspan="${columns}" class="empty">${text}</td></tr>`;
}
