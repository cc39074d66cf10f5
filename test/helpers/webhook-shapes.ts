/**
 * What each service's incoming webhook accepts, written from its documentation (field names,
 * required fields, allowed values, documented length limits). Each check throws naming the first
 * field that breaks the rule, and returns the action links a person would press.
 *
 * - Slack: api.slack.com/messaging/webhooks and Block Kit's reference (blocks: header, section,
 *   actions; a button element: text plain_text <= 75, url <= 3000, action_id <= 255 and unique,
 *   style primary|danger; <= 50 blocks, <= 25 elements in an actions block, section text <= 3000,
 *   header text <= 150).
 * - Discord: "Execute Webhook" (content <= 2000 and/or embeds <= 10; embed title <= 256,
 *   description <= 4096, color an integer, url; 6000 characters across the embeds; components only
 *   for application-owned webhooks, so none here).
 * - Feishu: the custom bot guide (msg_type "interactive" with `card`: header.title
 *   {tag: plain_text, content}, header.template one of the documented colours, elements of tag div
 *   (text {tag: plain_text|lark_md, content}) and action (actions: button {tag: button, text, url,
 *   type default|primary|danger})).
 * - ntfy: "Publish as JSON" (POST to the server root; topic required; title, message, tags
 *   (strings), priority 1-5, click (a URL), actions <= 3 of view|http|broadcast with label and url;
 *   http: method).
 */

function fail(service: string, path: string, problem: string): never {
  throw new Error(`${service} payload: ${path} ${problem}`);
}

function text(service: string, path: string, value: unknown, max: number): string {
  if (typeof value !== 'string' || value.length === 0)
    fail(service, path, `must be a non-empty string, got ${JSON.stringify(value)}`);
  if (value.length > max) fail(service, path, `is ${value.length} characters, more than ${max}`);
  return value;
}

function httpUrl(service: string, path: string, value: unknown, max = 3000): string {
  const url = text(service, path, value, max);
  if (!/^https?:\/\//.test(url)) fail(service, path, `must be an http(s) URL, got ${url}`);
  return url;
}

function only(service: string, path: string, value: object, allowed: readonly string[]): void {
  for (const key of Object.keys(value))
    if (!allowed.includes(key)) fail(service, `${path}.${key}`, `is not a field of the documented format`);
}

export interface ActionLink {
  label: string;
  url: string;
}

export function checkSlackMessage(body: Record<string, unknown>): ActionLink[] {
  const s = 'Slack';
  only(s, 'message', body, ['text', 'blocks']);
  text(s, 'text', body.text, 40_000);
  const blocks = body.blocks as Record<string, unknown>[];
  if (!Array.isArray(blocks) || blocks.length === 0 || blocks.length > 50)
    fail(s, 'blocks', 'must hold 1-50 blocks');
  const links: ActionLink[] = [];
  blocks.forEach((block, i) => {
    const at = `blocks[${i}]`;
    if (block.type === 'header') {
      const t = block.text as { type: unknown; text: unknown };
      if (t?.type !== 'plain_text') fail(s, `${at}.text.type`, 'must be plain_text');
      text(s, `${at}.text.text`, t.text, 150);
    } else if (block.type === 'section') {
      const t = block.text as { type: unknown; text: unknown };
      if (t?.type !== 'mrkdwn' && t?.type !== 'plain_text')
        fail(s, `${at}.text.type`, 'must be mrkdwn or plain_text');
      text(s, `${at}.text.text`, t.text, 3000);
    } else if (block.type === 'actions') {
      const elements = block.elements as Record<string, unknown>[];
      if (!Array.isArray(elements) || elements.length === 0 || elements.length > 25)
        fail(s, `${at}.elements`, 'must hold 1-25 elements');
      const ids = new Set<string>();
      elements.forEach((element, j) => {
        const e = `${at}.elements[${j}]`;
        only(s, e, element, ['type', 'text', 'url', 'action_id', 'style', 'value']);
        if (element.type !== 'button') fail(s, `${e}.type`, 'must be button');
        const t = element.text as { type: unknown; text: unknown };
        if (t?.type !== 'plain_text') fail(s, `${e}.text.type`, 'must be plain_text');
        const label = text(s, `${e}.text.text`, t.text, 75);
        const id = text(s, `${e}.action_id`, element.action_id, 255);
        if (ids.has(id)) fail(s, `${e}.action_id`, 'must be unique in the block');
        ids.add(id);
        if (element.style !== undefined && element.style !== 'primary' && element.style !== 'danger')
          fail(s, `${e}.style`, 'must be primary or danger');
        links.push({ label, url: httpUrl(s, `${e}.url`, element.url) });
      });
    } else fail(s, `${at}.type`, `is not a block this message uses (${String(block.type)})`);
  });
  return links;
}

export function checkDiscordMessage(body: Record<string, unknown>): ActionLink[] {
  const s = 'Discord';
  only(s, 'message', body, ['content', 'embeds', 'allowed_mentions', 'username', 'avatar_url']);
  if (body.content !== undefined) text(s, 'content', body.content, 2000);
  const embeds = body.embeds as Record<string, unknown>[];
  if (!Array.isArray(embeds) || embeds.length > 10) fail(s, 'embeds', 'must be a list of at most 10');
  if (body.content === undefined && embeds.length === 0) fail(s, 'message', 'needs content or an embed');
  const mentions = body.allowed_mentions as { parse?: unknown };
  if (mentions !== undefined && !Array.isArray(mentions.parse))
    fail(s, 'allowed_mentions.parse', 'must be a list');
  let total = 0;
  const links: ActionLink[] = [];
  embeds.forEach((embed, i) => {
    const at = `embeds[${i}]`;
    only(s, at, embed, ['title', 'description', 'url', 'color', 'fields', 'footer', 'timestamp']);
    const title = text(s, `${at}.title`, embed.title, 256);
    const description = text(s, `${at}.description`, embed.description, 4096);
    total += title.length + description.length;
    if (embed.url !== undefined) httpUrl(s, `${at}.url`, embed.url);
    if (!Number.isInteger(embed.color) || (embed.color as number) < 0 || (embed.color as number) > 0xffffff)
      fail(s, `${at}.color`, 'must be an integer colour 0-0xFFFFFF');
    for (const match of description.matchAll(/\[((?:\\.|[^\]\\])+)\]\((https?:\/\/[^)\s]+)\)/g))
      links.push({ label: match[1]!.replace(/\\(.)/g, '$1'), url: match[2]! });
  });
  if (total > 6000) fail(s, 'embeds', `hold ${total} characters, more than 6000`);
  return links;
}

