import { describe, expect, it } from 'vitest';
import { isBatonError } from '../src/core/errors.js';
import { answerDependencyQuestions, findCycles } from '../src/core/plan/graph.js';
import { parsePlanText } from '../src/workflow/parse-plan-text.js';

/** Parses a YAML plan expecting PLAN_INVALID; returns the message lines. */
function problems(yaml: string, file = 'plan.yaml'): string[] {
  try {
    parsePlanText(yaml, file);
  } catch (error) {
    expect(isBatonError(error, 'PLAN_INVALID')).toBe(true);
    return (error as Error).message.split('\n');
  }
  throw new Error('expected a PLAN_INVALID error');
}

const plan = (steps: string, extra = '') => `name: p\n${extra}steps:\n${steps}`;

describe('normalizePlan: steps', () => {
  it('refuses duplicate step ids, naming both places', () => {
    expect(problems(plan('  - { id: fetch, fn: f }\n  - { id: fetch, fn: g }\n'))).toEqual([
      'plan.yaml: steps[1].id: duplicate step id "fetch" (already used by steps[0]): step ids must be unique',
    ]);
  });

  it('needs exactly one of instruction, fn and model', () => {
    const model = '{ provider: openai, model: m, prompt: p }';
    expect(
      problems(
        plan(`  - { id: a }\n  - { id: b, fn: f, instruction: x }\n  - { id: c, fn: f, model: ${model} }\n`),
      ),
    ).toEqual([
      'plan.yaml: 3 problems',
      'plan.yaml: steps.a: needs "instruction" (run by an agent), "fn" (a registered function), "model" (a model call), "plan" (a child run of another plan) or "wait" (a person or an event)',
      'plan.yaml: steps.b: has "instruction" and "fn": a step is either an agent step (instruction), a function step (fn), a model step (model) or a sub-plan (plan)',
      'plan.yaml: steps.c: has "fn" and "model": a step is either an agent step (instruction), a function step (fn), a model step (model) or a sub-plan (plan)',
    ]);
  });

  it('a hook needs exactly one of command, url and urlEnv; urlEnv is a variable name', () => {
    const hooks = ['  - { on: [blocked], url: "https://h/x", urlEnv: HOOK_URL }', '  - { on: [blocked] }'];
    expect(problems(plan('  - { id: a, fn: f }\n', `hooks:\n${hooks.join('\n')}\n`))).toEqual([
      'plan.yaml: 2 problems',
      'plan.yaml: hooks[0]: needs exactly one of "command" (argv), "url" or "urlEnv" (a variable holding the URL)',
      'plan.yaml: hooks[1]: needs exactly one of "command" (argv), "url" or "urlEnv" (a variable holding the URL)',
    ]);
    expect(
      problems(plan('  - { id: a, fn: f }\n', 'hooks:\n  - { on: [blocked], urlEnv: "not a name" }\n')),
    ).toEqual([
      'plan.yaml: hooks[0].urlEnv: expected the name of an environment variable, e.g. SLACK_WEBHOOK_URL',
    ]);
  });

  it('normalizes a model step with its defaults and checks its templates', () => {
    const normalized = parsePlanText(
      'name: p\nsteps:\n  - id: a\n    model: { provider: anthropic, model: claude-x, prompt: "hi {{run.id}}" }\n',
      'plan.yaml',
    );
    expect(normalized.steps[0]).toMatchObject({
      kind: 'model',
      model: {
        provider: 'anthropic',
        model: 'claude-x',
        prompt: 'hi {{run.id}}',
        tools: [],
        maxOutputTokens: 1024,
        maxTurns: 20,
        stream: false,
        requestTimeoutMs: 120_000,
      },
    });
  });

  it('refuses args on agent steps and an agent on function steps', () => {
    const lines = problems(
      plan('  - { id: a, instruction: x, args: 1 }\n  - { id: b, fn: f, agent: { command: [x] } }\n'),
    );
    expect(lines).toEqual([
      'plan.yaml: 2 problems',
      'plan.yaml: steps.a.args: only function steps take args: add "fn" or remove "args"',
      'plan.yaml: steps.b.agent: a function step does not run an agent: remove "agent"',
    ]);
  });

  it('checks required outputs lexically: absolute, escaping with .., NUL', () => {
    const lines = problems(
      plan(
        '  - id: a\n    fn: f\n    requiredOutputs: [ok/file.md, /etc/passwd, ../x, "a\\0b", ok/../../y, "C:\\\\x", "\\\\\\\\srv\\\\x", "a\\\\..\\\\..\\\\b"]\n',
      ),
    );
    expect(lines).toEqual([
      'plan.yaml: 7 problems',
      'plan.yaml: steps.a.requiredOutputs[1]: "/etc/passwd" is absolute: use a path relative to the run workspace',
      'plan.yaml: steps.a.requiredOutputs[2]: "../x" leaves the run workspace through "..": use a path inside it',
      'plan.yaml: steps.a.requiredOutputs[3]: "a\\u0000b" contains a NUL character',
      'plan.yaml: steps.a.requiredOutputs[4]: "ok/../../y" leaves the run workspace through "..": use a path inside it',
      'plan.yaml: steps.a.requiredOutputs[5]: "C:\\\\x" is absolute: use a path relative to the run workspace',
      'plan.yaml: steps.a.requiredOutputs[6]: "\\\\\\\\srv\\\\x" is absolute: use a path relative to the run workspace',
      'plan.yaml: steps.a.requiredOutputs[7]: "a\\\\..\\\\..\\\\b" leaves the run workspace through "..": use a path inside it',
    ]);
  });

  it('refuses an initial retry delay above the maximum, saying where each value comes from', () => {
    expect(
      problems(
        plan('  - { id: a, fn: f }\n', 'defaults: { retry: { initialDelayMs: 10m, maxDelayMs: 1m } }\n'),
      ),
    ).toEqual([
      'plan.yaml: defaults.retry: initialDelayMs (600000 ms) is greater than maxDelayMs (60000 ms): lower initialDelayMs or raise maxDelayMs',
    ]);
    expect(problems(plan('  - { id: a, fn: f, retry: { maxDelayMs: 500 } }\n'))).toEqual([
      'plan.yaml: steps.a.retry: initialDelayMs (1000 ms, inherited) is greater than maxDelayMs (500 ms): lower initialDelayMs or raise maxDelayMs',
    ]);
  });
});

