/** `sandbox:` in a plan: per step or in defaults, kept by an agent fallback, refused where no agent runs. */
import { describe, expect, it } from 'vitest';
import { isBatonError } from '../src/core/errors.js';
import { fallbackPlanStep } from '../src/core/fallback.js';
import { parsePlanText } from '../src/workflow/parse-plan-text.js';

const agent = 'defaults:\n  agent: { command: [claude, -p] }\n';

function problems(yaml: string): string[] {
  try {
    parsePlanText(yaml, 'plan.yaml');
  } catch (error) {
    expect(isBatonError(error, 'PLAN_INVALID')).toBe(true);
    return (error as Error).message.split('\n');
  }
  throw new Error('expected a PLAN_INVALID error');
}

describe('sandbox in a plan', () => {
  it('a step takes defaults.sandbox unless it sets its own; none leaves the key out', () => {
    const plan = parsePlanText(
      `name: p\n${agent}  sandbox: workspace\nsteps:\n  - { id: a, instruction: x }\n  - { id: b, instruction: y, sandbox: none }\n  - { id: c, instruction: z, agent: { command: [codex, exec] } }\n`,
      'plan.yaml',
    );
    expect(plan.steps.map((step) => step.sandbox)).toEqual(['workspace', undefined, 'workspace']);
    expect('sandbox' in plan.steps[1]!).toBe(false);
  });

  it('is not confined by default', () => {
    const plan = parsePlanText(`name: p\n${agent}steps:\n  - { id: a, instruction: x }\n`, 'plan.yaml');
    expect('sandbox' in plan.steps[0]!).toBe(false);
  });

  it('an agent fallback runs under its step sandbox, also of a model step', () => {
    const model = '{ provider: openai, model: m, prompt: p }';
    const plan = parsePlanText(
      `name: p\n${agent}  sandbox: workspace\nsteps:\n  - { id: m, model: ${model}, fallback: { instruction: do it } }\n  - { id: f, fn: g }\n`,
      'plan.yaml',
    );
    expect(plan.steps[0]?.sandbox).toBe('workspace');
    expect(fallbackPlanStep(plan.steps[0]!)).toMatchObject({ kind: 'agent', sandbox: 'workspace' });
    // A function step runs no agent: the default does not apply to it.
    expect(plan.steps[1]?.sandbox).toBeUndefined();
  });

  it('refuses an unknown mode and a sandbox on a step that runs no agent, naming the field', () => {
    expect(problems(`name: p\n${agent}steps:\n  - { id: a, instruction: x, sandbox: strict }\n`)).toEqual([
      'plan.yaml: steps.a.sandbox: "strict" is not allowed: use workspace or none',
    ]);
    expect(problems('name: p\nsteps:\n  - { id: f, fn: g, sandbox: workspace }\n')).toEqual([
      'plan.yaml: steps.f.sandbox: only agents run confined, and this fn step has no agent fallback: remove "sandbox"',
    ]);
  });
});
