/**
 * `baton skill install`: the skill folder written where each agent host looks for skills, its
 * heartbeat wired with the absolute Baton home, nothing overwritten without --force. Real `baton`
 * processes with HOME pointed at a temporary folder; the installed skill is read by the real
 * OpenClaw (`openclaw skills info`), and its front matter checked against Claude Code's rules.
 */
import { execFile } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { cliPath, expectExit, removeTempDirs, runBaton, tempDir } from './helpers/cli.js';
import { openclawEntry, openclawNode } from './helpers/mock-cli.js';

afterAll(() => removeTempDirs());

const run = promisify(execFile);

/** A project folder and a user home of its own for each test. */
function world() {
  const root = tempDir('baton-skill-');
  const project = join(root, 'project');
  const user = join(root, 'user');
  mkdirSync(project);
  mkdirSync(user);
  const install = (args: string[]) =>
    runBaton(['skill', 'install', ...args], { cwd: project, env: { HOME: user } });
  return { project, user, install };
}

/** This environment without the test runner's variables (openclaw prints no JSON under VITEST). */
function hostEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(
    Object.entries(process.env).filter(
      ([name]) => !name.startsWith('VITEST') && name !== 'NODE_ENV' && name !== 'TEST',
    ),
  );
}

/** The YAML front matter of a SKILL.md. */
function frontMatter(text: string): Record<string, unknown> {
  const match = /^---\n([\s\S]*?)\n---\n/.exec(text);
  if (!match) throw new Error('no front matter');
  return parse(match[1]!) as Record<string, unknown>;
}

