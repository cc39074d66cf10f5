/**
 * Bad input and bad configuration: exit code 2, one clear `baton: ` message on stderr that names
 * the file, field or value and the problem, and nothing stored or changed.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  agentCommand,
  type BatonResult,
  expectExit,
  removeTempDirs,
  runBaton,
  stopProcesses,
  tempDir,
  writePlan,
} from './helpers/cli.js';

const TEST_TIMEOUT = 60_000;

let dir: string;
let home: string;
let dbFile: string;
let dbBytes: Buffer;

afterAll(async () => {
  await stopProcesses();
  removeTempDirs();
});

/** A home holding one blocked run `base`: step a succeeded, step b (agent-fail) blocked. */
beforeAll(async () => {
  dir = tempDir('baton-cli-bad-input-');
  home = join(dir, 'home');
  dbFile = join(home, 'baton.db');
  const file = writePlan(dir, {
    name: 'base',
    defaults: { agent: { command: agentCommand('agent-succeed') }, retry: { maxAttempts: 1 } },
    steps: [
      { id: 'a', instruction: 'a' },
      { id: 'b', instruction: 'b', dependsOn: ['a'], agent: { command: agentCommand('agent-fail') } },
    ],
  });
  expectExit(await runBaton(['run', file, '--id', 'base'], { home }), 1);
  dbBytes = readFileSync(dbFile);
}, TEST_TIMEOUT);

/** Exit 2, one `baton: ` message (no stack trace), nothing on stdout. */
function expectBadInput(result: BatonResult, ...patterns: (string | RegExp)[]): void {
  expectExit(result, 2);
  expect(result.stdout).toBe('');
  expect(result.stderr).toMatch(/^baton: /);
  expect(result.stderr).not.toMatch(/internal error|\n\s+at /);
  expect(result.stderr.trimEnd().split('\n'), `one line expected:\n${result.stderr}`).toHaveLength(1);
  for (const pattern of patterns) {
    if (typeof pattern === 'string') expect(result.stderr).toContain(pattern);
    else expect(result.stderr).toMatch(pattern);
  }
}

function expectDatabaseUnchanged(file = dbFile, bytes = dbBytes): void {
  const now = readFileSync(file);
  const changed: number[] = [];
  for (let i = 0; i < Math.max(now.length, bytes.length) && changed.length < 8; i++) {
    if (now[i] !== bytes[i]) changed.push(i);
  }
  expect(
    { file, size: now.length, changedByteOffsets: changed },
    'the database file must be left byte for byte as it was',
  ).toEqual({ file, size: bytes.length, changedByteOffsets: [] });
}

const goodAgent = () => ({ agent: { command: agentCommand('agent-succeed') } });

/** Writes `text` under `name` in the plan folder and runs `baton run <name> ...args` from there. */
async function runPlanText(name: string, text: string, ...args: string[]): Promise<BatonResult> {
  writeFileSync(join(dir, name), text);
  return runBaton(['run', name, '--detach', ...args], { home, cwd: dir });
}

async function runPlanObject(name: string, plan: object, ...args: string[]): Promise<BatonResult> {
  writePlan(dir, plan, { name, format: name.endsWith('.json') ? 'json' : 'yaml' });
  return runBaton(['run', name, '--detach', ...args], { home, cwd: dir });
}

