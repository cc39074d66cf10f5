/**
 * Where each agent CLI keeps its config, state and cache, for the environment it runs with: the
 * places it must write when confined (sandbox: workspace). Measured by running each CLI under
 * bubblewrap with everything else read-only (see test/cli-sandbox-agents.test.ts).
 */
import type { WritablePath } from './types.js';

type Env = Readonly<Record<string, string | undefined>>;

const dir = (path: string): WritablePath => ({ path, kind: 'dir' });
const file = (path: string): WritablePath => ({ path, kind: 'file' });

/** `$HOME/<rest>` for each rest, none without a HOME. */
function inHome(env: Env, make: (home: string) => WritablePath[]): WritablePath[] {
  return env.HOME ? make(env.HOME) : [];
}

/** claude: `$CLAUDE_CONFIG_DIR` (else `~/.claude`, with `~/.claude.json` beside it). */
export function claudeFolders(env: Env): WritablePath[] {
  const config = env.CLAUDE_CONFIG_DIR;
  return [
    ...(config
      ? [dir(config)]
      : inHome(env, (home) => [dir(`${home}/.claude`), file(`${home}/.claude.json`)])),
  ];
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

/** openclaw: `$OPENCLAW_STATE_DIR`, else `~/.openclaw`. */
export function openclawFolders(env: Env): WritablePath[] {
  return env.OPENCLAW_STATE_DIR
    ? [dir(env.OPENCLAW_STATE_DIR)]
    : inHome(env, (home) => [dir(`${home}/.openclaw`)]);
}
