/**
 * Bad state files and bad settings given to `baton check|step <state.json>`: each is refused with
 * exit 2 and one message (on stderr, starting `baton: `) that names the file and the field, and the
 * file is left byte-for-byte as it was, with no temporary file beside it.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { expectExit, removeTempDirs, runBaton, tempDir } from './helpers/cli.js';
import { legacyState, runLegacy, stepIds, tmpFilesIn } from './helpers/legacy.js';

afterAll(() => removeTempDirs());

const VALID = `${JSON.stringify(legacyState(stepIds(3)), null, 2)}\n`;

function withField(mutate: (state: Record<string, unknown>) => void): string {
  const state = JSON.parse(VALID) as Record<string, unknown>;
  mutate(state);
  return `${JSON.stringify(state, null, 2)}\n`;
}

/** [case, file text, what the message must name besides the file]. */
const CASES: [string, string, RegExp][] = [
  ['malformed JSON', '{"plan": {"steps": {}}, "stepQueue": [,]}', /not valid JSON/],
  [
    'a truncated file (a valid one cut in half)',
    VALID.slice(0, Math.floor(VALID.length / 2)),
    /not valid JSON/,
  ],
  ['an empty file', '', /empty/],
  [
    'currentStep "two"',
    withField((s) => {
      s.currentStep = 'two';
    }),
    /currentStep/,
  ],
  [
    'stepRuns.step-1.status "WAITING"',
    withField((s) => {
      s.stepRuns = { 'step-1': { status: 'WAITING', tries: 0 } };
    }),
    /stepRuns\.step-1\.status/,
  ],
  [
    'stepQueue not an array',
    withField((s) => {
      s.stepQueue = 'step-1,step-2';
    }),
    /stepQueue/,
  ],
  [
    'a foreign JSON file (package.json)',
    `${JSON.stringify({ name: 'my-app', version: '1.0.0', scripts: { test: 'vitest' } }, null, 2)}\n`,
    /not an agent-step-sequencer state file/,
  ],
  [
    'a stepQueue naming an undefined step',
    withField((s) => {
      s.stepQueue = ['step-1', 'step-9', 'step-2'];
    }),
    /stepQueue.*"step-9"/,
  ],
  [
    'status "PAUSED"',
    withField((s) => {
      s.status = 'PAUSED';
    }),
    /status/,
  ],
  [
    'a plan step without an instruction',
    withField((s) => {
      s.plan = {
        steps: { 'step-1': { title: 'a' }, 'step-2': { instruction: 'b' }, 'step-3': { instruction: 'c' } },
      };
    }),
    /plan\.steps\.step-1\.instruction/,
  ],
  ['a JSON array', '[1, 2, 3]\n', /not an agent-step-sequencer state file/],
];

const ALSO_STEP_AND_IMPORT = new Set([
  'a truncated file (a valid one cut in half)',
  'currentStep "two"',
  'a foreign JSON file (package.json)',
]);

describe('a bad state file is refused untouched', () => {
  it.each(CASES)('%s: exit 2, one message naming the file and the field', async (label, text, names) => {
    const dir = tempDir('baton-legacy-bad-');
    const file = join(dir, 'state.json');
    writeFileSync(file, text);
    const before = readFileSync(file);
    // `step` and `import` read the file through the same validation: a few cases cover them.
    const commands = ALSO_STEP_AND_IMPORT.has(label)
      ? (['check', 'step', 'import'] as const)
      : (['check'] as const);
    const results = await Promise.all(
      commands.map((command) =>
        runLegacy(command, file, { STEP_AGENT_CMD: 'echo' }, { home: join(dir, 'home') }),
      ),
    );
    for (const [index, command] of commands.entries()) {
      const result = expectExit(results[index]!, 2);
      expect(result.stderr, command).toMatch(/^baton: /);
      // One message: a single `baton:` prefix and no stack trace.
      expect(result.stderr.match(/baton: /g), command).toHaveLength(1);
      expect(result.stderr, command).not.toMatch(/internal error|\n\s+at /);
      expect(result.stderr, command).toContain(file);
      expect(result.stderr, command).toMatch(names);
      expect(readFileSync(file).equals(before), command).toBe(true);
      expect(tmpFilesIn(dir), command).toEqual([]);
    }
    // Nothing was created beside the file (no sidecar folder, no temporary file).
    expect(readdirSync(dir).filter((name) => name !== 'home')).toEqual(['state.json']);
  });
});

describe('bad settings', () => {
  it.each([
    'abc',
    '1001',
    '-1',
    '2.5',
  ])('STEP_MAX_RETRIES=%s: exit 2 naming the variable, file unchanged', async (value) => {
    const dir = tempDir('baton-legacy-bad-');
    const file = join(dir, 'state.json');
    writeFileSync(file, VALID);
    const result = expectExit(
      await runLegacy('check', file, { STEP_AGENT_CMD: 'echo', STEP_MAX_RETRIES: value }),
      2,
    );
    expect(result.stderr).toMatch(/^baton: STEP_MAX_RETRIES/);
    expect(result.stderr).toContain(`"${value}"`);
    expect(readFileSync(file, 'utf8')).toBe(VALID);
    expect(readdirSync(dir)).toEqual(['state.json']);
  });

  it('STEP_AGENT_CMD that is a broken JSON array: exit 2, file unchanged', async () => {
    const dir = tempDir('baton-legacy-bad-');
    const file = join(dir, 'state.json');
    writeFileSync(file, VALID);
    const result = expectExit(await runLegacy('check', file, { STEP_AGENT_CMD: '["echo", ' }), 2);
    expect(result.stderr).toMatch(/^baton: STEP_AGENT_CMD/);
    expect(readFileSync(file, 'utf8')).toBe(VALID);
  });

  it('a folder given as the state file: exit 2', async () => {
    const dir = tempDir('baton-legacy-bad-');
    const result = expectExit(await runBaton(['check', dir], { env: { STEP_AGENT_CMD: 'echo' } }), 2);
    expect(result.stderr).toMatch(/^baton: /);
    expect(result.stderr).toContain(dir);
  });
});
