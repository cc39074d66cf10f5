import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BatonError } from '../../core/errors.js';
import { resolveHome } from '../../runtime/home.js';
import { EXIT } from '../exit-codes.js';
import { printJson } from '../format.js';
import type { GlobalOptions } from '../global-options.js';
import { MCP_HOSTS, type McpRegistration, mcpConfigOf, planMcpRegistration } from './mcp-hosts.js';

/** Agent hosts whose skills folder Baton knows. */
const SKILL_TARGETS = ['claude', 'codex', 'agents', 'openclaw', 'gemini'] as const;
const HEARTBEATS = ['openclaw', 'cron', 'systemd', 'none'] as const;
type HeartbeatKind = (typeof HEARTBEATS)[number];

interface SkillInstallOptions extends GlobalOptions {
  target?: string;
  global?: boolean;
  force?: boolean;
  heartbeat?: string;
  /** OpenClaw's workspace, where HEARTBEAT.md lives (default ~/.openclaw/workspace). */
  workspace?: string;
  /** `--no-mcp`: false, the host's MCP config is left alone. */
  mcp?: boolean;
}

/** The placeholder for the home in the skill's own SKILL.md; the installed copy names the real one. */
const HOME_PLACEHOLDER = '/path/to/.baton';
const SKILL_NAME = 'baton';
/** The line a heartbeat follows: the absolute home, so it works from any folder. */
const checkLine = (home: string) => `baton check --quiet --home ${home}`;

/** What an install writes and prints, decided before anything is written. */
interface SkillInstallPlan {
  target: string;
  home: string;
  skillDir: string;
  files: { path: string; content: string; mode: number }[];
  heartbeat: { kind: HeartbeatKind; path: string | null; line: string; append: boolean };
  /** What the user still has to do (a crontab line, systemctl). */
  next: string[];
  /** `baton mcp` registered in the host's MCP config (claude, codex, gemini, openclaw). */
  mcp: McpRegistration | null;
}

/**
 * Where each host looks for skills: Claude Code `.claude/skills` (project) or `~/.claude/skills`;
 * the shared `.agents/skills` (also Codex's); OpenClaw's managed `~/.openclaw/skills`; Gemini `~/.gemini/skills`.
 * Anything with a `/` is a skills folder of your own.
 */
function skillsFolder(target: string, options: { global: boolean; cwd: string; home: string }): string {
  const base = options.global ? options.home : options.cwd;
  switch (target) {
    case 'claude':
      return join(base, '.claude', 'skills');
    case 'agents':
    case 'codex':
      return join(base, '.agents', 'skills');
    case 'openclaw':
      return join(options.home, '.openclaw', 'skills');
    case 'gemini':
      return join(options.home, '.gemini', 'skills');
    default:
      if (!target.includes('/')) {
        throw new BatonError(
          'INVALID_ARGUMENT',
          `--target ${JSON.stringify(target)}: expected ${SKILL_TARGETS.join(', ')}, or a folder path containing / (e.g. ./skills)`,
        );
      }
      return resolve(options.cwd, target);
  }
}

/** The skill folder shipped with Baton (next to package.json). */
function shippedSkillDir(): string {
  for (let dir = dirname(fileURLToPath(import.meta.url)); ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'skill', 'SKILL.md')) && existsSync(join(dir, 'package.json'))) {
      return join(dir, 'skill');
    }
    if (dirname(dir) === dir) throw new Error('the skill folder is missing from this Baton installation');
  }
}

/** This CLI's file, absolute: what a scheduler or a host starts, as its PATH may lack `baton`. */
function cliPath(): string {
  return process.argv[1] ? resolve(process.argv[1]) : 'baton';
}

/** The command a scheduler (cron, systemd) runs: absolute node and CLI. */
function schedulerCommand(home: string): string {
  return `${process.execPath} ${cliPath()} check --quiet --home ${home}`;
}

