import type { Notification, NotificationAction } from '../notification.js';

/**
 * An ntfy message published as JSON (docs.ntfy.sh/publish, "Publish as JSON"): POSTed to the
 * server's root with `topic` in the body, so a hook URL `https://ntfy.sh/<topic>` is split into
 * both. `http` actions POST the capability URLs from the notification itself; ntfy shows at most
 * three actions, so the console link goes to `click` (tapping the notification).
 */

const ACTIONS_MAX = 3;
const PRIORITY = { good: 3, attention: 4, bad: 4 } as const;
const TAGS = { good: ['white_check_mark'], attention: ['raising_hand'], bad: ['warning'] } as const;

/** Where a message to the topic URL `url` is posted, and its topic; or why it cannot be. */
export function ntfyTarget(url: string): { postUrl: string; topic: string } | { problem: string } {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { problem: 'is not a URL' };
  }
  const segments = parsed.pathname.split('/');
  const topic = segments.pop() ?? '';
  if (!/^[-_A-Za-z0-9]{1,64}$/.test(topic) || parsed.search !== '')
    return {
      problem:
        'is not an ntfy topic URL: expected the server and the topic, e.g. https://ntfy.sh/my-topic (1-64 letters, digits, - or _)',
    };
  parsed.pathname = `${segments.join('/')}/`;
  return { postUrl: parsed.href, topic };
}

export function ntfyMessage(notification: Notification, topic: string): Record<string, unknown> {
  const acting = notification.actions.filter((action) => action.method === 'POST');
  const open = notification.actions.filter((action) => action.method === 'GET');
  const actions = [...acting, ...open].slice(0, ACTIONS_MAX).map(ntfyAction);
  const commands = notification.commands.length > 0 ? `\n\n${notification.commands.join('\n')}` : '';
  return {
    topic,
    title: notification.title,
    message: `${notification.text}${commands}`,
    priority: PRIORITY[notification.tone],
    tags: [...TAGS[notification.tone]],
    ...(notification.consoleUrl === null ? {} : { click: notification.consoleUrl }),
    ...(actions.length > 0 ? { actions } : {}),
  };
}

function ntfyAction(action: NotificationAction): Record<string, unknown> {
  if (action.method === 'GET') return { action: 'view', label: action.label, url: action.url };
  return { action: 'http', label: action.label, url: action.url, method: 'POST', clear: true };
}
