// Compile-time checks of the typed workflow API, type-checked by test/workflow-types.test.ts.
// Every `@ts-expect-error` line must be an error: if the types ever let it through, tsc fails.
import { expectTypeOf } from 'vitest';
import { type Baton, defineWorkflow, type WorkflowResults } from '../../src/index.js';

const report = defineWorkflow<{ topic: string }>({ name: 'report', inputs: { topic: null } })
  .step('research', async (ctx) => {
    expectTypeOf(ctx.inputs.topic).toEqualTypeOf<string>();
    expectTypeOf(ctx.results).toEqualTypeOf<Record<string, never>>();
    return { notes: [`about ${ctx.inputs.topic}`], sources: 3 };
  })
  .step('count', () => 42)
  .step('summarise', { dependsOn: ['research', 'count'] }, async (ctx) => {
    expectTypeOf(ctx.results.research).toEqualTypeOf<{ notes: string[]; sources: number }>();
    expectTypeOf(ctx.results.count).toEqualTypeOf<number>();
    // @ts-expect-error summarise does not depend on itself, nor on steps declared later
    ctx.results.summarise;
    const receipt = await ctx.effect('mail', async (key) => {
      expectTypeOf(key).toEqualTypeOf<string>();
      return { messageId: 'm1' };
    });
    expectTypeOf(receipt).toEqualTypeOf<{ messageId: string }>();
    return ctx.results.research.notes.join('\n');
  })
  .step('publish', { dependsOn: ['summarise'], sideEffect: 'unsafe' }, (ctx) => {
    expectTypeOf(ctx.results.summarise).toEqualTypeOf<string>();
    // @ts-expect-error research is not a dependency of publish
    ctx.results.research;
    return true;
  });

expectTypeOf<WorkflowResults<typeof report>>().toEqualTypeOf<{
  research: { notes: string[]; sources: number };
  count: number;
  summarise: string;
  publish: boolean;
}>();

// @ts-expect-error dependsOn must name a step declared before
report.step('late', { dependsOn: ['nonexistent'] }, () => 1);

// @ts-expect-error sideEffect is one of none, idempotent, unsafe
report.step('bad', { sideEffect: 'sometimes' }, () => 1);

export async function usage(baton: Baton): Promise<void> {
  const { runId } = await baton.start(report, { topic: 'otters' }, { runId: 'r1' });
  const results = await baton.result(report, runId);
  expectTypeOf(results.summarise).toEqualTypeOf<string>();
  expectTypeOf(results.publish).toEqualTypeOf<boolean>();
  // @ts-expect-error inputs are checked: topic is required
  await baton.start(report, {});
  // @ts-expect-error inputs are checked: no such input
  await baton.start(report, { topic: 'x', colour: 'red' });
}

// A wait step has no function; the step after an approval reads { approved, by, comment, at }.
const approved = defineWorkflow({ name: 'approved' })
  .step('ok', { wait: { for: 'approval', prompt: 'Go?' } })
  .step('go', { dependsOn: ['ok'] }, (ctx) => {
    expectTypeOf(ctx.results.ok.approved).toEqualTypeOf<boolean>();
    expectTypeOf(ctx.results.ok.comment).toEqualTypeOf<string | null>();
    return 1;
  });
expectTypeOf<WorkflowResults<typeof approved>['ok']['by']>().toEqualTypeOf<string>();

// @ts-expect-error an event wait needs its event
approved.step('evt', { wait: { for: 'event' } });