/** Decides what `baton skill install` writes; pure apart from reading the shipped SKILL.md. */
function planSkillInstall(
  options: SkillInstallOptions,
  context: { cwd: string; userHome: string; skillText: string },
): SkillInstallPlan {
  const target = options.target ?? 'claude';
  const home = resolveHome(options, process.env, context.cwd);
  const skillDir = join(
    skillsFolder(target, { global: options.global ?? false, cwd: context.cwd, home: context.userHome }),
    SKILL_NAME,
  );
  const kind = heartbeatKind(options.heartbeat, target);
  const content = context.skillText.replaceAll(HOME_PLACEHOLDER, home);
  const files = [{ path: join(skillDir, 'SKILL.md'), content, mode: 0o644 }];
  const next: string[] = [];
  let heartbeat: SkillInstallPlan['heartbeat'];
  if (kind === 'openclaw') {
    const workspace = resolve(
      context.cwd,
      options.workspace ?? join(context.userHome, '.openclaw', 'workspace'),
    );
    heartbeat = {
      kind,
      path: join(workspace, 'HEARTBEAT.md'),
      line: `Run \`${checkLine(home)}\` and report only BLOCKED lines.`,
      append: true,
    };
    next.push(
      'OpenClaw 2026.9 and later: run `openclaw doctor --fix` once to move it into the heartbeat job',
    );
  } else if (kind === 'systemd') {
    const units = join(context.userHome, '.config', 'systemd', 'user');
    files.push(
      {
        path: join(units, 'baton-check.service'),
        content: `[Unit]\nDescription=Baton: run the steps that are due (${home})\n\n[Service]\nType=oneshot\nExecStart=${schedulerCommand(home)}\n`,
        mode: 0o644,
      },
      {
        path: join(units, 'baton-check.timer'),
        content: `[Unit]\nDescription=Baton heartbeat every 5 minutes (${home})\n\n[Timer]\nOnBootSec=1min\nOnUnitActiveSec=5min\nPersistent=true\n\n[Install]\nWantedBy=timers.target\n`,
        mode: 0o644,
      },
    );
    heartbeat = { kind, path: join(units, 'baton-check.timer'), line: schedulerCommand(home), append: false };
    next.push('systemctl --user daemon-reload && systemctl --user enable --now baton-check.timer');
  } else if (kind === 'cron') {
    const line = `*/5 * * * * ${schedulerCommand(home)}`;
    heartbeat = { kind, path: null, line, append: false };
    next.push(`add this line to your crontab (crontab -e): ${line}`);
  } else {
    heartbeat = { kind, path: null, line: checkLine(home), append: false };
  }
  const host = MCP_HOSTS.find((name) => name === target);
  const mcp =
    host === undefined || options.mcp === false
      ? null
      : planMcpRegistration(
          mcpConfigOf(host, {
            global: options.global ?? false,
            cwd: context.cwd,
            userHome: context.userHome,
            env: process.env,
          }),
          { command: process.execPath, args: [cliPath(), '--home', home, 'mcp'] },
          options.force === true,
        );
  // codex 0.171 reads a project's .codex/config.toml only in a project its user config trusts
  // (else it runs without the server, silently); trusting a folder is the user's decision.
  if (mcp !== null && host === 'codex' && options.global !== true) {
    const where = { global: true, cwd: context.cwd, userHome: context.userHome, env: process.env };
    next.push(
      `codex reads ${mcp.path} only in a trusted project: add [projects.${JSON.stringify(context.cwd)}] trust_level = "trusted" to ${mcpConfigOf('codex', where).path} (or trust it when codex asks), or install with --global`,
    );
  }
  return { target, home, skillDir, files, heartbeat, next, mcp };
}

function heartbeatKind(value: string | undefined, target: string): HeartbeatKind {
  if (value === undefined) return target === 'openclaw' ? 'openclaw' : 'cron';
  if ((HEARTBEATS as readonly string[]).includes(value)) return value as HeartbeatKind;
  throw new BatonError(
    'INVALID_ARGUMENT',
    `--heartbeat ${JSON.stringify(value)}: expected ${HEARTBEATS.join(', ')}`,
  );
}

/** Writes a file whole or not at all (a temporary file renamed over it). */
function writeAtomically(path: string, content: string, mode: number): void {
  mkdirSync(dirname(path), { recursive: true });
  const temporary = `${path}.baton-tmp-${process.pid}`;
  writeFileSync(temporary, content, { mode });
  renameSync(temporary, path);
}

