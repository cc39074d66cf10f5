/**
 * Workspace checkpoints (`checkpoint: workspace`) through the real `baton` command, a real git and
 * a fixture agent that changes files as its prompt says. The seed's stale report: `analyse` writes
 * analysis.md and extra.md, `report` builds report.md from the analysis; after `rerun --from
 * analyse` whose new analyse writes only analysis.md, extra.md is gone and report.md is rebuilt.
 * `diff --files` and `rollback` show and undo exactly one step's changes; `fork --from` starts from
 * the files before the step; a SIGKILLed rollback leaves the old or the new tree, never a mix.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, expect, it } from 'vitest';
import { restoreWorkspace, snapshotWorkspace } from '../src/executors/workspace-checkpoints.js';
import { Baton } from '../src/index.js';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.js';
import {
  agentCommand,
  batonJson,
  expectExit,
  expectRefused,
  removeTempDirs,
  runBaton,
  runStatus,
  spawnBaton,
  stopProcesses,
  timeline,
  waitFor,
  writePlan,
} from './helpers/cli.js';
import { startTestConsole, withSession } from './helpers/console.js';
import { describeWithGit } from './helpers/git.js';
import { callOk, callRefused, closeClients, mcpClient } from './helpers/mcp.js';
import { planDir } from './helpers/plans.js';

const TEST_TIMEOUT = 120_000;

afterEach(async () => {
  await closeClients();
  await stopProcesses();
});
afterAll(() => removeTempDirs());

/** The seed's plan: analyse (analysis.md, and extra.md when EXTRA is set), then report from it. */
function reportPlan(extra: Record<string, unknown> = {}) {
  return {
    name: 'stale-report',
    defaults: {
      agent: { command: agentCommand('agent-files.mjs') },
      retry: { maxAttempts: 1 },
      checkpoint: 'workspace',
    },
    steps: [
      {
        id: 'analyse',
        instruction: 'write analysis.md analysis v%VERSION%\nwrite-if EXTRA extra.md extra notes',
      },
      { id: 'report', dependsOn: ['analyse'], instruction: 'derive analysis.md report.md' },
    ],
    ...extra,
  };
}

/** The workspace's files (without the Baton home), sorted, with their contents. */
function filesOf(dir: string, skip = 'home'): Record<string, string> {
  const found: Record<string, string> = {};
  const walk = (folder: string, prefix: string) => {
    for (const entry of readdirSync(folder, { withFileTypes: true })) {
      if (prefix === '' && entry.name === skip) continue;
      const rel = `${prefix}${entry.name}`;
      if (entry.isDirectory()) walk(join(folder, entry.name), `${rel}/`);
      else found[rel] = readFileSync(join(folder, entry.name), 'utf8');
    }
  };
  walk(dir, '');
  return found;
}

async function runOnce(home: string, dir: string, env: Record<string, string>) {
  const file = writePlan(dir, reportPlan());
  const result = await runBaton(['run', file, '--id', 'daily'], { home, cwd: dir, env });
  expectExit(result, 0);
  return file;
}

