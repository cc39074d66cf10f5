/**
 * Workspaces too broad to hand an agent (the root, the home folder, folders above the Baton home)
 * through the real `baton` command: refused with exit 2 naming the plan file and `workspace`,
 * nothing stored, unless `--allow-workspace` names the folder.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  agentCommand,
  expectExit,
  expectRefused,
  removeTempDirs,
  runBaton,
  runPlanFile,
  tempDir,
  writePlan,
} from './helpers/cli.js';
import { legacyState, runLegacy, stepIds } from './helpers/legacy.js';

const TEST_TIMEOUT = 60_000;

afterAll(() => removeTempDirs());

const goodAgent = () => ({ agent: { command: agentCommand('agent-succeed') } });

describe('workspaces too broad to hand an agent: exit 2 unless --allow-workspace names them', () => {
  async function tryWorkspace(
    workspace: string | null,
    options: { args?: string[]; env?: Record<string, string>; homeUnder?: string } = {},
  ) {
    const dir = tempDir('baton-hostile-ws-');
    const home = join(dir, options.homeUnder ?? '', 'home');
    const plan = {
      name: 'ws',
      ...(workspace === null ? {} : { workspace }),
      defaults: goodAgent(),
      steps: [{ id: 'a', instruction: 'a' }],
    };
    writePlan(dir, plan);
    const result = await runBaton(['run', 'plan.yaml', '--detach', ...(options.args ?? [])], {
      home,
      cwd: dir,
      ...(options.env ? { env: options.env } : {}),
    });
    return { result, home, dir };
  }

  it(
    'workspace: / is refused, naming the plan file and workspace; --allow-workspace / accepts it',
    async () => {
      const refused = await tryWorkspace('/');
      expectRefused(refused.result, 'plan.yaml: workspace: / is the root folder', '--allow-workspace /');
      expect(existsSync(refused.home)).toBe(false);
      const allowed = await tryWorkspace('/', { args: ['--allow-workspace', '/'] });
      expectExit(allowed.result, 0);
    },
    TEST_TIMEOUT,
  );

  it(
    'workspace: "~" and "~/work" are refused (Baton does not expand ~); YAML ~ (nothing) too',
    async () => {
      for (const workspace of ['~', '~/work']) {
        const { result, dir } = await tryWorkspace(workspace);
        expectRefused(
          result,
          `plan.yaml: workspace: "${workspace}" starts with "~", which Baton does not expand`,
        );
        expect(existsSync(join(dir, '~'))).toBe(false);
      }
      const dir = tempDir('baton-hostile-ws-');
      writeFileSync(join(dir, 'null.yaml'), 'name: ws\nworkspace: ~\nsteps:\n  - { id: a, fn: f }\n');
      expectRefused((await runPlanFile(dir, 'null.yaml')).result, 'null.yaml: workspace: is empty');
    },
    TEST_TIMEOUT,
  );

  it(
    'the home folder (and --workspace naming it) is refused; accepted with --allow-workspace',
    async () => {
      const fakeHome = tempDir('baton-hostile-home-');
      const env = { HOME: fakeHome };
      expectRefused(
        (await tryWorkspace(fakeHome, { env })).result,
        `workspace: ${fakeHome} is your home folder`,
      );
      expectRefused(
        (await tryWorkspace(null, { env, args: ['--workspace', fakeHome] })).result,
        `workspace ${JSON.stringify(fakeHome)}: ${fakeHome} is your home folder`,
      );
      const allowed = await tryWorkspace(fakeHome, { env, args: ['--allow-workspace', fakeHome] });
      expectExit(allowed.result, 0);
      // A project folder inside the home folder is what workspaces usually are.
      expectExit((await tryWorkspace(join(fakeHome, 'project'), { env })).result, 0);
    },
    TEST_TIMEOUT,
  );

  it(
    'a folder above the one holding --home is refused; the folder holding it is not',
    async () => {
      // The plan's folder (the default workspace) is two levels above <dir>/project/home.
      const above = await tryWorkspace(null, { homeUnder: 'project' });
      expectRefused(
        above.result,
        `plan.yaml: workspace: ${above.dir} is a folder above ${join(above.dir, 'project')}`,
      );
      expect(existsSync(above.home)).toBe(false);
      const allowed = await tryWorkspace(null, { homeUnder: 'project', args: ['--allow-workspace', '.'] });
      expectExit(allowed.result, 0);
      expectExit((await tryWorkspace('project', { homeUnder: 'project' })).result, 0);
    },
    TEST_TIMEOUT,
  );

  it(
    'import of a state.json kept in the home folder is refused the same way',
    async () => {
      const fakeHome = tempDir('baton-hostile-home-');
      const file = join(fakeHome, 'state.json');
      writeFileSync(file, JSON.stringify(legacyState(stepIds(1)), null, 2));
      const env = { HOME: fakeHome, STEP_AGENT_CMD: 'echo' };
      const home = join(tempDir('baton-hostile-import-'), 'home');
      expectRefused(await runLegacy('import', file, env, { home }), `${fakeHome} is your home folder`);
      expect(existsSync(home)).toBe(false);
      expectExit(await runLegacy('import', file, env, { home, args: ['--allow-workspace', fakeHome] }), 0);
    },
    TEST_TIMEOUT,
  );
});
