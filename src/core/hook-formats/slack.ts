import type { Notification } from '../notification.js';

/**
 * A Slack incoming-webhook message (api.slack.com/messaging/webhooks, Block Kit): `text` (the
 * notification fallback) and `blocks`: a header, a section in mrkdwn, the commands, and an
 * `actions` block of link buttons (`url`: Slack opens it in the browser, no Slack app needed).
 */

/** Block Kit limits: header text 150, section text 3,000, button text 75, 25 elements per actions block. */
const HEADER_MAX = 150;
const SECTION_MAX = 3000;
const BUTTON_TEXT_MAX = 75;
const ACTIONS_MAX = 25;

export function slackMessage(notification: Notification): Record<string, unknown> {
  const blocks: Record<string, unknown>[] = [
    { type: 'header', text: { type: 'plain_text', text: cut(notification.title, HEADER_MAX) } },
    { type: 'section', text: { type: 'mrkdwn', text: cut(escapeMrkdwn(notification.text), SECTION_MAX) } },
  ];
  if (notification.commands.length > 0)
    blocks.push({
      type: 'section',
      text: {
        type: 'mrkdwn',
        text: cut(`\`\`\`${escapeMrkdwn(notification.commands.join('\n'))}\`\`\``, SECTION_MAX),
      },
    });
  const buttons = notification.actions.slice(0, ACTIONS_MAX).map((action, index) => ({
    type: 'button',
    action_id: `baton-${action.kind}-${index}`,
    text: { type: 'plain_text', text: cut(action.label, BUTTON_TEXT_MAX) },
    url: action.url,
    ...(action.kind === 'approve' || action.kind === 'retry' ? { style: 'primary' } : {}),
    ...(action.kind === 'reject' ? { style: 'danger' } : {}),
  }));
  if (buttons.length > 0) blocks.push({ type: 'actions', elements: buttons });
  return { text: `${notification.title}\n${notification.text}`, blocks };
}

/** Slack's three control characters in mrkdwn (its documented escaping). */
function escapeMrkdwn(text: string): string {
  return text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');
}

function cut(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
