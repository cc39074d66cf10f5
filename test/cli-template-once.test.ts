/**
 * Templates substitute once, through the real `baton` command and real fixture agents: text an
 * agent returned that looks like a template (`{{inputs.secret}}`, `{{run.workspace}}`) reaches the
 * next prompt as that text, whether it arrives as a fan-out item (its whole value or a field), as
 * a result field, or as an input's value. Before, a fan-out item was filled into the instruction
 * when the group expanded and the instruction was rendered again when the item ran, so an agent's
 * output could read the run's secret inputs into another prompt.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { expectExit, removeTempDirs, runBaton, stopProcesses, writePlan } from './helpers/cli.js';
import { fixturePlan, planDir } from './helpers/plans.js';

afterEach(() => stopProcesses());
afterAll(() => removeTempDirs());

const SECRET = 's3cr3t-0f-the-run';
const PLANTED = ['{{inputs.secret}}', '{{run.workspace}}', '{{ inputs.secret }}'];

function prompts(file: string): Map<string, string> {
  const lines = readFileSync(file, 'utf8').trim().split('\n');
  return new Map(
    lines.map((line) => {
      const { step, prompt } = JSON.parse(line) as { step: string; prompt: string };
      return [step, prompt];
    }),
  );
}

describe('a value substituted into a template is never expanded again', () => {
  it("an agent's result holding template text reaches later prompts literally: fan-out items, result fields, inputs", async () => {
    const { dir, home } = planDir('baton-template-once-');
    const promptLog = join(dir, 'prompts.jsonl');
    const plan = fixturePlan(
      [
        { id: 'check', instruction: 'check', resultFile: 'result.json' },
        {
          id: 'each',
          instruction: 'item={{page}} note={{page.note}} secret={{inputs.secret}}',
          dependsOn: ['check'],
          forEach: { items: 'steps.check.result.pages', as: 'page', maxItems: 5 },
        },
        {
          id: 'report',
          instruction: 'first={{steps.check.result.pages.0.note}} given={{inputs.given}}',
          dependsOn: ['each'],
        },
      ],
      { inputs: { secret: { default: SECRET }, given: {} } },
      'agent-result-file',
    );
    const file = writePlan(dir, plan);
    const pages = PLANTED.map((note) => ({ note }));
    const result = await runBaton(['run', file, '--id', 'once', '-i', `given=${PLANTED[0]}`], {
      home,
      env: { PROMPT_LOG: promptLog, RESULT_JSON: JSON.stringify({ pages }) },
    });
    expectExit(result, 0);
    const seen = prompts(promptLog);
    for (const [index, note] of PLANTED.entries()) {
      expect(seen.get(`each[${index}]`)).toBe(
        `item=${JSON.stringify({ note })} note=${note} secret=${SECRET}`,
      );
    }
    expect(seen.get('report')).toBe(`first=${PLANTED[0]} given=${PLANTED[0]}`);
    const everything = [...seen.values()].join('\n');
    expect(everything.split(SECRET)).toHaveLength(PLANTED.length + 1);
    expect(everything).not.toContain(dir);
  }, 60_000);
});
