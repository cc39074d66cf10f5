import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BatonError } from '../core/errors.js';
import type { WaitSpec } from '../core/plan/types.js';
import { waitCommands } from '../core/waits.js';

/**
 * Capability URLs of a waiting step: `POST <public url>/wait/<run>/<step>/<token>/<action>`
 * approves, rejects or delivers the event without a console session. The token is
 * HMAC-SHA256(key, run, step, the seq of the step's `step.waiting` event, action), so `baton serve`
 * and every process that sends hooks derive the same URL from one key file under the Baton home and
 * nothing is stored: a URL is valid while that wait lasts (a later wait of the same step has another
 * seq), and single use because using it ends the wait.
 */

export const WAIT_ACTIONS = ['approve', 'reject', 'event'] as const;
export type WaitAction = (typeof WAIT_ACTIONS)[number];

/** The key file under the Baton home (0600, 32 random bytes, made on first use). */
export const WAIT_KEY_FILE = 'wait-url.key';

/** One wait of one step: what its tokens are bound to. */
export interface WaitIdentity {
  runId: string;
  stepId: string;
  /** The seq of the `step.waiting` event that started this wait. */
  waitSeq: number;
}

/** The key of `home`, made (exclusively, 0600) when there is none yet. */
export function waitUrlKey(home: string): Buffer {
  const file = join(home, WAIT_KEY_FILE);
  try {
    return keyOf(readFileSync(file), file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  mkdirSync(home, { recursive: true });
  try {
    writeFileSync(file, randomBytes(32), { flag: 'wx', mode: 0o600 });
    chmodSync(file, 0o600);
  } catch (error) {
    // Another process made it first: use theirs.
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  return keyOf(readFileSync(file), file);
}

function keyOf(bytes: Buffer, file: string): Buffer {
  if (bytes.length < 32)
    throw new BatonError(
      'CONFIG_INVALID',
      `${file}: expected 32 random bytes (the key of waiting steps' URLs); delete it to make a new one (every URL given out so far stops working)`,
    );
  return bytes;
}

/**
 * A capability token: HMAC-SHA256 of its fields under `key`, 256 bits, URL-safe. `fields` start
 * with what kind of capability it is (`baton-wait`, `baton-blocked`), so one never passes for another.
 */
export function capabilityToken(key: Buffer, fields: readonly (string | number)[]): string {
  return createHmac('sha256', key).update(fields.join('\0')).digest('base64url');
}

/** Whether `offered` is the token of `fields`, compared in constant time. */
export function isCapabilityToken(
  key: Buffer,
  fields: readonly (string | number)[],
  offered: string,
): boolean {
  const expected = Buffer.from(capabilityToken(key, fields));
  const given = Buffer.from(offered);
  // Compare something of the same length either way, so a wrong length costs the same.
  const same = timingSafeEqual(expected, given.length === expected.length ? given : expected);
  return same && given.length === expected.length;
}

function waitFields(wait: WaitIdentity, action: WaitAction): (string | number)[] {
  return ['baton-wait', wait.runId, wait.stepId, wait.waitSeq, action];
}

/** The token of one action on one wait: 256 bits, URL-safe. */
export function waitToken(key: Buffer, wait: WaitIdentity, action: WaitAction): string {
  return capabilityToken(key, waitFields(wait, action));
}

/** Whether `offered` is the token of `action` on `wait`, compared in constant time. */
export function isWaitToken(key: Buffer, wait: WaitIdentity, action: WaitAction, offered: string): boolean {
  return isCapabilityToken(key, waitFields(wait, action), offered);
}

/** The path of an action's URL (after the public address). */
export function waitPath(wait: WaitIdentity, action: WaitAction, token: string): string {
  return `/wait/${encodeURIComponent(wait.runId)}/${encodeURIComponent(wait.stepId)}/${token}/${action}`;
}

/** The actions a wait takes: approve and reject for an approval, event for an event. */
export function actionsOf(kind: WaitSpec['for']): WaitAction[] {
  return kind === 'event' ? ['event'] : ['approve', 'reject'];
}

/** The URLs of a wait under `publicUrl`, by action. */
export function waitUrls(
  publicUrl: string,
  key: Buffer,
  wait: WaitIdentity,
  kind: WaitSpec['for'],
): Partial<Record<WaitAction, string>> {
  const base = publicUrl.replace(/\/+$/, '');
  const urls: Partial<Record<WaitAction, string>> = {};
  for (const action of actionsOf(kind))
    urls[action] = `${base}${waitPath(wait, action, waitToken(key, wait, action))}`;
  return urls;
}

/** A public address as given (`--public-url`, BATON_PUBLIC_URL), checked: http(s), no credentials. */
export function publicUrlOf(text: string | undefined, where: string): string | null {
  if (text === undefined || text.trim() === '') return null;
  let url: URL;
  try {
    url = new URL(text.trim());
  } catch {
    throw new BatonError(
      'CONFIG_INVALID',
      `${where}: "${text}" is not a URL (e.g. https://baton.example.com)`,
    );
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.username || url.password || url.search)
    throw new BatonError(
      'CONFIG_INVALID',
      `${where}: expected an http(s) address without user, password or query (e.g. https://baton.example.com), got "${text}"`,
    );
  return url.href.replace(/\/+$/, '');
}

/**
 * What a hook about a waiting step carries so that someone can answer it: the capability URLs when
 * a public address is known, else the exact commands.
 */
export function waitAnswers(
  options: { publicUrl: string | null; home: string | undefined },
  wait: WaitIdentity,
  spec: WaitSpec,
  waitingFor: string,
): { urls: Partial<Record<WaitAction, string>> } | { commands: string[] } {
  if (options.publicUrl !== null && options.home !== undefined)
    return { urls: waitUrls(options.publicUrl, waitUrlKey(options.home), wait, spec.for) };
  return { commands: waitCommands(wait.runId, wait.stepId, spec, waitingFor) };
}
