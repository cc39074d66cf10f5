/**
 * Confined agent steps (sandbox: workspace) through the real baton binary and the real bwrap: a
 * fixture agent that tries to escape, a hang stopped at the step timeout with nothing of it left,
 * a sandbox that cannot start, and a plan refused where bubblewrap is missing.
 */
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { processesOfRun } from './helpers/agent-steps.js';
import {
  agentCommand,
  attempts,
  type BatonResult,
  batonJson,
  removeTempDirs,
  runBaton,
  runStatus,
  tempDir,
  waitFor,
  writePlan,
} from './helpers/cli.js';
import { legacyAgent, legacyState, readState, runLegacy, writeState } from './helpers/legacy.js';
import { fixturePlan, planDir, stepOf } from './helpers/plans.js';
import { describeWithBwrap } from './helpers/sandbox.js';
import { TRUSTED_FIXTURES } from './helpers/trusted-fixtures.js';

const leftovers: string[] = [];
afterAll(() => {
  removeTempDirs();
  for (const path of leftovers) rmSync(path, { force: true });
});

const runId = (result: BatonResult) => (JSON.parse(result.stdout) as { id: string }).id;

describeWithBwrap('sandbox: workspace', () => {
  it('the agent writes its workspace and its config folder, never the plan folder, the host /tmp or the database', async () => {
    const { dir, home } = planDir('baton-sandbox-escape-');
    const workspace = join(dir, 'work');
    const userHome = join(dir, 'user-home');
    mkdirSync(userHome);
    const hostTmp = join(tmpdir(), `baton-sandbox-escape-${process.pid}-${Date.now()}`);
    // Outside /tmp too: the plan's folder is under /tmp here, and so inside the private one.
    // On the host's read-only file system wherever the repository is (a clone under /tmp would be
    // in the sandbox's private /tmp, writable there and never on the host).
    const inRepo = join(homedir(), `.baton-sandbox-escape-${process.pid}`);
    leftovers.push(inRepo);
    const plan = writePlan(
      dir,
      fixturePlan(
        [
          {
            id: 'escape',
            instruction: 'try to get out',
            // The claude profile: its config folder (~/.claude) is one the sandbox leaves writable.
            agent: { command: agentCommand('agent-escape'), profile: 'claude' },
            requiredOutputs: ['escape-report.json'],
          },
        ],
        { workspace: './work', defaults: { sandbox: 'workspace', retry: { maxAttempts: 1 } } },
      ),
    );
    const result = await runBaton(['run', plan, '--json'], {
      home,
      env: {
        HOME: userHome,
        ESCAPE_OUTSIDE: join(dir, 'escaped.txt'),
        ESCAPE_READONLY: inRepo,
        ESCAPE_TMP: hostTmp,
        ESCAPE_DB: join(home, 'baton.db'),
        ESCAPE_CONFIG: join(userHome, '.claude', 'note.txt'),
      },
    });
    expect(result.code, result.stderr).toBe(0);
    const run = await runStatus(home, runId(result));
    expect(run.status).toBe('succeeded');
    const report = JSON.parse(readFileSync(join(workspace, 'escape-report.json'), 'utf8'));
    // Outside the workspace nothing reaches the host: the filesystem is read-only, and the plan's
    // folder (in /tmp here) is only the way to the workspace, in the agent's own /tmp.
    expect(report.readOnly).toEqual({ ok: false, code: 'EROFS' });
    expect(existsSync(inRepo)).toBe(false);
    expect(existsSync(join(dir, 'escaped.txt'))).toBe(false);
    // Its /tmp is its own: the write worked in there and left nothing in the host's.
    expect(report.tmp).toEqual({ ok: true });
    expect(existsSync(hostTmp)).toBe(false);
    // The Baton home is an empty folder to it: no database to read, and no copy of one.
    expect(report.db).toEqual({ ok: false, code: 'ENOENT' });
    expect(existsSync(join(workspace, 'db-copy'))).toBe(false);
    expect(existsSync(join(home, 'baton.db'))).toBe(true);
    // Its CLI's config folder is writable, and what it wrote there is on the host.
    expect(report.config).toEqual({ ok: true });
    expect(readFileSync(join(userHome, '.claude', 'note.txt'), 'utf8')).toBe('written by escape attempt 1');
  }, 60_000);

  it('a hanging agent and its grandchild, both ignoring SIGTERM, are stopped at the step timeout: nothing of the attempt is left', async () => {
    const { dir, home } = planDir('baton-sandbox-hang-');
    const plan = writePlan(
      dir,
      fixturePlan(
        [{ id: 'hang', instruction: 'hang' }],
        {
          // Long enough for both to start inside bwrap on a loaded machine (node and a child node
          // took up to 3.3 s at a load of 25 on 2 cores): the test looks for both before the stop.
          defaults: { sandbox: 'workspace', timeoutMs: '10s', retry: { maxAttempts: 1 } },
        },
        'agent-hang',
      ),
    );
    const running = runBaton(['run', plan, '--json'], {
      home,
      env: { HANG_IGNORE_TERM: '1', HANG_CHILD_PIDFILE: join(dir, 'child.pid') },
    });
    // Both processes run, carrying the attempt's marker, inside bwrap's namespaces.
    const seen = await waitFor(
      () => {
        const runs = existsSync(join(home, 'runs')) ? readdirSync(join(home, 'runs')) : [];
        const found = runs.flatMap((id: string) => processesOfRun(id));
        return found.length >= 2 ? found : undefined;
      },
      30_000,
      'the hanging agent and its grandchild',
    );
    const pidNs = (pid: number) => readlinkSync(`/proc/${pid}/ns/pid`);
    expect(seen.map((p) => pidNs(p.pid))).not.toContain(pidNs(process.pid));
    const result = await running;
    const id = runId(result);
    const [attempt] = await attempts(home, id, 'hang');
    expect(attempt?.failureClass).toBe('transient');
    expect(attempt?.message).toMatch(/timed out after 10000 ms/);
    expect(processesOfRun(id)).toEqual([]);
    // Nor bwrap itself: its command line names the workspace.
    expect(processesWithArgument(dir)).toEqual([]);
  }, 60_000);

  it('an agent the sandbox cannot start fails fatal at once, never run unconfined', async () => {
    const { dir, home } = planDir('baton-sandbox-nostart-');
    // A program inside the Baton home, which the sandbox hides, so bwrap cannot find it.
    mkdirSync(home, { recursive: true });
    const program = join(home, 'agent.sh');
    const ran = join(dir, 'ran.txt');
    writeFileSync(program, `#!/bin/sh\necho ran > ${ran}\n`);
    chmodSync(program, 0o755);
    const plan = writePlan(
      dir,
      fixturePlan([{ id: 'nostart', instruction: 'x', agent: { command: [program] } }], {
        defaults: { sandbox: 'workspace' },
      }),
    );
    // Trusted, so that what stops it is the sandbox, not the command policy.
    const env = { BATON_TRUSTED_AGENTS: `${TRUSTED_FIXTURES}:${program}` };
    const result = await runBaton(['run', plan, '--json'], { home, env });
    const run = await runStatus(home, runId(result));
    expect(run.status).toBe('blocked');
    const tries = await attempts(home, run.id, 'nostart');
    expect(tries.map((t) => t.failureClass)).toEqual(['fatal']);
    expect(tries[0]?.message).toMatch(/sandbox \(bwrap\) could not start the agent.*execvp/);
    expect(stepOf(run, 'nostart').status).toBe('blocked');
    expect(existsSync(ran)).toBe(false);
  }, 60_000);
});

