import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { isBatonError } from '../src/core/errors.js';
import { parseDurationMs } from '../src/core/plan/duration.js';
import { PlanInvalidError } from '../src/core/plan/issues.js';
import { validatePlanObject } from '../src/core/plan/parse.js';
import { DEFAULT_LIMITS, DEFAULT_RETRY, DEFAULT_TIMEOUT_MS } from '../src/core/plan/types.js';
import { loadPlanFile, MAX_PLAN_FILE_BYTES } from '../src/workflow/load-plan-file.js';
import { parsePlanText } from '../src/workflow/parse-plan-text.js';

const RESEARCH_YAML = `
version: 1
name: research-report
description: Research a topic and write a report
workspace: ./work
inputs:
  topic: { default: durable execution, description: what to research }
  audience:
defaults:
  agent: { command: [node, fake-agent.mjs], promptVia: arg }
  retry: { maxAttempts: 4, initialDelayMs: 2s }
  timeoutMs: 30m
limits: { concurrency: 2 }
steps:
  - id: research
    title: Research the topic
    instruction: "Research {{inputs.topic}}; write notes to study/notes.md"
    requiredOutputs: [study/notes.md]
  - id: summarise
    dependsOn: [research]
    instruction: "Summarise {{steps.research.outputs}} ({{ steps.research.summary }}) into {{run.workspace}}/study/summary.md"
    retry: { maxAttempts: 5 }
    timeoutMs: 10m
    delayBeforeMs: 1.5s
  - id: publish
    dependsOn: [summarise]
    fn: publish-report
    args: { channel: email }
`;

/** The message of the PLAN_INVALID error thrown by `run`. */
function planError(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    expect(isBatonError(error, 'PLAN_INVALID')).toBe(true);
    return (error as Error).message;
  }
  throw new Error('expected a PLAN_INVALID error');
}

const yamlError = (text: string, file = 'plan.yaml') => planError(() => parsePlanText(text, file));