describeWithGit('workspace checkpoints', () => {
  it(
    'rerun --from analyse puts the files back: the stale extra.md is gone and report.md is rebuilt',
    async () => {
      const { dir, home } = planDir('baton-ckpt-');
      await runOnce(home, dir, { VERSION: '1', EXTRA: '1' });
      expect(filesOf(dir)).toMatchObject({
        'analysis.md': 'analysis v1\n',
        'extra.md': 'extra notes\n',
        'report.md': 'built from: analysis v1\n',
      });
      const rerun = await runBaton(['rerun', 'daily', '--from', 'analyse'], { home, cwd: dir });
      expectExit(rerun, 0);
      expect(rerun.stdout).toContain('files: put back as they were before analyse');
      // Before anything runs again, the folder is as it was before analyse first ran.
      expect(Object.keys(filesOf(dir))).toEqual(['plan.yaml']);
      expectExit(await runBaton(['check'], { home, cwd: dir, env: { VERSION: '2' } }), 0);
      expect(filesOf(dir)).toEqual({
        'plan.yaml': readFileSync(join(dir, 'plan.yaml'), 'utf8'),
        'analysis.md': 'analysis v2\n',
        'report.md': 'built from: analysis v2\n',
      });
      const restored = (await timeline(home, 'daily')).filter((e) => e.type === 'run.files_restored');
      expect(restored).toHaveLength(1);
      expect(restored[0]).toMatchObject({ stepId: 'analyse', cause: 'rerun' });
    },
    TEST_TIMEOUT,
  );

  it(
    '--keep-files reruns on the files as they are; a plan without checkpoints keeps them without a word',
    async () => {
      const { dir, home } = planDir('baton-ckpt-');
      await runOnce(home, dir, { VERSION: '1', EXTRA: '1' });
      const rerun = await runBaton(['rerun', 'daily', '--from', 'analyse', '--keep-files'], {
        home,
        cwd: dir,
      });
      expectExit(rerun, 0);
      expect(rerun.stdout).toContain('files: kept as they are (--keep-files)');
      expectExit(await runBaton(['check'], { home, cwd: dir, env: { VERSION: '2' } }), 0);
      expect(filesOf(dir)['extra.md']).toBe('extra notes\n');

      const plain = planDir('baton-ckpt-');
      const file = writePlan(
        plain.dir,
        reportPlan({ defaults: { agent: { command: agentCommand('agent-files.mjs') } } }),
      );
      expectExit(
        await runBaton(['run', file, '--id', 'plain'], {
          home: plain.home,
          cwd: plain.dir,
          env: { EXTRA: '1' },
        }),
        0,
      );
      const again = await runBaton(['rerun', 'plain', '--from', 'analyse'], {
        home: plain.home,
        cwd: plain.dir,
      });
      expectExit(again, 0);
      expect(again.stdout).not.toContain('files:');
      expect(existsSync(join(plain.dir, 'extra.md'))).toBe(true);
      expect(existsSync(join(plain.home, 'checkpoints.git'))).toBe(false);
    },
    TEST_TIMEOUT,
  );

  it(
    'diff --files lists what each step added, changed and removed with a unified diff; rollback undoes exactly one step',
    async () => {
      const { dir, home } = planDir('baton-ckpt-');
      writeFileSync(join(dir, 'analysis.md'), 'old analysis\n');
      await runOnce(home, dir, { VERSION: '1', EXTRA: '1' });
      // A checkpoint's private index copy left by a killed process goes; a live process's stays.
      const stray = join(home, 'checkpoints', 'tmp', `${Buffer.from('daily').toString('hex')}.4194305.k1`);
      const live = join(
        home,
        'checkpoints',
        'tmp',
        `${Buffer.from('daily').toString('hex')}.${process.pid}.k2`,
      );
      writeFileSync(stray, '');
      writeFileSync(live, '');
      const diff = await batonJson<{
        steps: { stepId: string; changes: { path: string; change: string }[]; patch: string }[];
      }>(['diff', 'daily', '--files'], { home, cwd: dir });
      expect([existsSync(stray), existsSync(live)]).toEqual([false, true]);
      expect(diff.steps.map((s) => s.stepId)).toEqual(['analyse', 'report']);
      expect(diff.steps[0]!.changes).toEqual([
        { path: 'analysis.md', change: 'changed' },
        { path: 'extra.md', change: 'added' },
      ]);
      expect(diff.steps[0]!.patch).toContain('-old analysis\n+analysis v1');
      expect(diff.steps[1]!.changes).toEqual([{ path: 'report.md', change: 'added' }]);
      const text = await runBaton(['diff', 'daily', '--files', 'report'], { home, cwd: dir });
      expectExit(text, 0);
      expect(text.stdout).toContain('report (attempt 1): 1 added, 0 changed, 0 removed\n  A report.md');
      expect(text.stdout).toContain('+built from: analysis v1');
      expect(text.stdout).not.toContain('extra.md');

      const rollback = await runBaton(['rollback', 'daily', 'report'], { home, cwd: dir });
      expectExit(rollback, 0);
      expect(rollback.stdout).toContain('workspace put back as it was before report');
      expect(existsSync(join(dir, 'report.md'))).toBe(false);
      expect(filesOf(dir)).toMatchObject({ 'analysis.md': 'analysis v1\n', 'extra.md': 'extra notes\n' });
      // The steps keep their state; the timeline has the rollback.
      expect((await runStatus(home, 'daily')).status).toBe('succeeded');
      const events = await timeline(home, 'daily');
      expect(events.filter((e) => e.type === 'run.files_restored')).toEqual([
        expect.objectContaining({ stepId: 'report', cause: 'rollback' }),
      ]);
      expectRefused(
        await runBaton(['rollback', 'daily', 'nope'], { home, cwd: dir }),
        'unknown step "nope" (known: analyse, report)',
      );
    },
    TEST_TIMEOUT,
  );

  it(
    'the same over MCP (file_changes always, rollback_run with --allow-run) and the TypeScript API',
    async () => {
      const { dir, home } = planDir('baton-ckpt-');
      await runOnce(home, dir, { VERSION: '1', EXTRA: '1' });
      const readOnly = await mcpClient(home, { cwd: dir });
      const changes = await callOk<{ steps: { stepId: string; changes: unknown[] }[] }>(
        readOnly,
        'file_changes',
        {
          runId: 'daily',
          stepId: 'report',
        },
      );
      expect(changes.steps).toEqual([
        expect.objectContaining({ stepId: 'report', changes: [{ path: 'report.md', change: 'added' }] }),
      ]);
      expect(await callRefused(readOnly, 'rollback_run', { runId: 'daily', stepId: 'report' })).toMatch(
        /not found/i,
      );
      const allowed = await mcpClient(home, { cwd: dir, args: ['--allow-run'] });
      await callOk(allowed, 'rollback_run', { runId: 'daily', stepId: 'report' });
      expect(existsSync(join(dir, 'report.md'))).toBe(false);
      await closeClients();

      const baton = Baton.open({ home });
      try {
        const all = await baton.fileChanges('daily');
        expect(all.steps.map((step) => step.stepId)).toEqual(['analyse', 'report']);
        const restored = await baton.rollback('daily', 'analyse');
        expect(restored.stepId).toBe('analyse');
        expect(Object.keys(filesOf(dir))).toEqual(['plan.yaml']);
        const rerun = await baton.rerun('daily', { from: 'report', keepFiles: true });
        expect(rerun.filesRestored).toBeNull();
      } finally {
        await baton.close();
      }
    },
    TEST_TIMEOUT,
  );

  it(
    "the console's step page lists the files the step changed, with their diff",
    async () => {
      const { dir, home } = planDir('baton-ckpt-');
      await runOnce(home, dir, { VERSION: '1', EXTRA: '1' });
      const store = SqliteStore.open(join(home, 'baton.db'));
      const console = await startTestConsole(store, home);
      try {
        const page = await (
          await fetch(`${console.origin}/runs/daily/steps/analyse`, { headers: withSession() })
        ).text();
        const table = /<table class="changed-files"[\s\S]*?<\/table>/.exec(page)?.[0] ?? '';
        expect(table).toContain('analysis.md');
        expect(table).toContain('extra.md');
        expect(table).not.toContain('report.md');
        expect(page).toContain('+extra notes');
      } finally {
        await console.close();
        await store.close();
      }
    },
    TEST_TIMEOUT,
  );

  it(
    "baton gc drops a collected run's checkpoints and their objects, and keeps an unfinished run's",
    async () => {
      const { dir, home } = planDir('baton-ckpt-');
      await runOnce(home, dir, { VERSION: '1', EXTRA: '1' });
      const other = join(dir, 'other');
      mkdirSync(other);
      const waiting = reportPlan({
        steps: [
          { id: 'analyse', instruction: 'write analysis.md analysis v%VERSION%' },
          { id: 'approve', dependsOn: ['analyse'], wait: { for: 'approval' } },
        ],
      });
      const file = writePlan(other, waiting);
      expectExit(await runBaton(['run', file, '--id', 'held', '--detach'], { home, cwd: other }), 0);
      expectExit(await runBaton(['check'], { home, cwd: other, env: { VERSION: '7' } }), 0);
      const refs = (runId: string) =>
        join(home, 'checkpoints.git', 'refs', 'baton', Buffer.from(runId).toString('hex'));
      expect(readdirSync(refs('daily')).length).toBeGreaterThan(0);
      const objects = () =>
        readdirSync(join(home, 'checkpoints.git', 'objects')).filter((d) => /^[0-9a-f]{2}$/.test(d)).length;
      const before = objects();
      const gc = await batonJson<{ runs: string[]; checkpointRuns: number }>(['gc', '--older-than', '0s'], {
        home,
        cwd: dir,
      });
      expect(gc).toMatchObject({ runs: ['daily'], checkpointRuns: 1 });
      expect(existsSync(refs('daily'))).toBe(false);
      expect(objects()).toBeLessThan(before);
      // The run that still waits keeps what it recorded: its diff is still there.
      const held = await batonJson<{ steps: { stepId: string; changes: unknown[] }[] }>(
        ['diff', 'held', '--files'],
        { home, cwd: other },
      );
      expect(held.steps[0]).toMatchObject({
        stepId: 'analyse',
        changes: [{ path: 'analysis.md', change: 'added' }],
      });
    },
    TEST_TIMEOUT,
  );

  it(
    'fork --from analyse starts from the files before analyse; --keep-files copies them as they ended',
    async () => {
      const { dir, home } = planDir('baton-ckpt-');
      await runOnce(home, dir, { VERSION: '1', EXTRA: '1' });
      const fork = await batonJson<{ workspace: string; filesRestoredBefore: string | null }>(
        ['fork', 'daily', '--from', 'analyse', '--id', 'fresh'],
        { home, cwd: dir },
      );
      expect(fork.filesRestoredBefore).toBe('analyse');
      expect(Object.keys(filesOf(fork.workspace))).toEqual(['plan.yaml']);
      expectExit(await runBaton(['check'], { home, cwd: dir, env: { VERSION: '3' } }), 0);
      expect(filesOf(fork.workspace)).toMatchObject({ 'report.md': 'built from: analysis v3\n' });
      expect(existsSync(join(fork.workspace, 'extra.md'))).toBe(false);
      // The old run's folder is untouched.
      expect(filesOf(dir)['report.md']).toBe('built from: analysis v1\n');
      const kept = await batonJson<{ workspace: string; filesRestoredBefore: string | null }>(
        ['fork', 'daily', '--from', 'analyse', '--id', 'kept', '--keep-files'],
        { home, cwd: dir },
      );
      expect(kept.filesRestoredBefore).toBeNull();
      expect(filesOf(kept.workspace)['extra.md']).toBe('extra notes\n');
    },
    TEST_TIMEOUT,
  );

  it(
    'a restore is refused while the run runs; excluded folders and the ignored files are kept as the plan says',
    async () => {
      const { dir, home } = planDir('baton-ckpt-');
      mkdirSync(join(dir, 'node_modules', 'pkg'), { recursive: true });
      writeFileSync(join(dir, 'node_modules', 'pkg', 'index.js'), 'v1\n');
      writeFileSync(join(dir, '.gitignore'), 'build/\n');
      // A nested repository (with no commit yet) is left out, as it is, and fails nothing.
      mkdirSync(join(dir, 'vendor', 'lib'), { recursive: true });
      expect(spawnSync('git', ['init', '-q'], { cwd: join(dir, 'vendor', 'lib') }).status).toBe(0);
      writeFileSync(join(dir, 'vendor', 'lib', 'code.js'), 'kept\n');
      const plan = reportPlan({
        steps: [
          {
            id: 'analyse',
            instruction: 'write analysis.md analysis\nwrite build/out.txt built\nwrite logs/a.log noise',
            checkpoint: { exclude: ['*.log'] },
          },
          { id: 'approve', dependsOn: ['analyse'], wait: { for: 'approval', prompt: 'ok?' } },
        ],
      });
      const file = writePlan(dir, plan);
      expectExit(await runBaton(['run', file, '--id', 'held', '--detach'], { home, cwd: dir }), 0);
      expectExit(await runBaton(['check'], { home, cwd: dir }), 0);
      expect((await runStatus(home, 'held')).status).toBe('running');
      expectRefused(
        await runBaton(['rerun', 'held', '--from', 'analyse'], { home, cwd: dir }),
        'run held is running',
        '--keep-files',
      );
      expectRefused(
        await runBaton(['rollback', 'held', 'analyse'], { home, cwd: dir }),
        'run held is running',
      );
      expectExit(await runBaton(['cancel', 'held'], { home, cwd: dir }), 0);
      // node_modules changed after the checkpoint: a rollback leaves it as it is now.
      writeFileSync(join(dir, 'node_modules', 'pkg', 'index.js'), 'v2\n');
      expectExit(await runBaton(['rollback', 'held', 'analyse'], { home, cwd: dir }), 0);
      expect(readFileSync(join(dir, 'node_modules', 'pkg', 'index.js'), 'utf8')).toBe('v2\n');
      // build/ is in the workspace's .gitignore, and a checkpoint holds it all the same: gone.
      expect(existsSync(join(dir, 'build'))).toBe(false);
      expect(existsSync(join(dir, 'analysis.md'))).toBe(false);
      expect(readFileSync(join(dir, 'vendor', 'lib', 'code.js'), 'utf8')).toBe('kept\n');
      // *.log is excluded by the step: never recorded, never removed.
      expect(readFileSync(join(dir, 'logs', 'a.log'), 'utf8')).toBe('noise\n');
    },
    TEST_TIMEOUT,
  );

  it(
    'a rollback SIGKILLed during its restore leaves the old tree or the new one, never a mix',
    async () => {
      const { dir, home } = planDir('baton-ckpt-');
      const plan = reportPlan({
        steps: [{ id: 'fill', instruction: 'many 3000 data' }],
      });
      const file = writePlan(dir, plan);
      expectExit(await runBaton(['run', file, '--id', 'big'], { home, cwd: dir }), 0);
      const full = filesOf(dir);
      expect(Object.keys(full)).toHaveLength(3001);
      const journal = join(home, 'checkpoints', 'journals', `${Buffer.from('big').toString('hex')}.json`);
      const rollback = spawnBaton(['rollback', 'big', 'fill'], { home, cwd: dir });
      const journalSeen = await Promise.race([
        waitFor(() => existsSync(journal), 60_000, 'the restore journal', 1),
        rollback.exited.then(() => false),
      ]);
      rollback.child.kill('SIGKILL');
      await rollback.exited;
      // The next command that touches the workspace finishes or undoes what was interrupted.
      const check = await runBaton(['diff', 'big', '--files'], { home, cwd: dir });
      expectExit(check, 0);
      const after = filesOf(dir);
      const oldTree = Object.keys(after).length === 3001;
      if (oldTree) expect(after).toEqual(full);
      else expect(Object.keys(after)).toEqual(['plan.yaml']);
      expect(existsSync(journal)).toBe(false);
      // When the journal was seen, the kill landed before the rollback was recorded: rolled back.
      if (journalSeen) {
        const restored = (await timeline(home, 'big')).filter((e) => e.type === 'run.files_restored');
        expect(restored.length === 0 ? oldTree : !oldTree).toBe(true);
      }
    },
    TEST_TIMEOUT,
  );

  it('a run working in the Baton home itself is never recorded or restored there (it holds the store)', async () => {
    const { home } = planDir('baton-ckpt-');
    mkdirSync(home, { recursive: true });
    const place = { home, runId: 'in-home', workspace: home, exclude: ['.git/'], hidden: [home] };
    await expect(snapshotWorkspace(place)).rejects.toThrow(/holds the Baton store itself/);
    await expect(restoreWorkspace(place, '4b825dc642cb6eb9a060e54bf8d69288fbee4904')).rejects.toThrow(
      /holds the Baton store itself/,
    );
  });

  it('checkpoint on a function step, and an exclude leaving the workspace, are refused (exit 2, nothing stored)', async () => {
    const { dir, home } = planDir('baton-ckpt-');
    const outside = writePlan(
      dir,
      reportPlan({ steps: [{ id: 'a', instruction: 'x', checkpoint: { exclude: ['../secrets'] } }] }),
    );
    expectRefused(
      await runBaton(['run', outside], { home, cwd: dir }),
      'steps.a.checkpoint.exclude[0]: "../secrets" leaves the workspace',
    );
    const onFn = writePlan(dir, reportPlan({ steps: [{ id: 'b', fn: 'build', checkpoint: 'workspace' }] }));
    expectRefused(
      await runBaton(['run', onFn], { home, cwd: dir }),
      'steps.b.checkpoint: only agent steps change files Baton can checkpoint',
    );
    expect(existsSync(home)).toBe(false);
  });
});
