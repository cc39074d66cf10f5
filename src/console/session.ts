import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

/** The cookie that carries the session token once the printed URL was opened. */
const SESSION_COOKIE = 'baton_session';
/** The form field every action (POST) must carry. */
export const CSRF_FIELD = 'csrf';
/** Tokens from --token-file shorter than this are refused: they could be guessed. */
export const MIN_TOKEN_CHARS = 16;

/** A fresh session token: 32 random bytes, URL-safe. */
export function newSessionToken(): string {
  return randomBytes(32).toString('base64url');
}

/**
 * The session of one `baton serve`: the token is required for every page, stream and action (as
 * the cookie, or `Authorization: Bearer`); the CSRF token is derived from it, so it changes with it
 * and is never the token itself (a page that leaked it would not leak the session).
 */
export class ConsoleSession {
  readonly csrfToken: string;

  constructor(private readonly token: string) {
    this.csrfToken = createHmac('sha256', token).update('baton-console-csrf').digest('base64url');
  }

  /** Whether `candidate` is the session token (compared in constant time). */
  isToken(candidate: string | null | undefined): boolean {
    return typeof candidate === 'string' && sameText(candidate, this.token);
  }

  /** Whether the request carries the token (cookie or bearer header). */
  authorizes(request: IncomingMessage): boolean {
    const bearer = /^Bearer\s+(\S+)$/i.exec(request.headers.authorization ?? '')?.[1];
    return this.isToken(bearer) || this.isToken(cookieValue(request, SESSION_COOKIE));
  }

  isCsrfToken(candidate: string | null | undefined): boolean {
    return typeof candidate === 'string' && sameText(candidate, this.csrfToken);
  }

  /** The Set-Cookie header that keeps the session: not readable by scripts, never sent cross-site. */
  cookie(): string {
    return `${SESSION_COOKIE}=${this.token}; HttpOnly; SameSite=Strict; Path=/`;
  }
}

function sameText(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

/** One cookie of the request, or null. */
function cookieValue(request: IncomingMessage, name: string): string | null {
  for (const part of (request.headers.cookie ?? '').split(';')) {
    const at = part.indexOf('=');
    if (at > 0 && part.slice(0, at).trim() === name) return part.slice(at + 1).trim();
  }
  return null;
}
