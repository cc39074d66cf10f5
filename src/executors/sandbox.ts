/**
 * Confinement of an agent attempt (`sandbox: workspace`) with bubblewrap: the filesystem read-only
 * but for the workspace, the CLI's own config and cache folders (declared by its profile) and the
 * files Baton made for this attempt; a private /tmp; the Baton home and database hidden; the
 * network kept (agents need their provider). The agent runs in pid, IPC and UTS namespaces of its
 * own and a new session (no TIOCSTI onto a terminal), and dies with bwrap. bwrap itself does not
 * carry the attempt's marker, so a SIGTERM reaches the agent inside, never bwrap first (whose death
 * SIGKILLs everything inside); the marker is set inside with --setenv, so the sweep still finds
 * every process of the attempt.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, realpathSync, statSync, writeFileSync } from 'node:fs';
import { isAbsolute } from 'node:path';
import { BatonError } from '../core/errors.js';
import type { Plan } from '../core/plan/types.js';
import type { WritablePath } from './agent-profiles/types.js';
import type { AttemptMarker } from './attempt-processes.js';
import { DEFAULT_EXEC_PATH, locateProgram } from './program-lookup.js';

export type SandboxProbe =
  | { ok: true; bwrap: string; version: string | null }
  | { ok: false; problem: string; fix: string };

/** What a confined attempt needs to know beyond its agent command. */
export interface SandboxSpec {
  /** bwrap, as the probe found it. */
  bwrap: string;
  /** Folders and files the agent must not see: the Baton home, a database file outside it. */
  hidden: readonly string[];
}

/** One attempt's command, confined. */
interface ConfineRequest extends SandboxSpec {
  workspace: string;
  /** The profile's config and cache folders. */
  writable: readonly WritablePath[];
  /** Files and folders Baton made for this attempt (gemini's settings overlay): bound in last. */
  attemptPaths: readonly string[];
  /**
   * Files the plan's command names (its program and script, never the prompt): each stays visible
   * read-only where the sandbox would hide it, e.g. an agent installed under /tmp (see programRoots).
   */
  programFiles?: readonly string[];
  /** The program the command policy checked, and the command's argv (argv[0] is replaced by it). */
  executable: string;
  argv: readonly string[];
  env: NodeJS.ProcessEnv;
  marker: AttemptMarker | undefined;
}

/** The namespaces and session every confined attempt gets; the probe tries exactly these. */
const ISOLATION = ['--unshare-pid', '--unshare-ipc', '--unshare-uts', '--die-with-parent', '--new-session'];
const BASE_MOUNTS = ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc'];
const PRIVATE_TMP = ['/tmp', '/var/tmp'];
const PROBE_TIMEOUT_MS = 10_000;

const probes = new Map<string, SandboxProbe>();

/**
 * Whether confinement works here: bwrap on `PATH` (of the environment given) actually starts a
 * sandbox with the namespaces and mounts attempts use (running `bwrap --version` inside). Cached per
 * bwrap binary; a failure says why (missing binary, user namespaces refused, …) and how to fix it.
 */
