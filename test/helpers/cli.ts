/**
 * Helpers for end-to-end tests of the `baton` CLI: they run the built `baton` command
 * (`dist/cli/baton.cjs`, built by `npm run build`) as a real child process, never through a shell,
 * each test with its own Baton home in a temporary folder.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, expect } from 'vitest';
import { stringify } from 'yaml';
import { TRUSTED_FIXTURES } from './trusted-fixtures.js';

export const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
/** The built `baton` command; BATON_TEST_CLI may name another build of it (e.g. a private snapshot). */
export const cliPath = process.env.BATON_TEST_CLI ?? join(repoRoot, 'dist', 'cli', 'baton.cjs');
/** The CLI as an ES module (`node dist/cli/main.js`), which the launcher loads for all but an idle check. */
export const esmCliPath = join(repoRoot, 'dist', 'cli', 'main.js');
export const fixturesDir = join(repoRoot, 'test', 'fixtures');

/** Absolute path of a fixture script, e.g. `fixture('agent-count')`. */
export function fixture(name: string): string {
  const file = join(fixturesDir, name.endsWith('.mjs') ? name : `${name}.mjs`);
  if (!existsSync(file)) throw new Error(`no fixture ${file}`);
  return file;
}

/** An agent command (argv) running a fixture with this very Node, for `defaults.agent.command`. */
export function agentCommand(name: string): string[] {
  return [process.execPath, fixture(name)];
}

export interface BatonOptions {
  /** Passed as `--home <dir>` before the command. */
  home?: string;
  /** Working directory of the baton process. Default: the repository root. */
  cwd?: string;
  /** Added to the environment (which has no BATON_*, FORCE_COLOR or NO_COLOR of the test process). */
  env?: Record<string, string | undefined>;
  /** The process is SIGKILLed after this long and the call rejects. Default 60 000 ms. */
  timeoutMs?: number;
  /** The entry point to run instead of the `baton` command (e.g. esmCliPath). */
  cli?: string;
}

export interface BatonResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  durationMs: number;
}

function assertBuilt(cli: string): void {
  if (!existsSync(cli)) throw new Error(`${cli} is missing: build first (npm run build)`);
}

function childEnv(extra: BatonOptions['env'] = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    // The developer's colour settings would put escapes in the output the tests read.
    if (!name.startsWith('BATON_') && name !== 'FORCE_COLOR' && name !== 'NO_COLOR') env[name] = value;
  }
  env.BATON_TRUSTED_AGENTS = TRUSTED_FIXTURES;
  for (const [name, value] of Object.entries(extra)) {
    if (value === undefined) delete env[name];
    else env[name] = value;
  }
  return env;
}

function argvOf(args: readonly string[], options: BatonOptions): string[] {
  return [options.cli ?? cliPath, ...(options.home === undefined ? [] : ['--home', options.home]), ...args];
}

/** A baton process that keeps running (a worker): its output is collected as it arrives. */
export interface BatonProcess {
  child: ChildProcess;
  pid: number;
  stdout(): string;
  stderr(): string;
  /** Resolves when the process has exited, with its code or signal. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const liveProcesses = new Set<ChildProcess>();

/** Starts `baton <args>` and returns at once; see `stopProcesses` for clean-up. */
export function spawnBaton(args: readonly string[], options: BatonOptions = {}): BatonProcess {
  assertBuilt(options.cli ?? cliPath);
  const child = spawn(process.execPath, argvOf(args, options), {
    cwd: options.cwd ?? repoRoot,
    env: childEnv(options.env),
    stdio: ['ignore', 'pipe', 'pipe'],
    shell: false,
  });
  liveProcesses.add(child);
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
  });
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code, signal) => {
      liveProcesses.delete(child);
      resolve({ code, signal });
    });
  });
  if (child.pid === undefined) throw new Error('baton did not start');
  return { child, pid: child.pid, stdout: () => stdout, stderr: () => stderr, exited };
}