describe('bad plans are refused with exit 2 and nothing stored', () => {
  it(
    'malformed YAML: names the file, line and column',
    async () => {
      const result = await runPlanText(
        'broken.yaml',
        'name: broken\nsteps:\n  - id: a\n    instruction: "unterminated\n    dependsOn: [\n',
      );
      expectBadInput(result, /^baton: broken\.yaml:\d+:\d+: /);
      expectDatabaseUnchanged();
    },
    TEST_TIMEOUT,
  );

  it(
    'malformed JSON: names the file, line and column',
    async () => {
      const result = await runPlanText('broken.json', '{\n  "name": "broken",\n  "steps": [}\n}\n');
      expectBadInput(result, /^baton: broken\.json:3:\d+: /);
      expectDatabaseUnchanged();
    },
    TEST_TIMEOUT,
  );

  it(
    'a notBefore that is not a date-time with an offset: names the field',
    async () => {
      const result = await runPlanText(
        'later.yaml',
        'name: later\nsteps:\n  - id: a\n    instruction: a\n    notBefore: 2026-12-24T08:00:00\n',
      );
      expectBadInput(result, 'later.yaml: steps.a.notBefore: ', 'is not a date-time', 'with an offset');
      expectDatabaseUnchanged();
    },
    TEST_TIMEOUT,
  );

  it(
    'an unknown dependency: lists the known step ids',
    async () => {
      const result = await runPlanObject('dep.yaml', {
        name: 'dep',
        defaults: goodAgent(),
        steps: [
          { id: 'fetch', instruction: 'f' },
          { id: 'analyze', instruction: 'a', dependsOn: ['fetch'] },
          { id: 'report', instruction: 'r', dependsOn: ['analyse'] },
        ],
      });
      expectBadInput(
        result,
        'dep.yaml: steps.report.dependsOn[0]: unknown step "analyse" (known: fetch, analyze, report)',
        'did you mean "analyze"?',
      );
      expectDatabaseUnchanged();
    },
    TEST_TIMEOUT,
  );

  it(
    'a dependency cycle',
    async () => {
      const result = await runPlanObject('cycle.yaml', {
        name: 'cycle',
        defaults: goodAgent(),
        steps: [
          { id: 'a', instruction: 'a', dependsOn: ['c'] },
          { id: 'b', instruction: 'b', dependsOn: ['a'] },
          { id: 'c', instruction: 'c', dependsOn: ['b'] },
        ],
      });
      expectBadInput(result, 'cycle.yaml: steps.a.dependsOn: cycle: a -> c -> b -> a');
      expectDatabaseUnchanged();
    },
    TEST_TIMEOUT,
  );

  it(
    'a duplicate step id',
    async () => {
      const result = await runPlanObject('dup.json', {
        name: 'dup',
        defaults: goodAgent(),
        steps: [
          { id: 'a', instruction: 'a' },
          { id: 'a', instruction: 'again' },
        ],
      });
      expectBadInput(result, 'dup.json: steps[1].id: duplicate step id "a"');
      expectDatabaseUnchanged();
    },
    TEST_TIMEOUT,
  );

  it(
    'a field of the wrong type (maxAttempts: "three")',
    async () => {
      const result = await runPlanObject('types.yaml', {
        name: 'types',
        defaults: goodAgent(),
        steps: [{ id: 'a', instruction: 'a', retry: { maxAttempts: 'three' } }],
      });
      expectBadInput(result, 'types.yaml: steps.a.retry.maxAttempts: ', '"three"');
      expectDatabaseUnchanged();
    },
    TEST_TIMEOUT,
  );

  it(
    'an unknown key, with a suggestion',
    async () => {
      const result = await runPlanObject('keys.yaml', {
        name: 'keys',
        defaults: goodAgent(),
        steps: [{ id: 'a', instruction: 'a', dependOn: ['x'] }],
      });
      expectBadInput(result, 'keys.yaml: steps.a: unknown key "dependOn"', 'did you mean "dependsOn"?');
      expectDatabaseUnchanged();
    },
    TEST_TIMEOUT,
  );

  it(
    'a missing plan file',
    async () => {
      const result = await runBaton(['run', 'no-such-plan.yaml'], { home, cwd: dir });
      expectBadInput(result, 'plan file not found: no-such-plan.yaml');
      expectDatabaseUnchanged();
    },
    TEST_TIMEOUT,
  );

  it(
    'requiredOutputs that leave the workspace',
    async () => {
      const result = await runPlanObject('escape.yaml', {
        name: 'escape',
        defaults: goodAgent(),
        steps: [{ id: 'a', instruction: 'a', requiredOutputs: ['ok.md', '../x'] }],
      });
      expectBadInput(result, 'escape.yaml: steps.a.requiredOutputs[1]: "../x" leaves the run workspace');
      expectDatabaseUnchanged();
    },
    TEST_TIMEOUT,
  );
});

