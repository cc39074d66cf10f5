import type { IncomingMessage } from 'node:http';
import { BatonError } from '../core/errors.js';
import { strictUtf8 } from '../core/payload-limit.js';
import { readBoundedBody } from './request-body.js';

/**
 * The form of a console action (`POST /runs/<id>/<action>`, a step's, a schedule's): a token and a
 * result or payload at most, so a body over MAX_FORM_BYTES is not read further (answered 413), and
 * text that is not UTF-8 (raw, or percent-encoded) is refused rather than replaced by U+FFFD.
 */

/** Form bodies larger than this are refused: 256 KiB. */
export const MAX_FORM_BYTES = 256 * 1024;

/** The form, or null when the body is larger than MAX_FORM_BYTES. */
export async function readActionForm(request: IncomingMessage): Promise<URLSearchParams | null> {
  const body = await readBoundedBody(request, MAX_FORM_BYTES);
  if (body === null) return null;
  const type = request.headers['content-type'] ?? '';
  if (body.length > 0 && !type.startsWith('application/x-www-form-urlencoded'))
    throw new BatonError(
      'INVALID_ARGUMENT',
      `expected a form (application/x-www-form-urlencoded), got ${type || 'no content type'}`,
    );
  const text = strictUtf8(body);
  if (text === null || !percentEncodedUtf8(text))
    throw new BatonError('INVALID_ARGUMENT', 'the form is not valid UTF-8 text: nothing was changed');
  return new URLSearchParams(text);
}

/** Whether every name and value of a form decodes to UTF-8 (URLSearchParams would replace what does not). */
function percentEncodedUtf8(text: string): boolean {
  if (!text.includes('%')) return true;
  try {
    for (const part of text.split('&')) decodeURIComponent(part.replace(/\+/g, ' '));
    return true;
  } catch {
    return false;
  }
}

/** What a console answers a form over MAX_FORM_BYTES. */
export const FORM_TOO_LARGE = `the form is larger than ${MAX_FORM_BYTES} bytes (256 KiB), the limit of a console action: send less (nothing was changed)`;