describeWithBwrap('BATON_SANDBOX=workspace for state files', () => {
  it('baton step confines the agent: the state file cannot be read, nothing outside the workspace written', async () => {
    const dir = tempDir('baton-sandbox-legacy-');
    const statePath = writeState(dir, legacyState(['escape']));
    const hostTmp = join(tmpdir(), `baton-sandbox-legacy-${process.pid}-${Date.now()}`);
    const result = await runLegacy('step', statePath, {
      BATON_SANDBOX: 'workspace',
      STEP_AGENT_CMD: legacyAgent('agent-escape'),
      ESCAPE_OUTSIDE: join(homedir(), `.baton-sandbox-legacy-${process.pid}`),
      ESCAPE_READONLY: join(homedir(), `.baton-sandbox-legacy-${process.pid}`),
      ESCAPE_TMP: hostTmp,
      ESCAPE_DB: statePath,
      ESCAPE_CONFIG: join(homedir(), `.baton-sandbox-legacy-${process.pid}`),
    });
    leftovers.push(join(homedir(), `.baton-sandbox-legacy-${process.pid}`));
    expect(result.code, result.stderr).toBe(0);
    expect(readState(statePath).stepRuns.escape?.status).toBe('DONE');
    const report = JSON.parse(readFileSync(join(dir, 'escape-report.json'), 'utf8'));
    expect(report.readOnly).toEqual({ ok: false, code: 'EROFS' });
    expect(existsSync(hostTmp)).toBe(false);
    // The state file is this driver's database: /dev/null to the agent, and it cannot be read.
    expect(report.db.ok).toBe(false);
    expect(existsSync(join(dir, 'db-copy'))).toBe(false);
    expect(readState(statePath).stepRuns.escape?.tries).toBe(1);
  }, 60_000);

  it('BATON_SANDBOX=workspace where bwrap is missing is refused with exit 2, the state file untouched', async () => {
    const dir = tempDir('baton-sandbox-legacy-missing-');
    const statePath = writeState(dir, legacyState(['a']));
    const before = readFileSync(statePath, 'utf8');
    const result = await runLegacy('check', statePath, {
      BATON_SANDBOX: 'workspace',
      STEP_AGENT_CMD: legacyAgent('agent-succeed'),
      PATH: join(dir, 'no-bin'),
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(
      /BATON_SANDBOX=workspace cannot run here: bubblewrap \(bwrap\) is not on PATH/,
    );
    expect(readFileSync(statePath, 'utf8')).toBe(before);
  }, 60_000);
});

describeWithBwrap('baton agents', () => {
  it('says confinement works, having started a sandbox', async () => {
    const json = await batonJson<{ sandbox: { ok: boolean; bwrap: string; version: string } }>(['agents']);
    expect(json.sandbox).toMatchObject({ ok: true, version: expect.stringMatching(/bubblewrap/) });
    expect(existsSync(json.sandbox.bwrap)).toBe(true);
  }, 60_000);
});

describe('sandbox: workspace where bubblewrap is missing', () => {
  it('baton agents says confinement is unavailable, why, and the plan it would refuse', async () => {
    const { dir } = planDir('baton-sandbox-agents-');
    const plan = writePlan(dir, fixturePlan([{ id: 'b', instruction: 'y', sandbox: 'workspace' }]));
    const result = await runBaton(['agents', '--plan', plan], { env: { PATH: join(dir, 'no-bin') } });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/confinement \(sandbox: workspace\): ✗ unavailable/);
    expect(result.stdout).toMatch(/bubblewrap \(bwrap\) is not on PATH/);
    expect(result.stdout).toMatch(/fix: install bubblewrap/);
    expect(result.stdout).toMatch(/steps b ask for sandbox: workspace, which cannot run here/);
  }, 60_000);

  it('the plan is refused with exit 2 before anything is stored', async () => {
    const { dir, home } = planDir('baton-sandbox-missing-');
    const plan = writePlan(
      dir,
      fixturePlan([
        { id: 'a', instruction: 'x' },
        { id: 'b', instruction: 'y', sandbox: 'workspace' },
      ]),
    );
    // No bwrap on this PATH (the agent command and baton itself are absolute paths).
    const result = await runBaton(['run', plan], { home, env: { PATH: join(dir, 'no-bin') } });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(
      /step\(s\) b ask for sandbox: workspace.*bubblewrap \(bwrap\) is not on PATH/,
    );
    expect(existsSync(home)).toBe(false);
  }, 60_000);
});

/** Live processes (zombies excluded) with `text` in one of their arguments. */
function processesWithArgument(text: string): number[] {
  const pids: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'latin1');
      if (stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z')) continue;
      if (
        readFileSync(`/proc/${name}/cmdline`, 'utf8')
          .split('\0')
          .some((arg) => arg.includes(text))
      )
        pids.push(Number(name));
    } catch {}
  }
  return pids;
}
