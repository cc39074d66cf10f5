import { discordMessage } from './hook-formats/discord.js';
import { feishuMessage } from './hook-formats/feishu.js';
import { ntfyMessage } from './hook-formats/ntfy.js';
import { slackMessage } from './hook-formats/slack.js';
import type { Notification } from './notification.js';

/**
 * A hook's `format`: the JSON body a service's incoming webhook expects, drawn from the
 * notification (no SDK: each is a documented JSON shape), or `json`, Baton's own payload with the
 * notification's fields added.
 */
export const HOOK_FORMATS = ['json', 'slack', 'discord', 'feishu', 'ntfy'] as const;
export type HookFormat = (typeof HOOK_FORMATS)[number];

/**
 * The body of one hook call. `payload`: Baton's payload (masked, with its URLs); `ntfyTopic`: the
 * topic of an ntfy hook's URL (ntfy takes JSON at the server's root, the topic in the body).
 */
export function hookBody(
  format: HookFormat,
  payload: Record<string, unknown>,
  notification: Notification,
  ntfyTopic?: string,
): Record<string, unknown> {
  switch (format) {
    case 'slack':
      return slackMessage(notification);
    case 'discord':
      return discordMessage(notification);
    case 'feishu':
      return feishuMessage(notification);
    case 'ntfy':
      return ntfyMessage(notification, ntfyTopic ?? '');
    case 'json':
      return {
        ...payload,
        title: notification.title,
        text: notification.text,
        consoleUrl: notification.consoleUrl,
        actions: notification.actions,
        commands: notification.commands,
      };
  }
}
