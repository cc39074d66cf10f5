/**
 * Hostile files through the real `baton` command: plans and state files nested 100,000 deep,
 * repeated JSON keys, bytes that are not UTF-8, control characters in a program name. Each is
 * refused with exit 2 and one message naming the file and the limit or field, and nothing is
 * stored or changed (see also cli-broad-workspace and cli-big-plans). No timing here: how fast
 * and how small the refusals are is measured in bench/workloads/hostile-plans.mjs.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  agentCommand,
  expectRefused,
  removeTempDirs,
  runPlanFile,
  tempDir,
  writePlan,
} from './helpers/cli.js';
import { legacyState, runLegacy, stepIds } from './helpers/legacy.js';

const TEST_TIMEOUT = 60_000;
const DEEP = 100_000;

afterAll(() => removeTempDirs());

const goodAgent = () => ({ agent: { command: agentCommand('agent-succeed') } });

describe('plans nested too deep are refused before they are parsed further', () => {
  it.each([
    [
      'JSON arrays',
      'deep.json',
      `{"name":"deep","steps":[{"id":"a","fn":"f","args":${'['.repeat(DEEP)}${']'.repeat(DEEP)}}]}`,
    ],
    [
      'YAML flow sequences',
      'deep.yaml',
      `name: deep\nsteps:\n  - id: a\n    fn: f\n    args: ${'['.repeat(DEEP)}${']'.repeat(DEEP)}\n`,
    ],
    [
      'YAML block sequences on one line',
      'dash.yaml',
      `name: deep\nsteps:\n  - id: a\n    fn: f\n    args:\n      ${'- '.repeat(DEEP)}x\n`,
    ],
  ])(
    '%s, 100,000 deep: exit 2 naming the file and the limit, no database created',
    async (_, name, text) => {
      const dir = tempDir('baton-hostile-deep-');
      writeFileSync(join(dir, name), text);
      const { result, home } = await runPlanFile(dir, name);
      expectRefused(
        result,
        new RegExp(
          `^baton: ${name.replace('.', '\\.')}:\\d+:\\d+: nesting is deeper than 64 levels \\(the limit\\)\\n$`,
        ),
      );
      expect(existsSync(home)).toBe(false);
    },
    TEST_TIMEOUT,
  );

  it(
    'a chain of YAML aliases that nests deeper than the text: refused the same way',
    async () => {
      const dir = tempDir('baton-hostile-alias-');
      const anchors = Array.from({ length: 200 }, (_, i) => `  a${i + 1}: &a${i + 1} [*a${i}]`);
      const text = `name: deep\nx-anchors:\n  a0: &a0 []\n${anchors.join('\n')}\nsteps:\n  - { id: a, fn: f, args: *a200 }\n`;
      writeFileSync(join(dir, 'alias.yaml'), text);
      const { result, home } = await runPlanFile(dir, 'alias.yaml');
      expectRefused(result, 'alias.yaml: nesting is deeper than 64 levels (the limit)');
      expect(existsSync(home)).toBe(false);
    },
    TEST_TIMEOUT,
  );

  it(
    'a plan nested 60 deep (under the limit) is accepted',
    async () => {
      const dir = tempDir('baton-hostile-ok-');
      let args: unknown = 'x';
      for (let i = 0; i < 60; i++) args = { inner: args };
      writePlan(
        dir,
        { name: 'ok', steps: [{ id: 'a', fn: 'f', args }] },
        { name: 'ok.json', format: 'json' },
      );
      const { result } = await runPlanFile(dir, 'ok.json');
      // Refused for its fn step (the CLI cannot run functions), not for its depth.
      expectRefused(result, 'call TypeScript functions');
    },
    TEST_TIMEOUT,
  );
});

describe('repeated keys in a JSON plan are refused as YAML refuses them', () => {
  it(
    'names the file, the position, the key and where it was first',
    async () => {
      const dir = tempDir('baton-hostile-dup-');
      const text = [
        '{',
        '  "name": "dup",',
        `  "defaults": { "agent": { "command": ${JSON.stringify(agentCommand('agent-succeed'))} } },`,
        '  "steps": [',
        '    { "id": "a", "instruction": "harmless", "instruction": "rm -rf the repo" }',
        '  ]',
        '}',
      ].join('\n');
      writeFileSync(join(dir, 'dup.json'), text);
      const { result, home } = await runPlanFile(dir, 'dup.json');
      expectRefused(
        result,
        'baton: dup.json:5:45: duplicate key "instruction" in steps[0] (first at line 5, column 18)',
      );
      expect(existsSync(home)).toBe(false);
    },
    TEST_TIMEOUT,
  );

  it(
    'a key repeated through an escape ("\\u0069d" is "id") is a repeat too',
    async () => {
      const dir = tempDir('baton-hostile-dup-');
      writeFileSync(
        join(dir, 'esc.json'),
        '{"name": "x", "steps": [{"id": "a", "fn": "f", "\\u0069d": "b"}]}',
      );
      const { result } = await runPlanFile(dir, 'esc.json');
      expectRefused(result, 'esc.json:1:', 'duplicate key "id"');
    },
    TEST_TIMEOUT,
  );
});

/** The text in UTF-8 but for one byte: the instruction of step-1 reads "café" in Latin-1. */
function latin1(text: string): Buffer {
  const bytes = Buffer.from(text.replace('do step-1', 'caf?'));
  bytes[bytes.indexOf('?')] = 0xe9;
  return bytes;
}

