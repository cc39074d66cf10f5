import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BatonError } from '../core/errors.js';
import type { WaitSpec } from '../core/plan/types.js';
import { waitCommands } from '../core/wait-commands.js';
import { type CapabilityFields, capabilitySeq, capabilityToken } from './capability-token.js';

/**
 * Capability URLs of a waiting step: `POST <public url>/wait/<run>/<step>/<token>/<action>`
 * approves, rejects or delivers the event without a console session. The token carries the seq of
 * the step's `step.waiting` event and HMAC-SHA256(key, run, step, that seq, action)
 * (capability-token.ts), so `baton serve` and every process that sends hooks derive the same URL
 * from one key file under the Baton home and nothing is stored: a URL is valid while that wait
 * lasts (a later wait of the same step has another seq), and single use because using it ends the
 * wait.
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

/**
 * The key of `home` as the file holds it now, made (exclusively, 0600) when there is none: read at
 * each call (32 bytes), never kept, so replacing or deleting the file revokes every URL it made, in
 * running processes too (`baton serve` at its next request, a hook at its next call).
 */
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

function waitFields(runId: string, stepId: string, action: WaitAction): CapabilityFields {
  return { kind: 'baton-wait', runId, stepId, action };
}

/** The token of one action on one wait (capability-token.ts): its seq and a MAC, URL-safe. */
export function waitToken(key: Buffer, wait: WaitIdentity, action: WaitAction): string {
  return capabilityToken(key, waitFields(wait.runId, wait.stepId, action), wait.waitSeq);
}

/**
 * The seq of the wait `offered` was made for, when it is the token of `action` on a wait of that
 * run's step; else null. Checked from the URL alone, in constant time, before anything is read.
 */
export function waitSeqOfToken(
  key: Buffer,
  step: { runId: string; stepId: string },
  action: WaitAction,
  offered: string,
): number | null {
  return capabilitySeq(key, waitFields(step.runId, step.stepId, action), offered);
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