describe('parsePlanText: valid plans', () => {
  it('normalizes a YAML plan with defaults merged', () => {
    const plan = parsePlanText(RESEARCH_YAML, 'plan.yaml');
    expect(plan).toMatchObject({
      version: 1,
      name: 'research-report',
      description: 'Research a topic and write a report',
      workspace: './work',
      inputs: { topic: { default: 'durable execution', description: 'what to research' }, audience: {} },
      limits: { ...DEFAULT_LIMITS, concurrency: 2 },
    });
    const [research, summarise, publish] = plan.steps;
    expect(research).toEqual({
      id: 'research',
      title: 'Research the topic',
      kind: 'agent',
      instruction: 'Research {{inputs.topic}}; write notes to study/notes.md',
      agent: { command: ['node', 'fake-agent.mjs'], promptVia: 'arg' },
      dependsOn: [],
      requiredOutputs: ['study/notes.md'],
      sideEffect: 'none',
      retry: { ...DEFAULT_RETRY, maxAttempts: 4, initialDelayMs: 2000 },
      timeoutMs: 1_800_000,
      delayBeforeMs: 0,
    });
    expect(summarise).toMatchObject({
      title: 'summarise',
      retry: { maxAttempts: 5, initialDelayMs: 2000, factor: 2, maxDelayMs: 300_000 },
      timeoutMs: 600_000,
      delayBeforeMs: 1500,
    });
    expect(publish).toEqual({
      id: 'publish',
      title: 'publish',
      kind: 'fn',
      fn: 'publish-report',
      args: { channel: 'email' },
      dependsOn: ['summarise'],
      requiredOutputs: [],
      sideEffect: 'none',
      retry: { ...DEFAULT_RETRY, maxAttempts: 4, initialDelayMs: 2000 },
      timeoutMs: 1_800_000,
      delayBeforeMs: 0,
    });
    expect(plan.steps.map((s) => s.id)).toEqual(['research', 'summarise', 'publish']);
  });

  it('reads shadow as true or { approvals }, and names a wrong approvals value', () => {
    const steps = [{ id: 'a', fn: 'f' }];
    expect(validatePlanObject({ name: 'p', shadow: true, steps }, 'p.yaml')).toMatchObject({ shadow: true });
    expect(
      'shadowApprovals' in
        validatePlanObject({ name: 'p', shadow: { approvals: 'approve' }, steps }, 'p.yaml'),
    ).toBe(false);
    expect(validatePlanObject({ name: 'p', shadow: { approvals: 'wait' }, steps }, 'p.yaml')).toMatchObject({
      shadow: true,
      shadowApprovals: 'wait',
    });
    expect(() => validatePlanObject({ name: 'p', shadow: { approvals: 'later' }, steps }, 'p.yaml')).toThrow(
      'p.yaml: shadow: expected true, false or { approvals: approve | reject | wait }, got an object',
    );
  });

  it('normalizes the same plan written as JSON', () => {
    const json = JSON.stringify({
      name: 'tiny',
      steps: [
        { id: 'a', instruction: 'do a', retry: { maxAttempts: 1 } },
        { id: 'b', dependsOn: ['a'], fn: 'f', args: [1, { x: null }] },
      ],
    });
    const plan = parsePlanText(json, 'plan.JSON');
    expect(plan).toEqual({
      version: 1,
      name: 'tiny',
      inputs: {},
      limits: DEFAULT_LIMITS,
      steps: [
        {
          id: 'a',
          title: 'a',
          kind: 'agent',
          instruction: 'do a',
          dependsOn: [],
          requiredOutputs: [],
          sideEffect: 'none',
          retry: { ...DEFAULT_RETRY, maxAttempts: 1 },
          timeoutMs: DEFAULT_TIMEOUT_MS,
          delayBeforeMs: 0,
        },
        {
          id: 'b',
          title: 'b',
          kind: 'fn',
          fn: 'f',
          args: [1, { x: null }],
          dependsOn: ['a'],
          requiredOutputs: [],
          sideEffect: 'none',
          retry: DEFAULT_RETRY,
          timeoutMs: DEFAULT_TIMEOUT_MS,
          delayBeforeMs: 0,
        },
      ],
    });
    // Without any agent command the agent step is still valid: the command may come at run time.
    expect(plan.steps[0]).not.toHaveProperty('agent');
  });

  it('lets a step replace the default agent whole, and accepts a {prompt} placeholder', () => {
    const plan = parsePlanText(
      `name: p
defaults: { agent: { command: [claude, -p] } }
steps:
  - id: a
    instruction: x
    agent: { command: [codex, exec, "{prompt}", --json], promptVia: placeholder }
  - id: b
    instruction: y
    agent: { command: [cat], promptVia: stdin }
  - { id: c, instruction: z }
`,
      'plan.yaml',
    );
    expect(plan.steps.map((s) => s.agent)).toEqual([
      { command: ['codex', 'exec', '{prompt}', '--json'], promptVia: 'placeholder' },
      { command: ['cat'], promptVia: 'stdin' },
      { command: ['claude', '-p'], promptVia: 'arg' },
    ]);
  });

  it('keeps YAML 1.2 scalars as strings, turns scalar input defaults into strings, allows merge keys and $schema', () => {
    const plan = parsePlanText(
      `$schema: ../schema/plan.schema.json
name: p
inputs: { flag: { default: yes }, count: { default: 3 }, on: { default: true } }
defaults: { retry: &r { maxAttempts: 2 } }
steps:
  - { id: a, instruction: "{{inputs.flag}} {{inputs.count}}", retry: { <<: *r, factor: 3 } }
`,
      'plan.yml',
    );
    expect(plan.inputs).toEqual({
      flag: { default: 'yes' },
      count: { default: '3' },
      on: { default: 'true' },
    });
    expect(plan.steps[0]?.retry).toEqual({ ...DEFAULT_RETRY, maxAttempts: 2, factor: 3 });
  });

  it('copies args and commands so the plan does not share objects with the caller', () => {
    const args = { nested: { n: 1 } };
    const command = ['node', 'agent.mjs'];
    const plan = validatePlanObject(
      {
        name: 'p',
        defaults: { agent: { command } },
        steps: [
          { id: 'a', fn: 'f', args },
          { id: 'b', instruction: 'x' },
        ],
      },
      'built-in',
    );
    args.nested.n = 2;
    command.push('--evil');
    expect(plan.steps[0]?.args).toEqual({ nested: { n: 1 } });
    expect(plan.steps[1]?.agent?.command).toEqual(['node', 'agent.mjs']);
  });
});

describe('validatePlanObject', () => {
  it('treats keys set to undefined in a plan built in code as absent', () => {
    const plan = validatePlanObject(
      {
        name: 'p',
        description: undefined,
        limits: { concurrency: undefined, maxSteps: 7 },
        defaults: { timeoutMs: undefined, retry: { factor: undefined } },
        steps: [{ id: 'a', fn: 'f', title: undefined, retry: undefined, timeoutMs: undefined }],
      },
      'built-in',
    );
    expect(plan).not.toHaveProperty('description');
    expect(plan.limits).toEqual({ ...DEFAULT_LIMITS, maxSteps: 7 });
    expect(plan.steps[0]).toMatchObject({ title: 'a', retry: DEFAULT_RETRY, timeoutMs: DEFAULT_TIMEOUT_MS });
  });
});