describe('baton skill install', () => {
  it('claude (the default): .claude/skills/baton in the project, naming the absolute home, and the cron line', async () => {
    const { project, install } = world();
    const result = expectExit(await install([]), 0);
    const skillFile = join(project, '.claude', 'skills', 'baton', 'SKILL.md');
    const text = readFileSync(skillFile, 'utf8');
    const home = join(project, '.baton');
    expect(text).toContain(`--home ${home}`);
    expect(text).not.toContain('/path/to/.baton');
    expect(text).toContain('baton resolve');
    // Claude Code's rules for a skill's front matter: a lowercase name of up to 64 characters of
    // letters, digits and hyphens; a description of at most 1,024 characters without XML tags.
    const meta = frontMatter(text);
    expect(meta.name).toMatch(/^[a-z0-9-]{1,64}$/);
    expect(typeof meta.description).toBe('string');
    expect((meta.description as string).length).toBeLessThanOrEqual(1024);
    expect(meta.description).not.toMatch(/[<>]/);
    expect(result.stdout).toContain(
      `*/5 * * * * ${process.execPath} ${cliPath} check --quiet --home ${home}`,
    );
    expect(existsSync(home)).toBe(true);

    // Again: refused, the file untouched; with --force: replaced.
    writeFileSync(skillFile, 'edited by hand\n');
    const again = expectExit(await install([]), 2);
    expect(again.stderr).toContain(
      `${skillFile} already exists; nothing was written (use --force to replace)`,
    );
    expect(readFileSync(skillFile, 'utf8')).toBe('edited by hand\n');
    expectExit(await install(['--force']), 0);
    expect(readFileSync(skillFile, 'utf8')).toBe(text);
  });

  it('agents --global, a folder of your own, and systemd units; --json says what was written', async () => {
    const { project, user, install } = world();
    const global = JSON.parse(
      expectExit(await install(['--target', 'agents', '--global', '--json']), 0).stdout,
    );
    expect(global.skillDir).toBe(join(user, '.agents', 'skills', 'baton'));
    expect(global.written).toEqual([join(user, '.agents', 'skills', 'baton', 'SKILL.md')]);
    const gemini = JSON.parse(expectExit(await install(['--target', 'gemini', '--json']), 0).stdout);
    expect(gemini.written).toEqual([join(user, '.gemini', 'skills', 'baton', 'SKILL.md')]);
    const claudeGlobal = JSON.parse(expectExit(await install(['--global', '--json']), 0).stdout);
    expect(claudeGlobal.written).toEqual([join(user, '.claude', 'skills', 'baton', 'SKILL.md')]);
    const own = JSON.parse(
      expectExit(
        await install(['--target', './my/skills', '--heartbeat', 'systemd', '--json', '--home', '/srv/b']),
        0,
      ).stdout,
    );
    expect(own.skillDir).toBe(join(project, 'my', 'skills', 'baton'));
    const timer = join(user, '.config', 'systemd', 'user', 'baton-check.timer');
    const service = join(user, '.config', 'systemd', 'user', 'baton-check.service');
    expect(own.written).toEqual([join(own.skillDir, 'SKILL.md'), service, timer]);
    expect(readFileSync(service, 'utf8')).toContain(
      `ExecStart=${process.execPath} ${cliPath} check --quiet --home /srv/b`,
    );
    expect(readFileSync(timer, 'utf8')).toMatch(/OnUnitActiveSec=5min[\s\S]*WantedBy=timers.target/);
    expect(own.next).toEqual([
      'systemctl --user daemon-reload && systemctl --user enable --now baton-check.timer',
    ]);
  });

  it('a folder where the skill file goes is refused as an existing file (exit 2), not a crash', async () => {
    const { project, install } = world();
    const skillFile = join(project, '.claude', 'skills', 'baton', 'SKILL.md');
    mkdirSync(skillFile, { recursive: true });
    const result = expectExit(await install([]), 2);
    expect(result.stderr).toContain(
      `${skillFile} already exists; nothing was written (use --force to replace)`,
    );
    expect(existsSync(join(project, '.mcp.json'))).toBe(false);
  });

  it('refuses an unknown host or heartbeat with exit 2, writing nothing', async () => {
    const { project, install } = world();
    const typo = expectExit(await install(['--target', 'cluade']), 2);
    expect(typo.stderr).toContain(
      '--target "cluade": expected claude, codex, agents, openclaw, gemini, or a folder path',
    );
    const beat = expectExit(await install(['--heartbeat', 'hourly']), 2);
    expect(beat.stderr).toContain('--heartbeat "hourly": expected openclaw, cron, systemd, none');
    expect(existsSync(join(project, '.claude'))).toBe(false);
  });

  it('openclaw: the managed skills folder and one HEARTBEAT.md line; the real OpenClaw finds the skill ready', async () => {
    const { project, user, install } = world();
    const workspace = join(user, '.openclaw', 'workspace');
    mkdirSync(workspace, { recursive: true });
    writeFileSync(join(workspace, 'HEARTBEAT.md'), '# Heartbeat\n- check the inbox');
    expectExit(await install(['--target', 'openclaw']), 0);
    expectExit(await install(['--target', 'openclaw', '--force']), 0);
    const heartbeat = readFileSync(join(workspace, 'HEARTBEAT.md'), 'utf8');
    const home = join(project, '.baton');
    expect(heartbeat).toBe(
      `# Heartbeat\n- check the inbox\nRun \`baton check --quiet --home ${home}\` and report only BLOCKED lines.\n`,
    );
    // OpenClaw checks `metadata.openclaw.requires.bins`: a `baton` on PATH.
    const bin = join(user, 'bin');
    mkdirSync(bin);
    writeFileSync(join(bin, 'baton'), `#!/bin/sh\nexec ${process.execPath} ${cliPath} "$@"\n`);
    chmodSync(join(bin, 'baton'), 0o755);
    const { stdout } = await run(openclawNode, [openclawEntry, 'skills', 'info', 'baton', '--json'], {
      cwd: workspace,
      env: { ...hostEnv(), HOME: user, PATH: `${bin}:${process.env.PATH}` },
      timeout: 120_000,
    });
    const info = JSON.parse(stdout.slice(stdout.indexOf('{')));
    expect(info).toMatchObject({
      name: 'baton',
      filePath: join(user, '.openclaw', 'skills', 'baton', 'SKILL.md'),
      eligible: true,
      disabled: false,
      missing: { bins: [] },
    });
  }, 180_000);
});
