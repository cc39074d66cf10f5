import type { Notification } from '../notification.js';

/**
 * A Feishu (Lark) custom-bot message (open.feishu.cn, "custom bot": `msg_type: interactive`): a
 * message card with a header, the text as plain text, the commands, and an `action` element of
 * `button`s with `url` (Feishu opens them in the browser).
 */

const TEMPLATES = { good: 'green', attention: 'orange', bad: 'red' } as const;

export function feishuMessage(notification: Notification): Record<string, unknown> {
  const elements: Record<string, unknown>[] = [
    { tag: 'div', text: { tag: 'plain_text', content: notification.text } },
  ];
  if (notification.commands.length > 0)
    elements.push({ tag: 'div', text: { tag: 'plain_text', content: notification.commands.join('\n') } });
  if (notification.actions.length > 0)
    elements.push({
      tag: 'action',
      actions: notification.actions.map((action) => ({
        tag: 'button',
        text: { tag: 'plain_text', content: action.label },
        url: action.url,
        type:
          action.kind === 'approve' || action.kind === 'retry'
            ? 'primary'
            : action.kind === 'reject'
              ? 'danger'
              : 'default',
      })),
    });
  return {
    msg_type: 'interactive',
    card: {
      config: { wide_screen_mode: true },
      header: {
        title: { tag: 'plain_text', content: notification.title },
        template: TEMPLATES[notification.tone],
      },
      elements,
    },
  };
}