describe('parsePlanText: syntax and shape errors', () => {
  it('reports YAML syntax errors with file, line and column', () => {
    const message = yamlError('name: x\nsteps:\n  - id: a\n    instruction: b: c\n', 'plans/p.yaml');
    expect(message).toBe('plans/p.yaml:4:18: Nested mappings are not allowed in compact mappings');
  });

  it('reports duplicate YAML keys', () => {
    expect(yamlError('name: x\nname: y\nsteps: []\n')).toBe('plan.yaml:2:1: Map keys must be unique');
  });

  it('reports JSON syntax errors with line and column', () => {
    const message = yamlError('{"name": "x",\n "steps": [\n  {"id": "a" "fn": "f"}]}', 'plan.json');
    expect(message).toMatch(/^plan\.json:3:14: /);
    expect(message).not.toMatch(/position/);
    expect(yamlError('{"name": "x",', 'p.json')).toMatch(/^p\.json:1:14: /);
  });

  it('parses a .json file as JSON, not YAML', () => {
    expect(yamlError('name: x\nsteps: []\n', 'plan.json')).toMatch(/^plan\.json:1:2: Unexpected/);
    expect(yamlError('{"name": tru}', 'plan.json')).toMatch(/^plan\.json:1:13: Unexpected/);
  });

  it('says so when the file is empty or only comments', () => {
    const empty = 'plan.yaml: the plan is empty: it needs at least a "name" and a list of "steps"';
    expect(yamlError('')).toBe(empty);
    expect(yamlError('  \n\n')).toBe(empty);
    expect(yamlError('# just a comment\n')).toBe(empty);
    expect(yamlError('\uFEFF')).toBe(empty);
  });

  it('refuses a plan that is not a mapping', () => {
    expect(yamlError('- a\n- b\n')).toBe(
      'plan.yaml: expected a plan: a mapping with at least name and steps, got a list',
    );
    expect(yamlError('just text')).toBe(
      'plan.yaml: expected a plan: a mapping with at least name and steps, got "just text"',
    );
  });

  it('refuses unknown keys and suggests the closest known key', () => {
    const message = yamlError('name: p\nsteps:\n  - id: report\n    instruction: x\n    dependOn: [a]\n');
    expect(message).toBe('plan.yaml: steps.report: unknown key "dependOn": did you mean "dependsOn"?');
    expect(yamlError('name: p\nsteps:\n  - { id: a, fn: f, depends_on: [] }\n')).toContain(
      'unknown key "depends_on": did you mean "dependsOn"?',
    );
    expect(yamlError('name: p\nsteps: [{ id: a, fn: f, timeout: 5m }]\n')).toContain(
      'did you mean "timeoutMs"?',
    );
    expect(yamlError('name: p\nlimits: { concurency: 2 }\nsteps: [{ id: a, fn: f }]\n')).toBe(
      'plan.yaml: limits: unknown key "concurency": did you mean "concurrency"?',
    );
    expect(yamlError('name: p\nfoo: 1\nsteps: [{ id: a, fn: f }]\n')).toBe(
      'plan.yaml: unknown key "foo" (allowed: version, name, description, workspace, inputs, defaults, limits, priority, hooks, shadow, steps, finally, output, onFailure)',
    );
  });

  it('reports every schema problem at once, one per line, with step-id paths', () => {
    const message = yamlError(`
name: bad name!
version: 2
defaults:
  agent: { command: claude -p }
  timeoutMs: 10 min
steps:
  - id: a
    instruction: x
    retry: { maxAttempts: 0, factor: 0.5 }
  - instruction: y
  - id: c
    fn: 3
    requiredOutputs: x
`);
    expect(message.split('\n')).toEqual([
      'plan.yaml: 9 problems',
      'plan.yaml: version: only version 1 is supported, got 2',
      'plan.yaml: name: "bad name!" is not a valid plan name: use 1-100 letters, digits, ".", "_" or "-"',
      'plan.yaml: defaults.agent.command: expected the command as a list of arguments, e.g. [claude, -p], got "claude -p"',
      'plan.yaml: defaults.timeoutMs: "10 min" is not a duration: use whole milliseconds or a number with a unit (ms, s, m, h, d), e.g. 1500, "500ms", "30s", "2m", "1h" or "1d"',
      'plan.yaml: steps.a.retry.maxAttempts: 0 is too small: use at least 1',
      'plan.yaml: steps.a.retry.factor: 0.5 is too small: use at least 1',
      'plan.yaml: steps[1].id: required',
      'plan.yaml: steps.c.fn: expected a string, got 3',
      'plan.yaml: steps.c.requiredOutputs: expected a list of paths, e.g. [notes.md], got "x"',
    ]);
  });

  it('requires name and at least one step', () => {
    expect(yamlError('description: x\nsteps: []\n').split('\n')).toEqual([
      'plan.yaml: 2 problems',
      'plan.yaml: name: required',
      'plan.yaml: steps: a plan needs at least one step',
    ]);
  });

  it('checks step ids, reserved names and input names', () => {
    expect(yamlError('name: p\nsteps: [{ id: "a b", fn: f }]\n')).toBe(
      'plan.yaml: steps[0].id: "a b" is not a valid step id: use 1-64 letters, digits, "_" or "-"',
    );
    expect(yamlError('name: p\nsteps: [{ id: constructor, fn: f }]\n')).toBe(
      'plan.yaml: steps[0].id: "constructor" is reserved: choose another step id',
    );
    expect(yamlError('name: p\ninputs: { "my topic": {} }\nsteps: [{ id: a, fn: f }]\n')).toBe(
      'plan.yaml: inputs["my topic"]: "my topic" is not a valid input name: use 1-64 letters, digits, "_" or "-"',
    );
    expect(yamlError('name: p\ninputs: [topic]\nsteps: [{ id: a, fn: f }]\n')).toBe(
      'plan.yaml: inputs: expected the inputs as a mapping of names, e.g. { topic: { default: x } }, got a list',
    );
    expect(parsePlanText('name: constructor\nsteps: [{ id: a, fn: f }]\n', 'p.yaml').name).toBe(
      'constructor',
    );
  });

  it('checks bounds of retry, limits and timeouts', () => {
    const message = yamlError(`
name: p
limits: { maxSteps: 0, noProgressAfter: 1, concurrency: 257 }
defaults: { retry: { maxAttempts: 101 }, timeoutMs: 0 }
steps:
  - { id: a, fn: f, timeoutMs: 30d, delayBeforeMs: -5 }
`);
    expect(message.split('\n')).toEqual([
      'plan.yaml: 7 problems',
      'plan.yaml: defaults.retry.maxAttempts: 101 is too large: use at most 100',
      'plan.yaml: defaults.timeoutMs: 0 is out of range: use between 1 ms and 24.8 days',
      'plan.yaml: limits.maxSteps: 0 is too small: use at least 1',
      'plan.yaml: limits.noProgressAfter: 1 is too small: use at least 2',
      'plan.yaml: limits.concurrency: 257 is too large: use at most 256',
      'plan.yaml: steps.a.timeoutMs: "30d" is out of range: use between 1 ms and 24.8 days',
      expect.stringMatching(/^plan\.yaml: steps\.a\.delayBeforeMs: -5 is not a duration: /),
    ]);
  });

  it('checks the {prompt} placeholder against promptVia', () => {
    const agentPlan = (agent: string) =>
      `name: p\ndefaults: { agent: ${agent} }\nsteps: [{ id: a, instruction: x }]\n`;
    expect(yamlError(agentPlan('{ command: [x], promptVia: placeholder }'))).toBe(
      'plan.yaml: defaults.agent.command: promptVia is placeholder, so the command must contain the argument "{prompt}" exactly once (found 0)',
    );
    expect(
      yamlError(agentPlan('{ command: [x, "{prompt}", "{prompt}"], promptVia: placeholder }')),
    ).toContain('exactly once (found 2)');
    expect(yamlError(agentPlan('{ command: [x, "{prompt}"] }'))).toBe(
      'plan.yaml: defaults.agent.command: contains "{prompt}" but promptVia is arg (the default): set promptVia: placeholder',
    );
    expect(yamlError(agentPlan('{ command: [x], promptVia: pipe }'))).toBe(
      'plan.yaml: defaults.agent.promptVia: "pipe" is not allowed: use arg, placeholder or stdin',
    );
    expect(yamlError(agentPlan('{ command: [] }'))).toBe(
      'plan.yaml: defaults.agent.command: the command needs at least the program, e.g. [claude, -p]',
    );
  });

  it('refuses args that are not plain JSON', () => {
    const message = planError(() =>
      validatePlanObject({ name: 'p', steps: [{ id: 'a', fn: 'f', args: { n: Number.NaN } }] }, 'code'),
    );
    expect(message).toBe('code: steps.a.args: must be plain JSON (no NaN, Infinity or non-plain objects)');
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(
      planError(() => validatePlanObject({ name: 'p', steps: [{ id: 'a', fn: 'f', args: cyclic }] }, 'code')),
    ).toMatch(/must be plain JSON/);
  });

  it('throws a PlanInvalidError that carries the issues as data', () => {
    try {
      parsePlanText('name: p\nsteps: [{ id: a }, { id: b, fn: f, dependsOn: [x] }]\n', 'plan.yaml');
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(PlanInvalidError);
      const planError = error as PlanInvalidError;
      expect(planError.code).toBe('PLAN_INVALID');
      expect(planError.fileName).toBe('plan.yaml');
      expect(planError.issues.map((issue) => issue.path)).toEqual(['steps.a', 'steps.b.dependsOn[0]']);
    }
  });
});

