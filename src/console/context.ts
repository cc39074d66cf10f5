import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Plan } from '../core/plan/types.js';
import type { WaitAction, WaitIdentity } from '../engine/wait-urls.js';
import type { Store } from '../store/store.js';
import type { EventHub } from './event-hub.js';
import type { ConsoleSession } from './session.js';

/** What every handler of the console works with. */
export interface ConsoleContext {
  /** The store, its reads masked (maskedReads) as every command that prints them. */
  store: Store;
  /**
   * The same store unmasked, for reads whose result is masked by the handler itself because it
   * keeps little of them (the timeline keeps numbers and short labels, masked once).
   */
  unmasked: Store;
  /** The Baton home: attempt logs are under it. */
  home: string;
  session: ConsoleSession;
  hub: EventHub;
  /** The values masked in a run's logs (this process's secrets and the ones its plan names). */
  secretsOf(plan: Plan): readonly string[];
  now(): number;
  /** How often a live log is read again (ms). */
  logPollMs: number;
  /** The capability URLs of a wait, under the console's public address (shown to the operator only). */
  waitUrls(wait: WaitIdentity, kind: 'approval' | 'event'): Partial<Record<WaitAction, string>>;
}

export interface Request {
  request: IncomingMessage;
  res: ServerResponse;
  url: URL;
  /** Path segments matched by the route, decoded. */
  params: string[];
  /** The script asks for the page's content only (a live update). */
  fragment: boolean;
}

export type Handler = (ctx: ConsoleContext, req: Request) => Promise<void>;
