/**
 * One owner of retries: what Baton changes in an agent's command and environment to cap the CLI's
 * own retries, on real files (gemini's settings overlay), and how it undoes it.
 */
import {
  existsSync,
  lstatSync,
  mkdirSync,
  readFileSync,
  readlinkSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { AGENT_PROFILES } from '../src/executors/agent-profiles/choose-profile.js';
import { applyRetryCap } from '../src/executors/agent-retry-cap.js';
import { removeTempDirs, tempDir } from './helpers/cli.js';

afterAll(() => removeTempDirs());

describe('capping the CLI’s own retries', () => {
  it('gemini: its own home for the attempt, linking the user’s .gemini entries and ~/.env, settings merged; removed after', () => {
    const dir = tempDir('baton-retry-cap-');
    const home = join(dir, 'home');
    mkdirSync(join(home, '.gemini', 'tmp'), { recursive: true });
    writeFileSync(join(home, '.env'), 'GEMINI_API_KEY=from-dotenv\n');
    writeFileSync(join(home, '.gemini', 'oauth_creds.json'), '{}');
    writeFileSync(
      join(home, '.gemini', 'settings.json'),
      JSON.stringify({ security: { auth: { selectedType: 'gemini-api-key' } }, general: { vimMode: true } }),
    );
    const capped = applyRetryCap(
      AGENT_PROFILES.gemini,
      { command: ['gemini', '-o', 'json'], promptVia: 'arg' },
      { HOME: home },
      join(dir, 'runs', 'r', 's', 'attempt-1'),
    );
    const overlay = capped.env.GEMINI_CLI_HOME!;
    expect(overlay).toBe(join(dir, 'runs', 'r', 's', 'attempt-1.gemini_cli_home'));
    expect(JSON.parse(readFileSync(join(overlay, '.gemini', 'settings.json'), 'utf8'))).toEqual({
      security: { auth: { selectedType: 'gemini-api-key' } },
      general: { vimMode: true, maxAttempts: 2 },
    });
    expect(statSync(join(overlay, '.gemini', 'settings.json')).mode & 0o777).toBe(0o600);
    expect(readlinkSync(join(overlay, '.gemini', 'oauth_creds.json'))).toBe(
      join(home, '.gemini', 'oauth_creds.json'),
    );
    expect(readlinkSync(join(overlay, '.gemini', 'tmp'))).toBe(join(home, '.gemini', 'tmp'));
    expect(readlinkSync(join(overlay, '.env'))).toBe(join(home, '.env'));
    // The user's own file is not touched.
    expect(JSON.parse(readFileSync(join(home, '.gemini', 'settings.json'), 'utf8')).general).toEqual({
      vimMode: true,
    });
    capped.cleanup();
    expect(existsSync(overlay)).toBe(false);
    expect(lstatSync(join(home, '.gemini', 'tmp')).isDirectory()).toBe(true);
  });

  it('codex: -c overrides for the configured provider, before a -- of the command', () => {
    const dir = tempDir('baton-retry-cap-');
    writeFileSync(
      join(dir, 'config.toml'),
      'model_provider = "local"\n[model_providers.local]\nname = "l"\n',
    );
    const capped = applyRetryCap(
      AGENT_PROFILES.codex,
      { command: ['codex', 'exec', '--json', '--'], promptVia: 'arg' },
      { CODEX_HOME: dir },
      join(dir, 'attempt-1'),
    );
    expect(capped.command).toEqual([
      'codex',
      'exec',
      '--json',
      '-c',
      'model_providers.local.request_max_retries=0',
      '-c',
      'model_providers.local.stream_max_retries=1',
      '--',
    ]);
  });

  it('claude: CLAUDE_CODE_MAX_RETRIES=1; capRetries: false leaves the CLI alone', () => {
    const agent = { command: ['claude', '-p'], promptVia: 'arg' as const };
    expect(applyRetryCap(AGENT_PROFILES.claude, agent, {}, '/nowhere').env.CLAUDE_CODE_MAX_RETRIES).toBe('1');
    const own = applyRetryCap(AGENT_PROFILES.claude, { ...agent, capRetries: false }, { A: 'b' }, '/nowhere');
    expect(own.env).toEqual({ A: 'b' });
    expect(own.command).toEqual(['claude', '-p']);
  });
});
