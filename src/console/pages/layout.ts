import { html, type SafeHtml } from '../html.js';

type Section = 'runs' | 'inbox' | 'schedules' | 'workers';

export interface PageOptions {
  title: string;
  section: Section;
  /** The SSE stream whose events make the script reload the page's content (`/live?...`). */
  live?: string;
}

const NAV: [Section, string, string][] = [
  ['runs', '/', 'Runs'],
  ['inbox', '/inbox', 'Blockers'],
  ['schedules', '/schedules', 'Schedules'],
  ['workers', '/workers', 'Flow & workers'],
];

/**
 * A whole page, or only its content when the script asks for it again (`fragment`): the live
 * updates swap `#page` without reloading.
 */
export function layout(options: PageOptions, content: SafeHtml, fragment: boolean): SafeHtml {
  if (fragment) return content;
  const nav = NAV.map(
    ([section, href, label]) =>
      html`<a href="${href}"${section === options.section ? html` class="current" aria-current="page"` : ''}>${label}</a>`,
  );
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${options.title} · baton</title><link rel="stylesheet" href="/assets/console.css"><script src="/assets/console.js" defer></script></head>
<body><header><a class="brand" href="/">baton</a><nav>${nav}</nav><span class="live-state" id="live-state" hidden>live</span></header>
<main id="page" data-live="${options.live ?? ''}">${content}</main></body></html>`;
}
