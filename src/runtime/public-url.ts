import { publicUrlOf } from '../engine/wait-urls.js';

/**
 * The address outsiders reach the console at, the base of the capability URLs of waiting and
 * blocked steps: the one given (`--public-url`), else BATON_PUBLIC_URL, else none (null). Checked:
 * http(s), no credentials (engine/wait-urls.ts).
 */
export function publicUrl(given: string | undefined, env: NodeJS.ProcessEnv = process.env): string | null {
  return given !== undefined
    ? publicUrlOf(given, '--public-url')
    : publicUrlOf(env.BATON_PUBLIC_URL, 'BATON_PUBLIC_URL');
}
