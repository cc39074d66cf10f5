import { existsSync, mkdirSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { AgentSpec } from '../core/plan/types.js';
import { asRecord } from './agent-profiles/json-output.js';
import { withOptions } from './agent-profiles/prompt-placement.js';
import type { AgentProfile, RetryCap } from './agent-profiles/types.js';
import { readJsonObject, readTextFile } from './config-files.js';

/** The CLI's own retries Baton allows by default: one quick retry of a blip, then Baton decides. */
export const CLI_RETRIES = 1;

/**
 * One owner of retries: the command and environment that cap the CLI's own retries through the
 * knobs it documents (an environment variable, a `-c` override, a settings file merged over the
 * user's), unless the plan says `capRetries: false`. `attemptBase` is the attempt log's path without
 * `.log`: an overlay folder goes beside it.
 */
export function applyRetryCap(
  profile: AgentProfile,
  agent: AgentSpec,
  env: NodeJS.ProcessEnv,
  attemptBase: string,
  programIndex = 0,
): { command: string[]; env: NodeJS.ProcessEnv; cleanup: () => void; attemptPaths: string[] } {
  const none = () => {};
  if (agent.capRetries === false || profile.retryCap === undefined) {
    return { command: agent.command, env, cleanup: none, attemptPaths: [] };
  }
  const cap = profile.retryCap(agent.command, CLI_RETRIES, { env, readTextFile });
  const capped: NodeJS.ProcessEnv = { ...env, ...cap.env };
  let cleanup = none;
  const attemptPaths: string[] = [];
  if (cap.overlay) {
    const dir = writeOverlay(cap.overlay, env, `${attemptBase}.${cap.overlay.envVar.toLowerCase()}`);
    capped[cap.overlay.envVar] = dir;
    attemptPaths.push(dir);
    // The merged settings may hold the user's tokens (MCP servers' env): not kept past the attempt.
    cleanup = () => rmSync(dir, { recursive: true, force: true });
  }
  // Before the CLI's own `--`: after it, codex would read `-c` as its prompt.
  return {
    command: withOptions(agent.command, cap.args, programIndex),
    env: capped,
    cleanup,
    // What the agent must reach when confined: the overlay lies beside the attempt log, in the home.
    attemptPaths,
  };
}

/**
 * A home for the CLI whose config folder links to every entry of the user's (credentials, trusted
 * folders, history stay theirs) except the settings file, which is the user's merged with ours.
 */
function writeOverlay(
  overlay: NonNullable<RetryCap['overlay']>,
  env: NodeJS.ProcessEnv,
  dir: string,
): string {
  const userHome = env[overlay.envVar] || env.HOME || homedir();
  const userConfig = join(userHome, overlay.configDir);
  const config = join(dir, overlay.configDir);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(config, { recursive: true, mode: 0o700 });
  for (const name of overlay.keptFolders ?? []) {
    try {
      mkdirSync(join(userConfig, name), { recursive: true, mode: 0o700 });
    } catch {
      // Not writable: the CLI keeps them in the overlay, and they go with it.
    }
  }
  let entries: string[] = [];
  try {
    entries = readdirSync(userConfig);
  } catch {}
  for (const name of entries) {
    if (name !== overlay.settingsFile) symlinkSync(join(userConfig, name), join(config, name));
  }
  // What the CLI reads from its home itself, beside its config folder (gemini: ~/.env with its key).
  for (const name of overlay.homeFiles ?? []) {
    if (existsSync(join(userHome, name))) symlinkSync(join(userHome, name), join(dir, name));
  }
  const merged = mergeSettings(readJsonObject(join(userConfig, overlay.settingsFile)), overlay.settings);
  writeFileSync(join(config, overlay.settingsFile), `${JSON.stringify(merged, null, 2)}\n`, { mode: 0o600 });
  return dir;
}

/** `over` merged into `base`, objects key by key, anything else replaced. */
function mergeSettings(
  base: Record<string, unknown>,
  over: Record<string, unknown>,
): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(over)) {
    const inner = asRecord(value);
    const existing = asRecord(out[key]);
    out[key] = inner && existing ? mergeSettings(existing, inner) : value;
  }
  return out;
}
