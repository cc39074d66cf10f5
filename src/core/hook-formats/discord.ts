import type { Notification } from '../notification.js';

/**
 * A Discord webhook message (discord.com/developers/docs/resources/webhook#execute-webhook):
 * `content` and one embed. A webhook not owned by a bot application cannot send buttons, so the
 * actions are markdown links in the embed; `allowed_mentions` is empty, so no text of a run pings
 * anyone.
 */

/** Discord limits: content 2,000, embed title 256, description 4,096. */
const CONTENT_MAX = 2000;
const TITLE_MAX = 256;
const DESCRIPTION_MAX = 4096;

const COLORS = { good: 0x2eb67d, attention: 0xecb22e, bad: 0xe01e5a } as const;

export function discordMessage(notification: Notification): Record<string, unknown> {
  const links = notification.actions.map((action) => `[${escapeLabel(action.label)}](${action.url})`);
  const commands =
    notification.commands.length > 0 ? [`\`\`\`\n${notification.commands.join('\n')}\n\`\`\``] : [];
  // Links last and kept whole: the text gives way when it is too long.
  const tail = [...commands, links.join(' · ')].filter((part) => part !== '').join('\n');
  const room = DESCRIPTION_MAX - tail.length - 2;
  const description = [cut(notification.text, Math.max(0, room)), tail]
    .filter((part) => part !== '')
    .join('\n\n');
  return {
    content: cut(notification.title, CONTENT_MAX),
    embeds: [
      {
        title: cut(notification.title, TITLE_MAX),
        description: cut(description, DESCRIPTION_MAX),
        color: COLORS[notification.tone],
        ...(notification.consoleUrl === null ? {} : { url: notification.consoleUrl }),
      },
    ],
    allowed_mentions: { parse: [] },
  };
}

function escapeLabel(label: string): string {
  return label.replace(/[[\]()\\]/g, (c) => `\\${c}`);
}

function cut(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