const FEISHU_TEMPLATES = [
  'blue',
  'wathet',
  'turquoise',
  'green',
  'yellow',
  'orange',
  'red',
  'carmine',
  'violet',
  'purple',
  'indigo',
  'grey',
];

export function checkFeishuMessage(body: Record<string, unknown>): ActionLink[] {
  const s = 'Feishu';
  only(s, 'message', body, ['msg_type', 'card', 'timestamp', 'sign']);
  if (body.msg_type !== 'interactive') fail(s, 'msg_type', 'must be interactive for a card');
  const card = body.card as Record<string, unknown>;
  if (typeof card !== 'object' || card === null) fail(s, 'card', 'must be an object');
  const header = card.header as { title?: { tag?: unknown; content?: unknown }; template?: unknown };
  if (header.title?.tag !== 'plain_text') fail(s, 'card.header.title.tag', 'must be plain_text');
  text(s, 'card.header.title.content', header.title.content, 10_000);
  if (header.template !== undefined && !FEISHU_TEMPLATES.includes(header.template as string))
    fail(s, 'card.header.template', `must be one of ${FEISHU_TEMPLATES.join(', ')}`);
  const elements = card.elements as Record<string, unknown>[];
  if (!Array.isArray(elements) || elements.length === 0) fail(s, 'card.elements', 'must be a non-empty list');
  const links: ActionLink[] = [];
  elements.forEach((element, i) => {
    const at = `card.elements[${i}]`;
    if (element.tag === 'div') {
      const t = element.text as { tag?: unknown; content?: unknown };
      if (t?.tag !== 'plain_text' && t?.tag !== 'lark_md')
        fail(s, `${at}.text.tag`, 'must be plain_text or lark_md');
      text(s, `${at}.text.content`, t.content, 10_000);
    } else if (element.tag === 'action') {
      const actions = element.actions as Record<string, unknown>[];
      if (!Array.isArray(actions) || actions.length === 0)
        fail(s, `${at}.actions`, 'must be a non-empty list');
      actions.forEach((button, j) => {
        const b = `${at}.actions[${j}]`;
        if (button.tag !== 'button') fail(s, `${b}.tag`, 'must be button');
        const t = button.text as { tag?: unknown; content?: unknown };
        if (t?.tag !== 'plain_text' && t?.tag !== 'lark_md')
          fail(s, `${b}.text.tag`, 'must be plain_text or lark_md');
        const label = text(s, `${b}.text.content`, t.content, 100);
        if (!['default', 'primary', 'danger'].includes(button.type as string))
          fail(s, `${b}.type`, 'must be default, primary or danger');
        links.push({ label, url: httpUrl(s, `${b}.url`, button.url) });
      });
    } else fail(s, `${at}.tag`, `is not an element this card uses (${String(element.tag)})`);
  });
  return links;
}

export interface NtfyAction extends ActionLink {
  action: string;
  method?: string;
}

export function checkNtfyMessage(body: Record<string, unknown>): NtfyAction[] {
  const s = 'ntfy';
  only(s, 'message', body, [
    'topic',
    'message',
    'title',
    'tags',
    'priority',
    'actions',
    'click',
    'attach',
    'markdown',
    'icon',
    'filename',
    'delay',
    'email',
    'call',
  ]);
  if (typeof body.topic !== 'string' || !/^[-_A-Za-z0-9]{1,64}$/.test(body.topic))
    fail(s, 'topic', 'must be a topic name');
  text(s, 'title', body.title, 4096);
  text(s, 'message', body.message, 4096);
  if (!Array.isArray(body.tags) || body.tags.some((tag) => typeof tag !== 'string'))
    fail(s, 'tags', 'must be a list of strings');
  if (!Number.isInteger(body.priority) || (body.priority as number) < 1 || (body.priority as number) > 5)
    fail(s, 'priority', 'must be 1-5');
  if (body.click !== undefined) httpUrl(s, 'click', body.click);
  const actions = (body.actions ?? []) as Record<string, unknown>[];
  if (!Array.isArray(actions) || actions.length > 3) fail(s, 'actions', 'must be a list of at most 3');
  return actions.map((action, i) => {
    const at = `actions[${i}]`;
    if (!['view', 'http', 'broadcast'].includes(action.action as string))
      fail(s, `${at}.action`, 'must be view, http or broadcast');
    const label = text(s, `${at}.label`, action.label, 100);
    const url = httpUrl(s, `${at}.url`, action.url);
    if (
      action.action === 'http' &&
      !['GET', 'POST', 'PUT', 'DELETE'].includes((action.method as string) ?? 'POST')
    )
      fail(s, `${at}.method`, 'must be an HTTP method');
    return {
      action: action.action as string,
      label,
      url,
      ...(typeof action.method === 'string' ? { method: action.method } : {}),
    };
  });
}