/** Runs `baton <args>` to the end. Rejects only if it outlives `timeoutMs` (it is then killed). */
export async function runBaton(args: readonly string[], options: BatonOptions = {}): Promise<BatonResult> {
  const started = Date.now();
  const proc = spawnBaton(args, options);
  const timeoutMs = options.timeoutMs ?? 60_000;
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      proc.child.kill('SIGKILL');
      reject(
        new Error(
          `baton ${args.join(' ')} did not finish within ${timeoutMs} ms\nstdout: ${proc.stdout()}\nstderr: ${proc.stderr()}`,
        ),
      );
    }, timeoutMs);
  });
  try {
    const { code, signal } = await Promise.race([proc.exited, timedOut]);
    return { code, signal, stdout: proc.stdout(), stderr: proc.stderr(), durationMs: Date.now() - started };
  } finally {
    clearTimeout(timer);
  }
}

/** Runs `baton <args> --json` expecting exit code `expectCode` (default 0) and parses stdout. */
export async function batonJson<T = unknown>(
  args: readonly string[],
  options: BatonOptions = {},
  expectCode: number | readonly number[] = 0,
): Promise<T> {
  const result = await runBaton([...args, '--json'], options);
  const codes = typeof expectCode === 'number' ? [expectCode] : expectCode;
  if (result.code === null || !codes.includes(result.code)) {
    throw new Error(
      `baton ${args.join(' ')} --json exited ${result.code} (expected ${codes.join(' or ')})\nstdout: ${result.stdout}\nstderr: ${result.stderr}`,
    );
  }
  try {
    return JSON.parse(result.stdout) as T;
  } catch (error) {
    throw new Error(
      `baton ${args.join(' ')} --json printed no JSON (exit ${result.code}): ${error}\nstdout: ${result.stdout}\nstderr: ${result.stderr}`,
    );
  }
}

/** The parts of `status <run> --json` the tests read. */
export interface RunJson {
  id: string;
  status: string;
  blockedReason: string | null;
  attemptsTotal: number;
  workspace: string;
  createdAt: number;
  steps: {
    stepId: string;
    status: string;
    attempt: number;
    tries: number;
    dueAt: number | null;
    lastError: string | null;
    lastFailureClass: string | null;
    blockedReason: string | null;
    leaseOwner: string | null;
  }[];
}

export interface EventJson {
  seq: number;
  type: string;
  at: number;
  stepId?: string;
  attempt?: number;
  [field: string]: unknown;
}

export interface AttemptJson {
  stepId: string;
  attempt: number;
  outcome: string;
  failureClass: string | null;
  message: string | null;
  summary: string | null;
  logPath: string | null;
  outputs: { path: string; size: number; sha256: string }[];
  startedAt: number | null;
  endedAt: number | null;
  exitCode: number | null;
  usage: { inputTokens: number; outputTokens: number; costUsd: number } | null;
  /** The agent CLI's session it started or continued (`agent.resume`), from its step.session event. */
  session?: { sessionId: string; resumed: boolean; reason?: string };
}

/** `status <run> --json` (exit 0 or 1: a blocked or cancelled run exits 1). */
export function runStatus(home: string, runId: string): Promise<RunJson> {
  return batonJson<RunJson>(['status', runId], { home }, [0, 1]);
}

export function timeline(home: string, runId: string): Promise<EventJson[]> {
  return batonJson<EventJson[]>(['timeline', runId], { home });
}

export function attempts(home: string, runId: string, stepId: string): Promise<AttemptJson[]> {
  return batonJson<AttemptJson[]>(['logs', runId, stepId], { home });
}

/** Sends `signal` to every baton process still running, and waits for them to exit. */
export async function stopProcesses(signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
  const waits = [...liveProcesses].map(
    (child) =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('close', () => resolve());
        child.kill(signal);
      }),
  );
  await Promise.all(waits);
}

const tempDirs: string[] = [];

/** A new empty folder under the OS temp folder; removed by `removeTempDirs`. */
export function tempDir(prefix = 'baton-cli-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  tempDirs.push(dir);
  return dir;
}

