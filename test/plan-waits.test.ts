import { describe, expect, it } from 'vitest';
import { isBatonError } from '../src/core/errors.js';
import { parsePlanText } from '../src/workflow/parse-plan-text.js';

/** Parses a YAML plan expecting PLAN_INVALID; returns the message lines. */
function problems(yaml: string): string[] {
  try {
    parsePlanText(yaml, 'plan.yaml');
  } catch (error) {
    expect(isBatonError(error, 'PLAN_INVALID')).toBe(true);
    return (error as Error).message.split('\n');
  }
  throw new Error('expected a PLAN_INVALID error');
}

const plan = (steps: string) => `name: p\nsteps:\n${steps}`;

describe('wait steps in a plan', () => {
  it('normalises an approval and an event wait, with a duration or an absolute deadline', () => {
    const parsed = parsePlanText(
      plan(`  - id: ok
    wait: { for: approval, prompt: "Send it?", timeout: 24h, onTimeout: reject }
  - id: deployed
    wait: { for: event, event: "deployed-{{run.id}}", timeout: "2026-12-24T18:00:00+08:00", schema: { type: object } }
`),
      'plan.yaml',
    );
    expect(parsed.steps[0]).toMatchObject({
      kind: 'wait',
      wait: { for: 'approval', prompt: 'Send it?', timeoutMs: 86_400_000, onTimeout: 'reject' },
    });
    expect(parsed.steps[1]).toMatchObject({
      kind: 'wait',
      wait: {
        for: 'event',
        event: 'deployed-{{run.id}}',
        deadlineAt: Date.parse('2026-12-24T10:00:00Z'),
        onTimeout: 'block',
        schema: { type: 'object' },
      },
    });
  });

  it('refuses a wait on a step that also has a body, naming the field and the fix', () => {
    expect(problems(plan('  - { id: a, fn: f, wait: { for: approval } }\n'))).toEqual([
      'plan.yaml: steps.a.fn: a wait step has no body and runs nothing: remove "fn", or put the work in a step of its own with dependsOn: [a]',
    ]);
    expect(problems(plan('  - { id: a, instruction: do it, wait: { for: approval } }\n'))[0]).toContain(
      'steps.a.instruction: a wait step has no body',
    );
  });

  it('refuses an event wait without its event, a bad timeout, and a local time without an offset', () => {
    expect(problems(plan('  - { id: a, wait: { for: event } }\n'))).toEqual([
      'plan.yaml: steps.a.wait.event: an event wait needs the name of its event: add event: <name>',
    ]);
    const bad = problems(plan('  - { id: a, wait: { for: approval, timeout: "2026-12-24T18:00:00" } }\n'));
    expect(bad.join('\n')).toContain('steps.a.wait.timeout');
    expect(bad.join('\n')).toContain('an ISO 8601 date-time with an offset');
    expect(problems(plan('  - { id: a, wait: { for: approval, onTimeout: later } }\n')).join('\n')).toContain(
      'expected block, skip or reject',
    );
  });
});

describe('templates of a wait', () => {
  it('are checked like an instruction: a step it does not depend on, an undeclared input', () => {
    const lines = problems(
      plan(`  - { id: write, fn: w }
  - { id: ok, wait: { for: approval, prompt: "Send {{steps.write.summary}}?" } }
  - { id: evt, wait: { for: event, event: "go-{{inputs.env}}" } }
`),
    );
    expect(lines.join('\n')).toContain(
      'steps.ok.wait.prompt: {{steps.write.summary}}: step "write" is not a dependency of "ok"',
    );
    expect(lines.join('\n')).toContain('steps.evt.wait.event: {{inputs.env}}: input "env" is not declared');
  });
});