describe('bad run options are refused with exit 2 and nothing stored', () => {
  const withInput = {
    name: 'inputs',
    inputs: { topic: { description: 'what to research' } },
    defaults: goodAgent(),
    steps: [{ id: 'a', instruction: 'research {{inputs.topic}}' }],
  };

  it(
    'a missing required input',
    async () => {
      const result = await runPlanObject('inputs.yaml', withInput, '--id', 'no-input');
      expectBadInput(result, 'needs input "topic"', '--input topic=');
      expectDatabaseUnchanged();
    },
    TEST_TIMEOUT,
  );

  it(
    'an undeclared --input',
    async () => {
      const result = await runPlanObject(
        'inputs.yaml',
        withInput,
        '--input',
        'topic=x',
        '--input',
        'tpoic=y',
        '--id',
        'bad-input',
      );
      expectBadInput(result, 'input "tpoic" is not declared', 'declared: topic');
      expectDatabaseUnchanged();
    },
    TEST_TIMEOUT,
  );

  it(
    'an --input without "="',
    async () => {
      const result = await runPlanObject('inputs.yaml', withInput, '--input', 'topic');
      expectBadInput(result, '--input "topic": expected name=value');
      expectDatabaseUnchanged();
    },
    TEST_TIMEOUT,
  );

  it.each([[['bash', '-c']], [['sh']], [['python3', '-c']], [['env', 'sh']]])(
    'the agent command %j: refused, the run is not stored',
    async (command) => {
      const result = await runPlanObject(
        'refused.yaml',
        { name: 'refused', defaults: { agent: { command } }, steps: [{ id: 'a', instruction: 'echo hi' }] },
        '--id',
        'refused',
      );
      expectBadInput(result, `refused.yaml: steps.a.agent.command[`);
      expectBadInput(result, `command ${JSON.stringify(command)} refused`);
      expectDatabaseUnchanged();
      expectBadInput(await runBaton(['status', 'refused'], { home }), 'no run with id "refused"');
    },
    TEST_TIMEOUT,
  );

  it(
    'a refused --agent for a plan without one',
    async () => {
      const result = await runPlanObject(
        'no-agent.yaml',
        { name: 'no-agent', steps: [{ id: 'a', instruction: 'echo hi' }] },
        '--agent',
        '["bash","-c"]',
        '--id',
        'refused-flag',
      );
      expectBadInput(result, 'no-agent.yaml: --agent or BATON_AGENT_CMD[0]: command ["bash","-c"] refused');
      expectDatabaseUnchanged();
    },
    TEST_TIMEOUT,
  );

  it(
    'bad numbers and durations in flags',
    async () => {
      expectBadInput(await runBaton(['check', '--lease', 'soon'], { home }), '--lease', '"soon"');
      expectBadInput(await runBaton(['check', '--concurrency', '0'], { home }), '--concurrency');
      expectDatabaseUnchanged();
    },
    TEST_TIMEOUT,
  );
});

describe('priority of a run', () => {
  it(
    '--priority outside 0..9 is refused naming the flag; a run started with one shows it in status --json',
    async () => {
      const plan = { name: 'prio', defaults: goodAgent(), steps: [{ id: 'a', instruction: 'a' }] };
      expectBadInput(await runPlanObject('prio.yaml', plan, '--priority', '10'), '--priority', '"10"');
      expectDatabaseUnchanged();
      expectExit(await runPlanObject('prio.yaml', plan, '--priority', '7', '--id', 'prio7'), 0);
      const status = await runBaton(['status', 'prio7', '--json'], { home, cwd: dir });
      expect(JSON.parse(status.stdout).priority).toBe(7);
      dbBytes = readFileSync(dbFile);
    },
    TEST_TIMEOUT,
  );
});