export function removeTempDirs(): void {
  for (const dir of tempDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
}

/** Writes a plan as YAML (default) or JSON into `dir` and returns its path. */
export function writePlan(
  dir: string,
  plan: unknown,
  options: { format?: 'yaml' | 'json'; name?: string } = {},
): string {
  const format = options.format ?? 'yaml';
  const file = join(dir, options.name ?? `plan.${format === 'json' ? 'json' : 'yaml'}`);
  writeFileSync(file, format === 'json' ? `${JSON.stringify(plan, null, 2)}\n` : stringify(plan));
  return file;
}

/** One line of agent-count's COUNT_FILE. */
export interface CountLine {
  run: string;
  step: string;
  attempt: number;
  pid: number;
}

/** The lines of an agent-count file (none when it does not exist yet). */
export function readCounts(file: string): CountLine[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => {
      const [run, step, attempt, pid] = line.trim().split(' ');
      if (run === undefined || step === undefined || attempt === undefined || pid === undefined) {
        throw new Error(`malformed count line: ${JSON.stringify(line)}`);
      }
      return { run, step, attempt: Number(attempt), pid: Number(pid) };
    });
}

/** How many count lines each `<run> <step>` has. */
export function countByStep(lines: readonly CountLine[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const line of lines) {
    const key = `${line.run} ${line.step}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return counts;
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Polls `predicate` every `intervalMs` until it returns a truthy value, which is returned. */
export async function waitFor<T>(
  predicate: () => T | Promise<T>,
  timeoutMs: number,
  what = 'condition',
  intervalMs = 25,
): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await predicate();
    if (value) return value as NonNullable<T>;
    if (Date.now() >= deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(intervalMs);
  }
}

/**
 * Whether a process is alive. A zombie counts as dead: a killed orphan is reparented to pid 1,
 * and the init of some containers reaps only now and then.
 */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ESRCH') return false;
    throw error;
  }
  try {
    return !/^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, 'utf8'));
  } catch {
    return process.platform !== 'linux';
  }
}

/**
 * Kills agents left running (e.g. orphans of a killed worker), given their count-file lines. A pid is
 * only signalled while its environment still names that very attempt, so a reused pid is left alone.
 */
export function killAgents(lines: readonly CountLine[]): void {
  for (const line of lines) {
    if (line.pid <= 1 || !isAlive(line.pid)) continue;
    let environ: string;
    try {
      environ = readFileSync(`/proc/${line.pid}/environ`, 'utf8');
    } catch {
      continue;
    }
    const vars = new Set(environ.split('\u0000'));
    const ours =
      vars.has(`BATON_RUN_ID=${line.run}`) &&
      vars.has(`BATON_STEP_ID=${line.step}`) &&
      vars.has(`BATON_ATTEMPT=${line.attempt}`);
    if (!ours) continue;
    try {
      process.kill(line.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
}

/** Asserts the exit code, showing the output of the command when it differs. */
export function expectExit(result: BatonResult, code: number): BatonResult {
  if (result.code !== code) {
    throw new Error(
      `expected exit code ${code}, got ${result.code ?? result.signal}\nstdout: ${result.stdout}\nstderr: ${result.stderr}`,
    );
  }
  return result;
}

/** Exit 2 with one `baton: ` message naming what it must, nothing on stdout, no stack trace. */
export function expectRefused(result: BatonResult, ...patterns: (string | RegExp)[]): void {
  expectExit(result, 2);
  expect(result.stdout).toBe('');
  expect(result.stderr).toMatch(/^baton: /);
  expect(result.stderr).not.toMatch(/internal error|RangeError|\n\s+at /);
  for (const pattern of patterns) {
    if (typeof pattern === 'string') expect(result.stderr).toContain(pattern);
    else expect(result.stderr).toMatch(pattern);
  }
}

/** `baton run <file> --detach` from the file's folder with a home that does not exist yet. */
export async function runPlanFile(dir: string, name: string, ...args: string[]) {
  const home = join(dir, 'home');
  const result = await runBaton(['run', name, '--detach', ...args], { home, cwd: dir });
  return { result, home };
}

/**
 * The count files of a test file's agents, for crash tests: after each test its baton processes
 * are stopped and the agents those files name are killed, since an agent of a killed worker or
 * check runs on as an orphan. Push each test's count file onto the returned list.
 */
export function stopAgentsAfterEach(): string[] {
  const countFiles: string[] = [];
  afterEach(async () => {
    await stopProcesses();
    for (const file of countFiles.splice(0)) killAgents(readCounts(file));
  });
  return countFiles;
}
