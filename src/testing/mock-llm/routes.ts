import type { Wire } from './types.js';

/** Where a request goes: its wire, and for Gemini the model and method taken from the path. */
export type Route =
  | { wire: 'openai' | 'anthropic' | 'responses'; path: string }
  | { wire: 'gemini'; path: string; model: string; stream: boolean; sse: boolean };

const FIXED: ReadonlyMap<string, Wire> = new Map([
  ['/v1/chat/completions', 'openai'],
  ['/v1/messages', 'anthropic'],
  ['/v1/responses', 'responses'],
]);

/** `/v1beta/models/<model>:generateContent` or `:streamGenerateContent` (also /v1 and /v1alpha). */
const GEMINI_PATH = /^\/(?:v1|v1beta|v1alpha)\/models\/([^/:]+):(generateContent|streamGenerateContent)$/;

/** The route of a request, or undefined for anything the mock does not serve (answered 404). */
export function routeOf(method: string | undefined, url: string | undefined): Route | undefined {
  if (method !== 'POST') return undefined;
  const [rawPath = '/', query = ''] = (url ?? '/').split('?');
  const path = rawPath.replace(/\/{2,}/g, '/');
  const fixed = FIXED.get(path);
  if (fixed === 'openai' || fixed === 'anthropic' || fixed === 'responses') return { wire: fixed, path };
  const gemini = GEMINI_PATH.exec(path);
  if (!gemini) return undefined;
  const stream = gemini[2] === 'streamGenerateContent';
  const sse = new URLSearchParams(query).get('alt') === 'sse';
  return { wire: 'gemini', path, model: decodeURIComponent(gemini[1] ?? ''), stream, sse };
}