describe('normalizePlan: dependsOn', () => {
  it('refuses unknown ids, listing the known ones and suggesting the closest', () => {
    const lines = problems(
      plan(
        '  - { id: fetch, fn: f }\n  - { id: analyze, fn: f }\n  - { id: report, fn: f, dependsOn: [analyse] }\n',
      ),
    );
    expect(lines).toEqual([
      'plan.yaml: steps.report.dependsOn[0]: unknown step "analyse" (known: fetch, analyze, report): did you mean "analyze"?',
    ]);
    expect(problems(plan('  - { id: fetch, fn: f, dependsOn: [zzz] }\n'))).toEqual([
      'plan.yaml: steps.fetch.dependsOn[0]: unknown step "zzz" (known: fetch)',
    ]);
  });

  it('refuses self-dependencies and repeated ids', () => {
    expect(problems(plan('  - { id: a, fn: f }\n  - { id: b, fn: f, dependsOn: [a, b, a] }\n'))).toEqual([
      'plan.yaml: 2 problems',
      'plan.yaml: steps.b.dependsOn[1]: step "b" cannot depend on itself: remove "b"',
      'plan.yaml: steps.b.dependsOn[2]: "a" is listed twice: remove one',
    ]);
  });

  it('names a cycle, starting from the step that comes first', () => {
    const steps = [
      '  - { id: start, fn: f }',
      '  - { id: b, fn: f, dependsOn: [c] }',
      '  - { id: a, fn: f, dependsOn: [b, start] }',
      '  - { id: c, fn: f, dependsOn: [a] }',
    ].join('\n');
    expect(problems(plan(`${steps}\n`))).toEqual([
      'plan.yaml: steps.b.dependsOn: cycle: b -> c -> a -> b (each step depends on the next): remove one of these dependencies',
    ]);
  });

  it('reports separate cycles separately', () => {
    const cycles = findCycles([
      { id: 'a', dependsOn: ['b'] },
      { id: 'b', dependsOn: ['a'] },
      { id: 'c', dependsOn: ['d'] },
      { id: 'd', dependsOn: ['c', 'a'] },
    ]);
    expect(cycles).toEqual([
      ['a', 'b', 'a'],
      ['c', 'd', 'c'],
    ]);
  });

  it('handles a long chain without overflowing the stack', () => {
    const steps = Array.from({ length: 20_000 }, (_, i) => ({
      id: `s${i}`,
      dependsOn: i === 0 ? [] : [`s${i - 1}`],
    }));
    expect(findCycles(steps)).toEqual([]);
    steps[0] = { id: 's0', dependsOn: ['s19999'] };
    expect(findCycles(steps)[0]?.length).toBe(20_001);
  });

  it('answers whether a step depends on another, directly or indirectly', () => {
    const steps = [
      { id: 'a', dependsOn: [] },
      { id: 'b', dependsOn: ['a'] },
      { id: 'c', dependsOn: ['b', 'ghost'] },
      { id: 'd', dependsOn: [] },
    ];
    const ask = (step: string, target: string) => ({ step, target });
    expect(
      answerDependencyQuestions(steps, [
        ask('c', 'a'),
        ask('c', 'b'),
        ask('d', 'a'),
        ask('a', 'c'),
        ask('b', 'd'),
      ]),
    ).toEqual([true, true, false, false, false]);
  });

  it('answers for a long chain and many targets in linear passes', () => {
    const steps = Array.from({ length: 5_000 }, (_, i) => ({
      id: `s${i}`,
      dependsOn: i === 0 ? [] : [`s${i - 1}`],
    }));
    // Every step asks about the first (an ancestor of all but itself) and about the next one
    // (never an ancestor): 10,000 questions about 5,000 targets, so several chunks of targets.
    const questions = steps.flatMap((step, i) => [
      { step: step.id, target: 's0' },
      { step: step.id, target: `s${Math.min(i + 1, 4_999)}` },
    ]);
    const answers = answerDependencyQuestions(steps, questions);
    const firstIsAncestor = answers.filter((_, q) => q % 2 === 0);
    expect(firstIsAncestor.indexOf(false)).toBe(0);
    expect(firstIsAncestor.lastIndexOf(false)).toBe(0);
    expect(answers.filter((answer, q) => q % 2 === 1 && answer)).toEqual([]);
  });

  it('names a few steps of a long cycle and how many there are', () => {
    const steps = Array.from({ length: 10_000 }, (_, i) => ({
      id: `s${i}`,
      fn: 'f',
      dependsOn: [`s${(i + 9_999) % 10_000}`],
    }));
    expect(problems(JSON.stringify({ name: 'p', steps }), 'plan.json')).toEqual([
      'plan.json: steps.s0.dependsOn: cycle of 10000 steps: s0 -> s9999 -> s9998 -> s9997 -> s9996 -> s9995 -> ... (9991 more) -> s3 -> s2 -> s1 -> s0 (each step depends on the next): remove one of these dependencies',
    ]);
  });
});