describe('state.json files that are too deep, repeat keys or are not UTF-8: exit 2, bytes unchanged', () => {
  const deepField = `${'['.repeat(DEEP)}${']'.repeat(DEEP)}`;
  const valid = JSON.stringify(legacyState(stepIds(2)), null, 2);
  const cases: [string, Buffer, RegExp][] = [
    [
      'an unknown field nested 100,000 deep',
      Buffer.from(`${valid.slice(0, -2)},\n  "notes": ${deepField}\n}\n`),
      /state\.json:\d+:\d+: nesting is deeper than 64 levels \(the limit\); the file was left untouched/,
    ],
    [
      'a repeated key',
      Buffer.from(valid.replace('"status": "IN_PROGRESS"', '"status": "DONE", "status": "IN_PROGRESS"')),
      /state\.json:\d+:\d+: duplicate key "status" \(first at line \d+, column \d+\)/,
    ],
    [
      'bytes that are not UTF-8 (a Latin-1 é in an instruction)',
      latin1(valid),
      /state\.json: is not valid UTF-8 text/,
    ],
  ];

  it.each(cases)(
    '%s: check, step and import refuse it, the file is left byte for byte',
    async (_, bytes, message) => {
      const dir = tempDir('baton-hostile-state-');
      const file = join(dir, 'state.json');
      writeFileSync(file, bytes);
      for (const command of ['check', 'step', 'import'] as const) {
        const result = await runLegacy(
          command,
          file,
          { STEP_AGENT_CMD: 'echo' },
          { home: join(dir, 'home') },
        );
        expectRefused(result, message);
        expect(readFileSync(file).equals(bytes), command).toBe(true);
      }
      expect(readdirSync(dir)).toEqual(['state.json']);
    },
    TEST_TIMEOUT,
  );
});

describe('control characters in a command are refused when the plan is validated', () => {
  it.each([
    ['ESC in the program name', ['cl\u001bude', '-p'], 'steps.report.agent.command[0]', 'U+001B'],
    ['a newline in an argument', ['claude', '-p\nrm -rf /'], 'steps.report.agent.command[1]', 'U+000A'],
    ['DEL', ['claude\u007f'], 'steps.report.agent.command[0]', 'U+007F'],
    ['a C1 control (CSI)', ['\u009bclaude'], 'steps.report.agent.command[0]', 'U+009B'],
  ])(
    '%s: exit 2 naming the field',
    async (_, command, field, code) => {
      const dir = tempDir('baton-hostile-ctl-');
      writePlan(dir, { name: 'ctl', steps: [{ id: 'report', instruction: 'x', agent: { command } }] });
      const { result, home } = await runPlanFile(dir, 'plan.yaml');
      expectRefused(result, `plan.yaml: ${field}: contains a control character (${code})`);
      expect(existsSync(home)).toBe(false);
    },
    TEST_TIMEOUT,
  );

  it(
    'in a hook command and in --agent too',
    async () => {
      const dir = tempDir('baton-hostile-ctl-');
      writePlan(dir, {
        name: 'ctl',
        defaults: goodAgent(),
        hooks: [{ on: ['failed'], command: ['notify\r'] }],
        steps: [{ id: 'a', instruction: 'x' }],
      });
      expectRefused(
        (await runPlanFile(dir, 'plan.yaml')).result,
        'plan.yaml: hooks[0].command[0]: contains a control character (U+000D)',
      );
      writePlan(dir, { name: 'ctl', steps: [{ id: 'a', instruction: 'x' }] }, { name: 'plain.yaml' });
      const flag = await runPlanFile(dir, 'plain.yaml', '--agent', JSON.stringify(['claude', '\u0007']));
      expectRefused(flag.result, '--agent[1]: contains a control character (U+0007)');
    },
    TEST_TIMEOUT,
  );
});