describe('unknown runs and steps, impossible changes: exit 2, nothing changed', () => {
  it.each([
    [['status', 'nope'], 'no run with id "nope"'],
    [['timeline', 'nope'], 'no run with id "nope"'],
    [['logs', 'nope', 'a'], 'no run with id "nope"'],
    [['retry', 'nope', 'a'], 'no run with id "nope"'],
    [['skip', 'nope', 'a'], 'no run with id "nope"'],
    [['cancel', 'nope'], 'no run with id "nope"'],
    [['retry', 'base', 'zz'], 'run base has no step "zz" (known: a, b)'],
    [['skip', 'base', 'zz'], 'run base has no step "zz" (known: a, b)'],
    [['logs', 'base', 'zz'], 'run base has no step "zz" (known: a, b)'],
    [['logs', 'base', 'a', '--attempt', '7'], 'step a has no attempt 7'],
    [['retry', 'base', 'a'], 'step a is succeeded'],
    [['skip', 'base', 'a'], 'step a is succeeded'],
  ])(
    'baton %j',
    async (args, message) => {
      expectBadInput(await runBaton(args, { home }), message);
      expectDatabaseUnchanged();
    },
    TEST_TIMEOUT,
  );
});

describe('a database Baton cannot use is refused and left as it is', () => {
  /** A plan that would be fine, to show that `run` refuses the database, not the plan. */
  function goodPlan(): string {
    return writePlan(tempDir('baton-cli-good-plan-'), {
      name: 'good',
      defaults: goodAgent(),
      steps: [{ id: 'a', instruction: 'a' }],
    });
  }

  async function expectRefusedDatabase(otherHome: string, ...patterns: (string | RegExp)[]) {
    const file = join(otherHome, 'baton.db');
    const before = readFileSync(file);
    for (const args of [['status'], ['check'], ['run', goodPlan(), '--detach'], ['timeline', 'x']]) {
      expectBadInput(await runBaton(args, { home: otherHome }), file, ...patterns);
      expectDatabaseUnchanged(file, before);
    }
  }

  it(
    'random bytes: "not a readable Baton database"',
    async () => {
      const other = join(tempDir('baton-cli-corrupt-'), 'home');
      mkdirSync(other);
      writeFileSync(join(other, 'baton.db'), randomBytes(16_384), { mode: 0o600 });
      await expectRefusedDatabase(other, 'not a readable Baton database');
    },
    TEST_TIMEOUT,
  );

  it(
    'a SQLite database of another program',
    async () => {
      const other = join(tempDir('baton-cli-foreign-'), 'home');
      mkdirSync(other);
      const db = new Database(join(other, 'baton.db'));
      db.exec('CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT)');
      db.prepare('INSERT INTO users (name) VALUES (?)').run('ann');
      db.close();
      await expectRefusedDatabase(other, 'not made by Baton', 'users');
    },
    TEST_TIMEOUT,
  );

  it(
    'a Baton database whose tables do not match its schema version (damaged, or made by an older build)',
    async () => {
      const other = join(tempDir('baton-cli-damaged-'), 'home');
      mkdirSync(other);
      const db = new Database(join(other, 'baton.db'));
      db.pragma('journal_mode = WAL');
      db.exec('CREATE TABLE baton_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID');
      db.exec("INSERT INTO baton_meta VALUES ('app', 'baton'), ('schema_version', '1')");
      db.exec('CREATE TABLE runs (id TEXT PRIMARY KEY, plan_name TEXT NOT NULL) WITHOUT ROWID');
      db.close();
      await expectRefusedDatabase(other, 'baton.db');
    },
    TEST_TIMEOUT,
  );

  it(
    'a Baton database with a newer schema version',
    async () => {
      const other = join(tempDir('baton-cli-newer-'), 'home');
      // A command that writes makes the database (a read of a missing one is refused).
      expectExit(await runBaton(['flow', 'set', 'k', '--concurrency', '1'], { home: other }), 0);
      const db = new Database(join(other, 'baton.db'));
      db.prepare("UPDATE baton_meta SET value = '999' WHERE key = 'schema_version'").run();
      db.close();
      await expectRefusedDatabase(other, 'schema version 999', /Upgrade|newer/);
    },
    TEST_TIMEOUT,
  );
});

