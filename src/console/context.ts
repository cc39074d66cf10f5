import type { IncomingMessage, ServerResponse } from 'node:http';
import type { CommandContext } from '../runtime/commands/context.js';
import type { EventHub } from './event-hub.js';
import type { ConsoleSession } from './session.js';

/** What every handler of the console works with. */
export interface ConsoleContext {
  /**
   * The runtime's command context, made once when the console starts: every page reads through
   * `commands.store` (the store behind the masking boundary) or a runtime read, and every action
   * is a runtime command. The console never holds the store itself.
   */
  commands: CommandContext;
  session: ConsoleSession;
  hub: EventHub;
  /** How often a live log is read again (ms). */
  logPollMs: number;
  /**
   * The address outsiders reach this console at: the base of the capability URLs the inbox shows
   * (to the operator only).
   */
  publicUrl(): string;
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
