import { waitUrlKey, waitUrls } from '../engine/wait-urls.js';
import { waitAnswerSource } from '../engine/waiting-hook-payload.js';

/**
 * The capability URLs of one wait (the seq of the `step.waiting` event that started it), one line
 * per action (`approve: <url>`), as `baton run` prints them under the commands: only when `env`
 * has BATON_PUBLIC_URL and the home's key can be read or made, as for hooks; else none. A GET of a
 * URL shows a page that asks first; a POST acts.
 */
export function waitUrlLines(
  env: NodeJS.ProcessEnv,
  home: string,
  wait: { runId: string; stepId: string; waitSeq: number },
  kind: 'approval' | 'event',
): string[] {
  const { publicUrl } = waitAnswerSource(env, home);
  if (publicUrl === null) return [];
  const urls = waitUrls(publicUrl, waitUrlKey(home), wait, kind);
  return Object.entries(urls).map(([action, url]) => `${action}: ${url}`);
}