describe('parseDurationMs', () => {
  it('accepts whole milliseconds and numbers with a unit', () => {
    expect(parseDurationMs(0, 'x')).toBe(0);
    expect(parseDurationMs(1500, 'x')).toBe(1500);
    expect(parseDurationMs('500ms', 'x')).toBe(500);
    expect(parseDurationMs('30s', 'x')).toBe(30_000);
    expect(parseDurationMs('1.5s', 'x')).toBe(1500);
    expect(parseDurationMs('2m', 'x')).toBe(120_000);
    expect(parseDurationMs('1h', 'x')).toBe(3_600_000);
    expect(parseDurationMs('1d', 'x')).toBe(86_400_000);
  });

  it('refuses anything else with INVALID_ARGUMENT, naming where and giving examples', () => {
    for (const bad of [-1, 1.5, Number.NaN, '', '10', '10 min', '1.s', '-1s', '1e3ms', ' 1s']) {
      try {
        parseDurationMs(bad, '--delay');
        expect.unreachable(`accepted ${String(bad)}`);
      } catch (error) {
        expect(isBatonError(error, 'INVALID_ARGUMENT')).toBe(true);
        expect((error as Error).message).toMatch(
          /^--delay: .* is not a duration: .*e\.g\. 1500, "500ms", "30s"/,
        );
      }
    }
  });
});