describe('normalizePlan: template references', () => {
  const inputs = 'inputs: { topic: { default: x } }\n';

  it('accepts references to transitive dependencies, declared inputs and the run', () => {
    const parsed = parsePlanText(
      plan(
        [
          '  - { id: a, fn: f }',
          '  - { id: b, fn: f, dependsOn: [a] }',
          '  - id: c',
          '    dependsOn: [b]',
          '    instruction: "{{steps.a.summary}} {{ steps.a.outputs }} {{steps.b.summary}} {{inputs.topic}} {{run.workspace}} {{run.id}}"',
        ].join('\n'),
        inputs,
      ),
      'plan.yaml',
    );
    expect(parsed.steps[2]?.dependsOn).toEqual(['b']);
  });

  it('refuses a step reference that is not a dependency: it may not have run yet', () => {
    const lines = problems(
      plan(
        '  - { id: a, fn: f }\n  - { id: b, fn: f }\n  - { id: c, dependsOn: [b], instruction: "use {{steps.a.summary}}" }\n',
      ),
    );
    expect(lines).toEqual([
      'plan.yaml: steps.c.instruction: {{steps.a.summary}}: step "a" is not a dependency of "c" (directly or indirectly), so it may not have run yet: add "a" to steps.c.dependsOn',
    ]);
  });

  it('refuses unknown steps, own results, undeclared inputs and unknown forms', () => {
    const instruction =
      '"{{steps.fetc.outputs}} {{steps.b.summary}} {{inputs.topik}} {{input.topic}} {{constructor}} {{steps.fetch.summary.length}} {{ }}"';
    const lines = problems(
      plan(
        `  - { id: fetch, fn: f }\n  - { id: b, dependsOn: [fetch], instruction: ${instruction} }\n`,
        inputs,
      ),
    );
    const allowed =
      'allowed: {{inputs.<name>}}, {{steps.<id>.summary}}, {{steps.<id>.outputs}}, {{steps.<id>.result}}, {{steps.<id>.result.<path>}}, {{run.workspace}}, {{run.id}}, {{run.status}} (cleanup steps)';
    expect(lines).toEqual([
      'plan.yaml: 7 problems',
      'plan.yaml: steps.b.instruction: {{steps.fetc.outputs}}: unknown step "fetc" (known: fetch, b): did you mean "fetch"?',
      'plan.yaml: steps.b.instruction: {{steps.b.summary}}: a step cannot use its own result',
      'plan.yaml: steps.b.instruction: {{inputs.topik}}: input "topik" is not declared (declared: topic): did you mean "topic"?',
      `plan.yaml: steps.b.instruction: {{input.topic}} is not a template reference (did you mean "{{inputs.topic}}"?); ${allowed}`,
      `plan.yaml: steps.b.instruction: {{constructor}} is not a template reference; ${allowed}`,
      `plan.yaml: steps.b.instruction: {{steps.fetch.summary.length}} is not a template reference (did you mean "{{steps.fetch.summary}}"?); ${allowed}`,
      `plan.yaml: steps.b.instruction: {{ }} is not a template reference; ${allowed}`,
    ]);
  });

  it('tells how to declare an input when there are none', () => {
    expect(problems(plan('  - { id: a, instruction: "{{inputs.topic}}" }\n'))).toEqual([
      'plan.yaml: steps.a.instruction: {{inputs.topic}}: input "topic" is not declared: add it under inputs:',
    ]);
  });

  it('does not treat prototype keys as declared inputs', () => {
    expect(problems(plan('  - { id: a, instruction: "{{inputs.toString}}" }\n', inputs))).toEqual([
      'plan.yaml: steps.a.instruction: {{inputs.toString}}: input "toString" is not declared (declared: topic): declare it under inputs:',
    ]);
  });

  it('reports problems of several kinds together, with a summary line', () => {
    const lines = problems(
      plan(
        '  - { id: a, fn: f, dependsOn: [b], requiredOutputs: [../x] }\n  - { id: b, dependsOn: [a], instruction: "{{steps.z.summary}}" }\n',
      ),
      'plans/report.yaml',
    );
    expect(lines[0]).toBe('plans/report.yaml: 3 problems');
    expect(lines.slice(1).every((line) => line.startsWith('plans/report.yaml: steps.'))).toBe(true);
    expect(lines.join('\n')).toContain('cycle: a -> b -> a');
  });
});
