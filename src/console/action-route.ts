import type { IncomingMessage, ServerResponse } from 'node:http';
import { FORM_TOO_LARGE, readActionForm } from './action-form.js';
import { bulkAction, runAction, scheduleAction } from './actions.js';
import type { ConsoleContext } from './context.js';
import { errorPage } from './pages/error-page.js';
import { layout } from './pages/layout.js';
import { redirect, sendHtml, sendText } from './respond.js';
import { CSRF_FIELD } from './session.js';

/**
 * A console action (a POST with the session): its form read within MAX_FORM_BYTES, refused unless
 * it comes from this console (its CSRF token and origin), then the action its path names
 * (actions.ts), and the browser sent back where it came from.
 */
export async function answerAction(
  ctx: ConsoleContext,
  request: IncomingMessage,
  res: ServerResponse,
  pathname: string,
): Promise<void> {
  const form = await readActionForm(request);
  if (form === null) {
    const page = errorPage(413, FORM_TOO_LARGE, { href: '/', label: 'runs' });
    sendHtml(res, 413, layout({ title: 'Refused', section: 'runs' }, page, false));
    return;
  }
  if (!sameOrigin(request) || !ctx.session.isCsrfToken(form.get(CSRF_FIELD))) {
    sendHtml(
      res,
      403,
      layout(
        { title: 'Refused', section: 'runs' },
        errorPage(
          403,
          'refused: the action did not come from this console (missing or wrong CSRF token); reload the page and try again',
          { href: '/', label: 'runs' },
        ),
        false,
      ),
    );
    return;
  }
  const bulk = /^\/inbox\/(retry|cancel)$/.exec(pathname)?.[1] as 'retry' | 'cancel' | undefined;
  if (bulk !== undefined) {
    redirect(res, await bulkAction(ctx, bulk, form));
    return;
  }
  const schedule = scheduleTarget(pathname);
  if (schedule) {
    redirect(res, await scheduleAction(ctx, schedule.name, schedule.action));
    return;
  }
  const target = actionTarget(pathname);
  if (!target) {
    sendText(res, 404, `no action ${pathname}\n`);
    return;
  }
  redirect(res, await runAction(ctx, target, form));
}

/**
 * A browser says where a POST comes from: refuse another site's, besides the CSRF token and the
 * SameSite cookie. Sec-Fetch-Site must say same-origin when present (another port of localhost is
 * "same-site": refused too); the Origin must be this console's, or "null" (what a browser sends
 * under Referrer-Policy: no-referrer) from the same origin.
 */
function sameOrigin(request: IncomingMessage): boolean {
  const site = request.headers['sec-fetch-site'];
  if (site !== undefined && site !== 'same-origin') return false;
  const origin = request.headers.origin;
  if (origin === 'null') return site === 'same-origin';
  return origin === undefined || origin === `http://${request.headers.host}`;
}

/** `/schedules/<name>/<action>`: a schedule's pause, resume or trigger. */
function scheduleTarget(pathname: string): { name: string; action: string } | null {
  const parts = pathname.split('/').slice(1);
  if (parts.length !== 3 || parts[0] !== 'schedules') return null;
  try {
    return { name: decodeURIComponent(parts[1]!), action: parts[2]! };
  } catch {
    return null;
  }
}

/** `/runs/<id>/<action>` or `/runs/<id>/steps/<step>/<action>`. */
function actionTarget(pathname: string): { runId: string; stepId?: string; action: string } | null {
  const parts = pathname.split('/').slice(1);
  try {
    if (parts.length === 3 && parts[0] === 'runs')
      return { runId: decodeURIComponent(parts[1]!), action: parts[2]! };
    if (parts.length === 5 && parts[0] === 'runs' && parts[2] === 'steps')
      return {
        runId: decodeURIComponent(parts[1]!),
        stepId: decodeURIComponent(parts[3]!),
        action: parts[4]!,
      };
  } catch {
    return null;
  }
  return null;
}