describe('loadPlanFile', () => {
  const dir = mkdtempSync(join(tmpdir(), 'baton-plan-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('reads, parses and returns the text and absolute path', async () => {
    const path = join(dir, 'plan.yaml');
    writeFileSync(path, RESEARCH_YAML);
    const loaded = await loadPlanFile(path);
    expect(loaded.plan.name).toBe('research-report');
    expect(loaded.text).toBe(RESEARCH_YAML);
    expect(loaded.absPath).toBe(path);
  });

  it('parses .json files as JSON and names the file as given in messages', async () => {
    const path = join(dir, 'bad.json');
    writeFileSync(path, '{"name": "p", "steps": [{"id": "a", "fn": "f", "dependsOn": ["b"]}]}');
    await expect(loadPlanFile(path)).rejects.toThrow(
      `${path}: steps.a.dependsOn[0]: unknown step "b" (known: a)`,
    );
  });

  it('refuses a missing file with PLAN_NOT_FOUND, a directory and a huge file with PLAN_INVALID', async () => {
    const missing = join(dir, 'nope.yaml');
    await expect(loadPlanFile(missing)).rejects.toMatchObject({
      code: 'PLAN_NOT_FOUND',
      message: `plan file not found: ${missing}`,
    });
    await expect(loadPlanFile(dir)).rejects.toMatchObject({
      code: 'PLAN_INVALID',
      message: expect.stringMatching(/is a directory/),
    });
    const huge = join(dir, 'huge.yaml');
    writeFileSync(huge, `name: p\n# ${'x'.repeat(MAX_PLAN_FILE_BYTES)}\n`);
    await expect(loadPlanFile(huge)).rejects.toMatchObject({
      code: 'PLAN_INVALID',
      message: expect.stringMatching(/5 MB/),
    });
  });

  it('refuses text that is not UTF-8', async () => {
    const path = join(dir, 'latin1.yaml');
    writeFileSync(path, Buffer.from([0x6e, 0x61, 0x6d, 0x65, 0x3a, 0x20, 0xe9, 0x0a]));
    await expect(loadPlanFile(path)).rejects.toMatchObject({
      code: 'PLAN_INVALID',
      message: `${path}: is not valid UTF-8 text`,
    });
  });
});