/**
 * `baton skill install`: the skill folder where the host looks for skills, and its heartbeat: a
 * HEARTBEAT.md line (OpenClaw), systemd user units, or the cron line to add; each names the Baton
 * home by its absolute path. Refuses to overwrite what exists and differs without --force (exit 2,
 * nothing written); a second identical install writes the same files and keeps the MCP entry.
 */
export async function skillInstallCommand(options: SkillInstallOptions): Promise<number> {
  const skillText = readFileSync(join(shippedSkillDir(), 'SKILL.md'), 'utf8');
  const plan = planSkillInstall(options, { cwd: process.cwd(), userHome: homedir(), skillText });
  if (!options.force) {
    // A file that already says what this install would write is no conflict: installing twice is
    // the same as installing once.
    const existing = plan.files
      .filter((file) => existsSync(file.path) && !holds(file.path, file.content))
      .map((file) => file.path);
    if (existing.length > 0) {
      throw new BatonError(
        'INVALID_ARGUMENT',
        `${existing.join(', ')} already exist${existing.length === 1 ? 's' : ''}; nothing was written (use --force to replace)`,
      );
    }
  }
  for (const file of plan.files) writeAtomically(file.path, file.content, file.mode);
  // A host's config in the user's home may hold their tokens: kept private.
  if (plan.mcp?.content)
    writeAtomically(plan.mcp.path, plan.mcp.content, plan.mcp.path.startsWith(homedir()) ? 0o600 : 0o644);
  let heartbeatWritten = false;
  if (plan.heartbeat.append && plan.heartbeat.path)
    heartbeatWritten = appendHeartbeat(plan.heartbeat.path, plan);
  // The home the lines name exists, so every command run in the project finds it.
  if (!existsSync(plan.home)) mkdirSync(plan.home, { recursive: true, mode: 0o700 });
  if (options.json) {
    printJson({
      target: plan.target,
      home: plan.home,
      skillDir: plan.skillDir,
      written: plan.files.map((file) => file.path),
      heartbeat: { ...plan.heartbeat, written: heartbeatWritten },
      mcp: plan.mcp === null ? null : { host: plan.mcp.host, path: plan.mcp.path, action: plan.mcp.action },
      next: plan.next,
    });
    return EXIT.ok;
  }
  const lines = [`installed the Baton skill in ${plan.skillDir} (home ${plan.home})`];
  for (const file of plan.files.slice(1)) lines.push(`wrote ${file.path}`);
  if (plan.heartbeat.kind === 'openclaw') {
    lines.push(
      heartbeatWritten
        ? `added to ${plan.heartbeat.path}: ${plan.heartbeat.line}`
        : `${plan.heartbeat.path} already runs baton check: left as it is`,
    );
  }
  if (plan.mcp !== null)
    lines.push(
      plan.mcp.action === 'kept'
        ? `${plan.mcp.path} has a baton MCP server already: left as it is (--force replaces it)`
        : `${plan.mcp.action === 'added' ? 'registered' : 'replaced'} the Baton MCP server (baton mcp) in ${plan.mcp.path}`,
    );
  for (const step of plan.next) lines.push(`next: ${step}`);
  process.stdout.write(`${lines.join('\n')}\n`);
  return EXIT.ok;
}

/** Adds the heartbeat line once: a HEARTBEAT.md that already runs `baton check` is left alone. */
function appendHeartbeat(path: string, plan: SkillInstallPlan): boolean {
  const before = existsSync(path) ? readFileSync(path, 'utf8') : '';
  if (/\bbaton check\b/.test(before)) return false;
  const separator = before === '' || before.endsWith('\n') ? '' : '\n';
  writeAtomically(path, `${before}${separator}${plan.heartbeat.line}\n`, 0o644);
  return true;
}

/** Whether the file at `path` says `content` (a folder or an unreadable file there does not). */
function holds(path: string, content: string): boolean {
  try {
    return readFileSync(path, 'utf8') === content;
  } catch {
    return false;
  }
}
