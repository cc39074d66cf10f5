import { describe, expect, it } from 'vitest';
import '../src/store/core-libraries.js';
import { FlowGate } from '../src/core/flow.js';
import { itemStep } from '../src/core/for-each-items.js';
import { validatePlanObject } from '../src/core/plan/parse.js';
import { declaredFlowLimit, flowAllows, stepFlowKey } from '../src/store/flow-accounting.js';
import { runStateOf } from './helpers/run-state.js';

const plan = (steps: object[], extra: object = {}) =>
  validatePlanObject({ name: 'p', inputs: { customer: null }, steps, ...extra }, 'test');

describe('keyed flow control: flow: { key, concurrency, rate }', () => {
  it('renders the key for each run, and declares its limit for every key it renders to', () => {
    const p = plan([
      { id: 'a', fn: 'f', flow: { key: 'customer:{{inputs.customer}}', concurrency: 1, rate: '10/m' } },
    ]);
    const acme = runStateOf(p, { id: 'r1', inputs: { customer: 'acme' } });
    const globex = runStateOf(p, { id: 'r2', inputs: { customer: 'globex' } });
    expect(stepFlowKey(acme, 0)).toBe('customer:acme');
    expect(stepFlowKey(globex, 0)).toBe('customer:globex');
    expect(declaredFlowLimit(globex, 0)).toEqual({
      key: 'customer:globex',
      concurrency: 1,
      rate: { count: 10, windowMs: 60_000 },
    });
  });

  it('defaults.flow applies to steps without flow or flowKey; a step cannot have both', () => {
    const p = plan(
      [
        { id: 'a', fn: 'f' },
        { id: 'b', fn: 'f', flowKey: 'github' },
      ],
      { defaults: { flow: { key: 'c:{{inputs.customer}}', concurrency: 2 } } },
    );
    expect(p.steps[0]!.flow).toEqual({ key: 'c:{{inputs.customer}}', concurrency: 2 });
    expect(p.steps[1]!.flow).toBeUndefined();
    expect(p.steps[1]!.flowKey).toBe('github');
    expect(() => plan([{ id: 'a', fn: 'f', flowKey: 'x', flow: { key: 'y' } }])).toThrow(
      /steps\.a\.flow: a step counts against one flow key/,
    );
    expect(() => plan([{ id: 'a', fn: 'f', flow: { key: 'y', rate: 'lots' } }])).toThrow(
      /steps\.a\.flow\.rate: "lots" is not a rate/,
    );
    expect(() => plan([{ id: 'a', fn: 'f', flow: { key: '{{inputs.client}}' } }])).toThrow(
      /steps\.a\.flow\.key: \{\{inputs\.client\}\}: input "client" is not declared/,
    );
  });

  it("a fan-out item's key is rendered from its item", () => {
    const p = validatePlanObject(
      {
        name: 'fan',
        steps: [
          { id: 'list', fn: 'f' },
          {
            id: 'each',
            fn: 'g',
            dependsOn: ['list'],
            forEach: { items: 'steps.list.result', maxItems: 10 },
            flow: { key: 'customer:{{item.name}}', concurrency: 1 },
          },
        ],
      },
      'test',
    );
    const item = itemStep(p.steps[1]!, 0, { name: 'acme' });
    expect(typeof item === 'string' ? item : item.flow?.key).toBe('customer:acme');
  });

  it('a step whose declared key the store holds no limit for waits for the next cycle, and says so', () => {
    const p = plan([{ id: 'a', fn: 'f', flow: { key: 'c:{{inputs.customer}}', concurrency: 1 } }]);
    const run = runStateOf(p, { inputs: { customer: 'acme' } });
    const declared: string[] = [];
    expect(
      flowAllows(
        null,
        run,
        0,
        () => [],
        (limit) => declared.push(limit.key),
      ),
    ).toBe(false);
    expect(declared).toEqual(['c:acme']);
    // Once stored (by the plan or an operator), the stored limit decides: the operator's wins.
    const limit = { key: 'c:acme', concurrency: 3, rate: null };
    const gate = new FlowGate([{ limit, running: 2, starts: [] }], 0);
    expect(flowAllows(gate, run, 0, () => [])).toBe(true);
    const full = new FlowGate([{ limit, running: 3, starts: [] }], 0);
    expect(flowAllows(full, run, 0, () => [])).toBe(false);
    // A key without a declared limit is not held back.
    const free = plan([{ id: 'a', fn: 'f', flow: { key: 'c:{{inputs.customer}}' } }]);
    expect(flowAllows(null, runStateOf(free, { inputs: { customer: 'x' } }), 0, () => [])).toBe(true);
  });
});

describe('keyed flow control in a TypeScript workflow', () => {
  it("a step's policy takes flow, rendered per run", async () => {
    const { defineWorkflow } = await import('../src/workflow/define-workflow.js');
    const wf = defineWorkflow<{ customer: string }>({ name: 'w', inputs: { customer: null } }).step(
      'reply',
      { flow: { key: 'customer:{{inputs.customer}}', concurrency: 1 } },
      () => 1,
    );
    const p = wf.toPlan();
    expect(p.steps[0]!.flow).toEqual({ key: 'customer:{{inputs.customer}}', concurrency: 1 });
    expect(stepFlowKey(runStateOf(p, { inputs: { customer: 'acme' } }), 0)).toBe('customer:acme');
  });
});
