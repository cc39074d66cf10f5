import type { ServerResponse } from 'node:http';
import type { SafeHtml } from './html.js';

/**
 * Headers of every answer: no script or style but the console's own files (no inline script, no
 * inline style), no framing, no MIME sniffing, no referrer, nothing cached.
 */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'Content-Security-Policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
    "form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'X-Frame-Options': 'DENY',
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Resource-Policy': 'same-origin',
  'Cache-Control': 'no-store',
};

export function sendBody(
  res: ServerResponse,
  status: number,
  type: string,
  body: string | Buffer,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, {
    ...SECURITY_HEADERS,
    'Content-Type': type,
    'Content-Length': String(Buffer.byteLength(body)),
    ...headers,
  });
  res.end(body);
}

export function sendHtml(
  res: ServerResponse,
  status: number,
  page: SafeHtml,
  headers?: Record<string, string>,
) {
  sendBody(res, status, 'text/html; charset=utf-8', page.text, headers);
}

export function sendJson(res: ServerResponse, status: number, value: unknown): void {
  sendBody(res, status, 'application/json; charset=utf-8', JSON.stringify(value));
}

export function sendText(res: ServerResponse, status: number, text: string): void {
  sendBody(res, status, 'text/plain; charset=utf-8', text);
}

/** 303: the browser GETs `location` (after an action, or after the token was taken into a cookie). */
export function redirect(res: ServerResponse, location: string, headers: Record<string, string> = {}): void {
  res.writeHead(303, { ...SECURITY_HEADERS, Location: location, 'Content-Length': '0', ...headers });
  res.end();
}
