/**
 * Where each agent CLI keeps its config, state and cache, for the environment it runs with: the
 * places it must write when confined (sandbox: workspace). Found by listing what each CLI wrote
 * outside its workspace in a run against `baton mock-llm`; test/cli-sandbox-agents.test.ts runs
 * them confined and checks that what they wrote there is on the host.
 */
import type { WritablePath } from './types.js';

type Env = Readonly<Record<string, string | undefined>>;

const dir = (path: string): WritablePath => ({ path, kind: 'dir' });
const file = (path: string, initialContent: string): WritablePath => ({ path, kind: 'file', initialContent });

/** `$HOME/<rest>` for each rest, none without a HOME. */
function inHome(env: Env, make: (home: string) => WritablePath[]): WritablePath[] {
  return env.HOME ? make(env.HOME) : [];
}

/**
 * claude: `$CLAUDE_CONFIG_DIR`, else `~/.claude` and `~/.claude.json` beside it, which claude
 * rewrites in place (created as `{}` when missing, as claude would on its first run).
 */
export function claudeFolders(env: Env): WritablePath[] {
  if (env.CLAUDE_CONFIG_DIR) return [dir(env.CLAUDE_CONFIG_DIR)];
  return inHome(env, (home) => [dir(`${home}/.claude`), file(`${home}/.claude.json`, '{}\n')]);
}

/** codex: `$CODEX_HOME`, else `~/.codex`. */
export function codexFolders(env: Env): WritablePath[] {
  return env.CODEX_HOME ? [dir(env.CODEX_HOME)] : inHome(env, (home) => [dir(`${home}/.codex`)]);
}

/** gemini: `<$GEMINI_CLI_HOME or ~>/.gemini`. */
export function geminiFolders(env: Env): WritablePath[] {
  const home = env.GEMINI_CLI_HOME || env.HOME;
  return home ? [dir(`${home}/.gemini`)] : [];
}

/** openclaw: `$OPENCLAW_STATE_DIR`, else `~/.openclaw`; and its cache `~/.cache/openclaw-<uid>`. */
export function openclawFolders(env: Env): WritablePath[] {
  const stateDir = openclawStateDir(env);
  const state = stateDir === undefined ? [] : [dir(stateDir)];
  const cacheRoot = env.XDG_CACHE_HOME || (env.HOME ? `${env.HOME}/.cache` : undefined);
  const uid = process.getuid?.();
  return cacheRoot && uid !== undefined ? [...state, dir(`${cacheRoot}/openclaw-${uid}`)] : state;
}

/** openclaw's state folder (its config, agents and SQLite state): `$OPENCLAW_STATE_DIR`, else `~/.openclaw`. */
export function openclawStateDir(env: Env): string | undefined {
  return env.OPENCLAW_STATE_DIR || (env.HOME ? `${env.HOME}/.openclaw` : undefined);
}