export function probeSandbox(env: Readonly<Record<string, string | undefined>> = process.env): SandboxProbe {
  const pathEnv = env.PATH ?? DEFAULT_EXEC_PATH;
  const bwrap = locateProgram('bwrap', { cwd: '/', pathEnv });
  if (bwrap === null) {
    return {
      ok: false,
      problem: `bubblewrap (bwrap) is not on PATH (${pathEnv})`,
      fix: 'install bubblewrap (apt-get install bubblewrap, dnf install bubblewrap, apk add bubblewrap), or remove sandbox: workspace',
    };
  }
  const cached = probes.get(bwrap);
  if (cached) return cached;
  const run = spawnSync(bwrap, [...ISOLATION, ...BASE_MOUNTS, '--tmpfs', '/tmp', '--', bwrap, '--version'], {
    encoding: 'utf8',
    timeout: PROBE_TIMEOUT_MS,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const said = `${run.stderr ?? ''}`.trim().split('\n').at(-1) ?? '';
  let probe: SandboxProbe;
  if (run.status === 0) {
    probe = { ok: true, bwrap, version: `${run.stdout}`.trim() || null };
  } else if (run.error) {
    probe = {
      ok: false,
      problem: `${bwrap} could not run: ${run.error.message}`,
      fix: 'reinstall bubblewrap',
    };
  } else {
    const refused = /namespace|uid map|Operation not permitted|Permission denied|setting up/i.test(said);
    probe = {
      ok: false,
      problem: `${bwrap} cannot start a sandbox here${refused ? ' (user namespaces refused)' : ''}: ${said || `exit ${run.status ?? run.signal}`}`,
      fix: refused
        ? 'allow user namespaces: sysctl kernel.unprivileged_userns_clone=1, or on Ubuntu 24.04 kernel.apparmor_restrict_unprivileged_userns=0 (or an AppArmor profile for bwrap); in a container, run it with unshare allowed (e.g. docker --security-opt seccomp=unconfined --cap-add SYS_ADMIN)'
        : 'run the bwrap command above by hand to see what it needs',
    };
  }
  probes.set(bwrap, probe);
  return probe;
}

/**
 * Refuses (SANDBOX_UNAVAILABLE, exit 2) a plan whose steps ask for `sandbox: workspace` where
 * bubblewrap cannot confine them: checked before a run is stored, never run unconfined instead.
 */
export function assertSandboxAvailable(
  plan: Pick<Plan, 'steps'>,
  env: Readonly<Record<string, string | undefined>> = process.env,
): void {
  const confined = plan.steps.filter((step) => step.sandbox === 'workspace').map((step) => step.id);
  if (confined.length === 0) return;
  const probe = probeSandbox(env);
  if (probe.ok) return;
  const shown = confined.length > 3 ? `${confined.slice(0, 3).join(', ')}, …` : confined.join(', ');
  throw new BatonError(
    'SANDBOX_UNAVAILABLE',
    `step(s) ${shown} ask for sandbox: workspace, which cannot run here: ${probe.problem}; fix: ${probe.fix} (baton agents shows the check)`,
  );
}

/**
 * `BATON_SANDBOX` for state-file steps (`baton check|step <state.json>`), which have no plan to say
 * it: `workspace` confines every agent (refused where it cannot, as a plan would be), `none` or
 * unset does not. Returns bwrap's path when confined.
 */
export function sandboxFromEnv(env: Readonly<Record<string, string | undefined>>): string | undefined {
  const mode = env.BATON_SANDBOX?.trim() ?? '';
  if (mode === '' || mode === 'none') return undefined;
  if (mode !== 'workspace') {
    throw new BatonError(
      'CONFIG_INVALID',
      `BATON_SANDBOX must be workspace or none, got ${JSON.stringify(env.BATON_SANDBOX)}`,
    );
  }
  const probe = probeSandbox(env);
  if (probe.ok) return probe.bwrap;
  throw new BatonError(
    'SANDBOX_UNAVAILABLE',
    `BATON_SANDBOX=workspace cannot run here: ${probe.problem}; fix: ${probe.fix} (baton agents shows the check)`,
  );
}

/**
 * bwrap's argv for one attempt, and the environment bwrap itself gets (the marker taken out and set
 * inside instead). Mounts go parents first, so a hidden home inside the workspace stays hidden and
 * a workspace inside /tmp stays visible; hidden folders are empty and read-only.
 */
export function confineCommand(request: ConfineRequest): {
  executable: string;
  argv: string[];
  env: NodeJS.ProcessEnv;
} {
  const mounts: Mount[] = [];
  for (const dir of PRIVATE_TMP) mounts.push({ path: dir, args: ['--tmpfs', dir] });
  const tmpdir = request.env.TMPDIR;
  if (tmpdir && isAbsolute(tmpdir) && existsSync(tmpdir)) {
    const real = realPath(tmpdir);
    mounts.push({ path: real, args: ['--tmpfs', real] });
  }
  const bind = (path: string) => ({ path, args: ['--bind', path, path] });
  // First at their depth, so that a hidden path at the same place still wins.
  for (const root of programRoots([request.executable, ...(request.programFiles ?? [])], request.hidden)) {
    mounts.push({ path: root, args: ['--ro-bind', root, root], first: true });
  }
  mounts.push(bind(realPath(request.workspace)));
  for (const entry of request.writable) {
    const path = ensureWritable(entry);
    if (path !== undefined) mounts.push(bind(path));
  }
  const readOnly: string[] = [];
  for (const hidden of request.hidden) {
    const stat = statSync(hidden, { throwIfNoEntry: false });
    if (!stat) continue;
    const path = realPath(hidden);
    if (stat.isDirectory()) {
      mounts.push({ path, args: ['--tmpfs', path] });
      readOnly.push(path);
    } else mounts.push({ path, args: ['--ro-bind', '/dev/null', path] });
  }
  // Last at their depth: what Baton made for the agent may lie inside the hidden home.
  for (const path of request.attemptPaths)
    if (existsSync(path)) mounts.push({ ...bind(realPath(path)), last: true });
  const ordered = mounts
    .map((mount, index) => ({ mount, index }))
    .sort(
      (a, b) =>
        depth(a.mount.path) - depth(b.mount.path) ||
        Number(b.mount.first ?? false) - Number(a.mount.first ?? false) ||
        Number(a.mount.last ?? false) - Number(b.mount.last ?? false) ||
        a.index - b.index,
    )
    .flatMap(({ mount }) => mount.args);
  const env: NodeJS.ProcessEnv = { ...request.env };
  const setenv: string[] = [];
  for (const entry of request.marker ?? []) {
    const eq = entry.indexOf('=');
    const name = entry.slice(0, eq);
    delete env[name];
    setenv.push('--setenv', name, entry.slice(eq + 1));
  }
  const argv = [
    request.bwrap,
    ...ISOLATION,
    '--json-status-fd',
    '3',
    ...BASE_MOUNTS,
    ...ordered,
    ...readOnly.flatMap((path) => ['--remount-ro', path]),
    ...setenv,
    '--chdir',
    realPath(request.workspace),
    '--',
    request.executable,
    ...request.argv.slice(1),
  ];
  return { executable: request.bwrap, argv, env };
}

/**
 * What must stay readable for the command to run where the sandbox makes a private /tmp: for each
 * file the command names that lies under /tmp, /var/tmp or $TMPDIR, its folder, or the outermost
 * `node_modules` holding it (an npm-installed CLI needs its dependencies). Never anything inside a
 * hidden path (the Baton home stays hidden).
 */
function programRoots(files: readonly string[], hidden: readonly string[]): string[] {
  const privateRoots = [...PRIVATE_TMP, process.env.TMPDIR]
    .filter((dir): dir is string => dir !== undefined && isAbsolute(dir) && existsSync(dir))
    .map(realPath);
  const hiddenReal = hidden.filter((path) => existsSync(path)).map(realPath);
  const inside = (path: string, root: string) => path === root || path.startsWith(`${root}/`);
  const roots = new Set<string>();
  for (const file of files) {
    if (!isAbsolute(file) || !statSync(file, { throwIfNoEntry: false })?.isFile()) continue;
    const real = realPath(file);
    if (!privateRoots.some((root) => inside(real, root))) continue;
    const modules = real.indexOf('/node_modules/');
    const root =
      modules === -1 ? real.slice(0, real.lastIndexOf('/')) : real.slice(0, modules + '/node_modules'.length);
    // A hidden path below the root is mounted after it (deeper), so it stays hidden.
    if (hiddenReal.some((path) => inside(root, path))) continue;
    roots.add(root);
  }
  return [...roots];
}

/**
 * Why bwrap did not start the agent, or undefined when it did (or the attempt was stopped): bwrap
 * reports the agent's exit on its status descriptor (`{"exit-code": N}`); a run that ended by itself
 * without that record failed in bwrap's own setup, and bwrap's `bwrap: …` lines say why.
 */
export function sandboxStartFailure(run: {
  statusText?: string | undefined;
  exitCode: number | null;
  timedOut: boolean;
  aborted: boolean;
  stderrTail: string;
}): string | undefined {
  if (run.timedOut || run.aborted || run.exitCode === null) return undefined;
  if (/"exit-code"\s*:/.test(run.statusText ?? '')) return undefined;
  const said = run.stderrTail
    .split('\n')
    .filter((line) => line.startsWith('bwrap: '))
    .join('; ');
  return `the sandbox (bwrap) could not start the agent, so it did not run: ${said || `bwrap exited with code ${run.exitCode}`}; check with baton agents`;
}

interface Mount {
  path: string;
  args: string[];
  first?: boolean;
  last?: boolean;
}

function depth(path: string): number {
  return path.split('/').filter((part) => part !== '').length;
}

function realPath(path: string): string {
  try {
    return realpathSync.native(path);
  } catch {
    return path;
  }
}

/**
 * The path to bind for a profile's entry: a missing folder is created (as the CLI would), a missing
 * file with its initial content when it has one, else skipped.
 */
function ensureWritable(entry: WritablePath): string | undefined {
  if (!isAbsolute(entry.path)) return undefined;
  try {
    if (entry.kind === 'dir') mkdirSync(entry.path, { recursive: true, mode: 0o700 });
    else if (!existsSync(entry.path)) {
      if (entry.initialContent === undefined) return undefined;
      // 'wx': never over a file that appeared meanwhile.
      writeFileSync(entry.path, entry.initialContent, { flag: 'wx', mode: 0o600 });
    }
  } catch {
    if (!existsSync(entry.path)) return undefined;
  }
  return realPath(entry.path);
}
