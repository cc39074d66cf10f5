/**
 * The real agent CLIs run confined (sandbox: workspace) through the baton binary against the mock
 * model server: each completes a step whose required output it writes through its own tool, with
 * the workspace the only place of the plan's folder it may write.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, expect, it } from 'vitest';
import { type MockLlmServer, startMockLlmServer } from '../src/testing/mock-llm/server.js';
import { attemptBoundMs, testBoundMs } from './helpers/agent-cli-bounds.js';
import { cliCase, cliCommand, runPlan, shellCall, stepAttempts, writeCall } from './helpers/agent-steps.js';
import { removeTempDirs } from './helpers/cli.js';
import { type AgentCli, describeWithOpenclaw } from './helpers/mock-cli.js';
import { describeWithBwrap } from './helpers/sandbox.js';

let server: MockLlmServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});
afterAll(() => removeTempDirs());

const turn = (hasToolResult: boolean) => ({ hasTools: true, promptIncludes: 'CONFINED', hasToolResult });

async function confinedStep(cli: AgentCli): Promise<void> {
  server = await startMockLlmServer({ script: [] });
  const c = cliCase(cli, server);
  const content = `written confined by ${cli}`;
  const hostTmp = join(tmpdir(), `baton-confined-${cli}-${process.pid}-${Date.now()}`);
  // What its shell tool sees of the Baton home, and whether it can write beside the workspace or in /tmp.
  const probe = [
    `ls -A ${c.home} > ${c.workspace}/home-listing.txt 2>&1`,
    `touch ${c.dir}/escape.txt ${hostTmp}`,
    'true',
  ].join('; ');
  server.enqueue(
    { fault: 'ok', when: turn(false), reply: { toolCalls: [shellCall(cli, probe)] } },
    {
      fault: 'ok',
      when: turn(true),
      reply: { toolCalls: [writeCall(cli, `${c.workspace}/report.md`, content)] },
    },
    { fault: 'ok', when: turn(true), reply: { text: 'report written' } },
  );
  const { result, run } = await runPlan(c, {
    name: `${cli}-confined`,
    defaults: {
      agent: { command: cliCommand(cli, { shell: true }) },
      timeoutMs: attemptBoundMs(cli),
      sandbox: 'workspace',
    },
    steps: [{ id: 'write', instruction: 'CONFINED: write report.md', requiredOutputs: ['report.md'] }],
  });
  const [attempt] = await stepAttempts(c, run.id, 'write');
  const log = attempt?.logPath ? readFileSync(join(c.home, attempt.logPath), 'utf8') : '';
  expect(run.status, `${result.stderr}\n${attempt?.message}\n${log.slice(-3000)}`).toBe('succeeded');
  expect(attempt?.summary).toBe('report written');
  expect(readFileSync(join(c.workspace, 'report.md'), 'utf8')).toBe(content);
  // The shell tool ran, saw an empty Baton home, and wrote nothing outside the workspace.
  // (At most the folders leading to the files Baton made for this attempt, e.g. gemini's settings.)
  const listing = readFileSync(join(c.workspace, 'home-listing.txt'), 'utf8');
  expect(listing).not.toMatch(/baton\.db|No such file/);
  expect(
    listing
      .trim()
      .split('\n')
      .filter((name) => name !== '' && name !== 'runs'),
  ).toEqual([]);
  expect(readdirSync(c.home)).toContain('baton.db');
  expect(existsSync(join(c.dir, 'escape.txt'))).toBe(false);
  expect(existsSync(hostTmp)).toBe(false);
  // Its own config and state, written in its config folder, are on the host (gemini writes into
  // the per-attempt overlay Baton makes, which goes with the attempt).
  // codex's home is kept outside the temp folder (see agentCliEnv), so it is found by CODEX_HOME.
  const configRoot = (path: string) =>
    path.startsWith('codex-home/')
      ? join(c.env.CODEX_HOME!, path.slice('codex-home/'.length))
      : join(c.dir, path);
  for (const path of LEFT_IN_CONFIG[cli]) expect(existsSync(configRoot(path)), path).toBe(true);
  // Baton makes ~/.claude.json as {} for claude to rewrite in place: it did.
  if (cli === 'claude')
    expect(readFileSync(join(c.dir, 'user-home/.claude.json'), 'utf8')).toContain('firstStartTime');
}

/** What each CLI leaves in its config folders in one run (relative to the plan folder of cliCase). */
const LEFT_IN_CONFIG: Record<AgentCli, string[]> = {
  claude: ['user-home/.claude/projects', 'user-home/.claude.json'],
  codex: ['codex-home/sessions'],
  gemini: [],
  openclaw: ['user-home/.openclaw/state'],
};

describeWithBwrap('real agent CLIs confined by sandbox: workspace', () => {
  for (const cli of ['claude', 'codex', 'gemini'] as const) {
    it(`${cli} completes a step confined, writing its required output`, () => confinedStep(cli), 240_000);
  }
  describeWithOpenclaw('openclaw', () => {
    it(
      'openclaw completes a step confined, writing its required output',
      () => confinedStep('openclaw'),
      testBoundMs('openclaw'),
    );
  });
});
