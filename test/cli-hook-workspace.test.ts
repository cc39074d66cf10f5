/**
 * A hook command's relative paths resolve against one base, the run's workspace, both when the plan
 * is stored (its checks) and when the call is made: a plan stored from its own folder and whose
 * hook is delivered by a `check` started in another folder calls the hook, which runs in the
 * workspace. (The call used to be made from the folder of the process that sent it: a hook that
 * passed validation failed "for good".)
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { expectExit, removeTempDirs, runBaton, tempDir, writePlan } from './helpers/cli.js';
import { fixturePlan } from './helpers/plans.js';
import { TRUSTED_FIXTURES } from './helpers/trusted-fixtures.js';

afterAll(() => removeTempDirs());

/** A hook script: appends its folder and the hook's trigger to the file NOTIFY_LOG names. */
const NOTIFY = `import { appendFileSync } from 'node:fs';
let input = '';
process.stdin.on('data', (chunk) => { input += chunk; });
process.stdin.on('end', () => {
  appendFileSync(process.env.NOTIFY_LOG, JSON.stringify({ cwd: process.cwd(), hook: JSON.parse(input).hook }) + '\\n');
});
`;

describe('a hook command with a relative path', () => {
  it('stored from the plan folder, delivered by a check from elsewhere: found and run in the workspace', async () => {
    const project = tempDir('baton-hook-project-');
    const elsewhere = tempDir('baton-hook-elsewhere-');
    const home = join(project, '.baton');
    mkdirSync(join(project, 'hooks'));
    const script = join(project, 'hooks', 'notify.mjs');
    writeFileSync(script, NOTIFY);
    const log = join(elsewhere, 'notify.log');
    const env = { NOTIFY_LOG: log, BATON_TRUSTED_AGENTS: `${TRUSTED_FIXTURES}${delimiter}${script}` };
    const plan = writePlan(
      project,
      fixturePlan([{ id: 'report', instruction: 'write the report' }], {
        workspace: '.',
        hooks: [{ on: ['succeeded'], command: [process.execPath, 'hooks/notify.mjs'], retries: 0 }],
      }),
    );
    // Checked against the workspace, not the folder of the command: from another folder without
    // the script it is still found, and a workspace without it is refused, naming the file.
    const elsewherePlan = writePlan(
      elsewhere,
      fixturePlan([{ id: 'report', instruction: 'write the report' }], {
        workspace: project,
        hooks: [{ on: ['succeeded'], command: [process.execPath, 'hooks/notify.mjs'] }],
      }),
    );
    expectExit(
      await runBaton(['run', elsewherePlan, '--detach', '--id', 'h0'], { home, cwd: elsewhere, env }),
      0,
    );
    const missing = writePlan(
      project,
      fixturePlan([{ id: 'report', instruction: 'write the report' }], {
        workspace: '.',
        hooks: [{ on: ['succeeded'], command: [process.execPath, 'hooks/missing.mjs'] }],
      }),
      { name: 'missing.yaml' },
    );
    const refused = expectExit(
      await runBaton(['run', missing, '--detach'], { home, cwd: elsewhere, env }),
      2,
    );
    expect(refused.stderr).toContain('hooks[0].command');
    expect(refused.stderr).toContain(join(project, 'hooks', 'missing.mjs'));
    // Stored from the project: the hook's script is checked against the workspace.
    expectExit(await runBaton(['run', plan, '--detach', '--id', 'h1'], { home, cwd: project, env }), 0);
    // Driven from another folder, as cron or a heartbeat does.
    const check = expectExit(await runBaton(['check'], { home, cwd: elsewhere, env }), 0);
    expect(check.stderr).not.toContain('hook');
    expect(
      readFileSync(log, 'utf8')
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line)),
    ).toEqual([
      // Both runs (h0 stored from elsewhere, h1 from the project) called their hook in the workspace.
      { cwd: project, hook: 'succeeded' },
      { cwd: project, hook: 'succeeded' },
    ]);
  });
});
