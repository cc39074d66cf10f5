import { type BatonErrorCode, isBatonError } from '../../core/errors.js';
import { html, type SafeHtml } from '../html.js';

const STATUS_OF: Partial<Record<BatonErrorCode, number>> = {
  RUN_NOT_FOUND: 404,
  STEP_NOT_FOUND: 404,
  INVALID_TRANSITION: 409,
  PATH_ESCAPE: 403,
};

/** The HTTP status of a refused request: bad input 400 unless its code says otherwise; a bug 500. */
export function statusOfError(error: unknown): number {
  return isBatonError(error) ? (STATUS_OF[error.code] ?? 400) : 500;
}

export function errorPage(status: number, message: string, back?: { href: string; label: string }): SafeHtml {
  return html`<h1>${status === 404 ? 'Not found' : status === 409 ? 'Not possible now' : status >= 500 ? 'Internal error' : 'Refused'}</h1>
<p class="error-message" id="error">${message}</p>${back ? html`<p><a href="${back.href}">${back.label}</a></p>` : ''}`;
}
