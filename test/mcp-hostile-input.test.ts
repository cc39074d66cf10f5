/**
 * `baton mcp` against a host that was steered into asking for what it should not have, through the
 * real server over stdio and the official SDK's Client: a plan path outside the project (or a link
 * out of it) is refused, and a file that is not a plan is never quoted.
 */
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { agentCommand, removeTempDirs, tempDir, writePlan } from './helpers/cli.js';
import { callOk, callRefused, closeClients, mcpClient } from './helpers/mcp.js';
import { fixturePlan } from './helpers/plans.js';

afterEach(async () => {
  await closeClients();
  removeTempDirs();
});

const PASSWORD = 'hunter2';

/** A project folder (the server's) with a `.env` beside it and one inside it, and a home beside it. */
function project() {
  const root = tempDir('baton-mcp-hostile-');
  const dir = join(root, 'project');
  mkdirSync(dir);
  writeFileSync(join(root, '.env'), `DB_PASSWORD=${PASSWORD}\n`);
  writeFileSync(join(dir, '.env'), `DB_PASSWORD=${PASSWORD}\nAPI_KEY=${PASSWORD}-key\n`);
  return { root, dir, home: join(root, 'home') };
}

interface Validation {
  valid: boolean;
  problems: { path: string; problem: string; line?: number; column?: number }[];
}

describe('plan paths given over MCP', () => {
  it('refuses ../.env, an absolute path outside and a link out of the project, naming the path and the rule', async () => {
    const { root, dir, home } = project();
    symlinkSync(join(root, '.env'), join(dir, 'plan.yaml'));
    const client = await mcpClient(home, { cwd: dir });
    for (const path of ['../.env', join(root, '.env'), 'plan.yaml']) {
      for (const tool of ['validate_plan', 'propose']) {
        const refused = await callRefused(client, tool, { path });
        expect(refused).toMatch(/^PATH_ESCAPE: path /);
        expect(refused).toContain(path);
        expect(refused).toContain(`the project ${dir}`);
        expect(refused).not.toContain(PASSWORD);
        expect(refused).not.toContain('DB_PASSWORD');
      }
    }
    expect(
      await callRefused(client, 'schedule_add', { name: 'nightly', path: '../.env', every: '1h' }),
    ).toMatch(/^PATH_ESCAPE/);
    // Nothing was stored: the home was never made.
    expect(await callRefused(client, 'run_status', { runId: 'x' })).toMatch(/RUN_NOT_FOUND: no Baton store/);
  });

  it('a file inside the project that is not a plan is refused with the kind of problem, never its text', async () => {
    const { dir, home } = project();
    writeFileSync(join(dir, 'secrets.yaml'), `database:\n  password: ${PASSWORD}\n`);
    writeFileSync(join(dir, 'secrets.json'), `{"password": "${PASSWORD}",\n  oops}\n`);
    writeFileSync(join(dir, 'id_ed25519'), `-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1r${PASSWORD}\n`);
    writeFileSync(join(dir, 'token.yaml'), `${PASSWORD}: [\n`);
    const client = await mcpClient(home, { cwd: dir });
    for (const path of ['.env', 'secrets.yaml', 'secrets.json', 'id_ed25519', 'token.yaml']) {
      const answer = await callOk<Validation>(client, 'validate_plan', { path });
      expect(answer.valid, path).toBe(false);
      expect(JSON.stringify(answer), path).not.toContain(PASSWORD);
      expect(JSON.stringify(answer), path).not.toMatch(/DB_PASSWORD|BEGIN OPENSSH|database/);
      expect(answer.problems[0]!.problem).toContain('not quoted over MCP');
      const refused = await callRefused(client, 'propose', { path });
      expect(refused, path).toMatch(/^PLAN_INVALID: /);
      expect(refused, path).not.toContain(PASSWORD);
    }
    // A syntax error keeps its place: line and column.
    const json = await callOk<Validation>(client, 'validate_plan', { path: 'secrets.json' });
    expect(json.problems[0]).toMatchObject({
      line: 2,
      problem: expect.stringMatching(/^not valid JSON here/),
    });

    // A plan in the project, or in the home (here beside it), is read; its own problems are quoted as ever.
    writePlan(dir, {
      name: 'p',
      steps: [
        { id: 'a', instruction: 'x', dependsOn: ['nope'], agent: { command: agentCommand('agent-succeed') } },
      ],
    });
    const problems = await callOk<Validation>(client, 'validate_plan', { path: 'plan.yaml' });
    expect(problems.problems).toEqual([expect.objectContaining({ path: 'steps.a.dependsOn[0]' })]);
    expect(problems.problems[0]!.problem).toContain('unknown step "nope"');
    mkdirSync(home, { recursive: true });
    writePlan(home, fixturePlan([{ id: 'a', instruction: 'x' }]), { name: 'kept.yaml' });
    expect(await callOk(client, 'validate_plan', { path: join(home, 'kept.yaml') })).toMatchObject({
      valid: true,
    });
  });
});