describe('a PostgreSQL URL that cannot be used: exit 2, and its password is never printed', () => {
  const secret = `PGSECRET${randomBytes(4).toString('hex')}`;
  it.each([
    ['a password parameter', `postgres://baton@127.0.0.1:1/db?password=${secret}`, 'password=***'],
    [
      'an sslpassword parameter',
      `postgres://baton:x@127.0.0.1:1/db?sslpassword=${secret}`,
      'sslpassword=***',
    ],
    ['an unencoded / in the password', `postgres://baton:pa/ss${secret}@127.0.0.1:1/db`, 'baton:***@'],
    ['an unencoded ? in the password', `postgres://baton:pa?ss${secret}@127.0.0.1:1/db`, 'baton:***@'],
    ['an unencoded # in the password', `postgres://baton:pa#ss${secret}@127.0.0.1:1/db`, 'baton:***@'],
  ])(
    '%s',
    async (_, url, masked) => {
      const home = tempDir('baton-cli-pgurl-');
      for (const result of [
        await runBaton(['--store', url, 'status'], { home }),
        await runBaton(['status'], { home, env: { BATON_DATABASE_URL: url } }),
      ]) {
        expectExit(result, 2);
        expect(result.stderr).toContain(masked);
        expect(result.stdout + result.stderr).not.toContain(secret);
      }
    },
    TEST_TIMEOUT,
  );
});

describe('structured results and YAML tags: exit 2 and nothing stored', () => {
  const withResult = (fields: Record<string, unknown>) => ({
    name: 'result',
    defaults: goodAgent(),
    steps: [{ id: 'check', instruction: 'check', ...fields }],
  });

  it.each([
    ['../result.json', 'steps.check.resultFile: "../result.json" leaves the run workspace through ".."'],
    ['/tmp/result.json', 'steps.check.resultFile: "/tmp/result.json" is absolute'],
  ])(
    'a resultFile outside the workspace (%s)',
    async (file, message) => {
      const result = await runPlanObject('result.yaml', withResult({ resultFile: file }), '--id', 'result');
      expectBadInput(result, `result.yaml: ${message}`);
      expectDatabaseUnchanged();
    },
    TEST_TIMEOUT,
  );

  it(
    'a resultSchema that is not a valid JSON Schema',
    async () => {
      const fields = { resultFile: 'result.json', resultSchema: { type: 'object', required: 'passed' } };
      const result = await runPlanObject('result.yaml', withResult(fields), '--id', 'result');
      expectBadInput(
        result,
        'result.yaml: steps.check.resultSchema: is not a valid JSON Schema (draft-07): schema is invalid: data/required must be array',
      );
      expectDatabaseUnchanged();
    },
    TEST_TIMEOUT,
  );

  it(
    'a resultSchema without a resultFile, and a resultFile on a model step',
    async () => {
      const schemaOnly = await runPlanObject('result.yaml', withResult({ resultSchema: { type: 'object' } }));
      expectBadInput(
        schemaOnly,
        'result.yaml: steps.check.resultSchema: checks the file named by resultFile',
      );
      const model = await runPlanObject('result.yaml', {
        name: 'result',
        steps: [{ id: 'ask', model: { provider: 'openai', model: 'm', prompt: 'p' }, resultFile: 'r.json' }],
      });
      expectBadInput(model, 'result.yaml: steps.ask.resultFile: is for agent steps (instruction)');
      expectDatabaseUnchanged();
    },
    TEST_TIMEOUT,
  );

  it.each(['!!js/function "function () {}"', '!!binary aGVsbG8=', '!!python/object:os.system {}'])(
    'a YAML tag the plan format does not know: %s',
    async (value) => {
      const tag = value.split(' ')[0];
      const text = `name: tags\ndefaults:\n  agent: { command: ${JSON.stringify(agentCommand('agent-succeed'))} }\nsteps:\n  - id: a\n    instruction: ${value}\n`;
      const result = await runPlanText('tags.yaml', text, '--id', 'tags');
      expectBadInput(
        result,
        `baton: tags.yaml:6:18: tag ${tag} is not part of the plan format; remove it (write the value as plain text)`,
      );
      expectDatabaseUnchanged();
    },
    TEST_TIMEOUT,
  );
});
