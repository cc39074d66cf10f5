// Issue 41 item 2: does a pending tool approval cost the claim cycle anything? Two homes (SQLite):
// one with BENCH_TOOL_APPROVALS (default 1,000) runs whose agent step is running (claimed by
// another worker, its lease long) with a tool call waiting for a person (its
// step.tool_approval_requested event, as the worker's relay records it), and one without them.
// Both get the same live runs of one no-op step; the figure is the median claim cycle of each,
// alternating, and their ratio (goal <= 1.1): a waiting call is an event, read by nobody's claim.
import { validatePlanObject } from '../../dist/core/plan/parse.js';
import { startRun } from '../../dist/engine/start-run.js';
import { assert, chainPlan, claimer, emit, median, openStore, tempHome } from '../lib.mjs';

const PENDING = Number(process.env.BENCH_TOOL_APPROVALS ?? 1000);
const SAMPLES = Number(process.env.BENCH_TOOL_APPROVAL_SAMPLES ?? 30);
const LIVE_RUNS = SAMPLES + 1;

const approvalPlan = validatePlanObject(
  {
    name: 'push',
    steps: [
      {
        id: 'push',
        instruction: 'push the branch',
        agent: { command: ['true'], profile: 'claude', approve: [{ tool: 'Bash', match: 'git push*' }] },
      },
    ],
  },
  'bench',
);

async function makePending(store, count) {
  for (let i = 0; i < count; i++)
    await startRun(store, { plan: approvalPlan, runId: `p${String(i).padStart(5, '0')}`, workspace: '/tmp' });
  let claimed = [];
  while (claimed.length < count) {
    const result = await store.cycle({
      owner: 'other-worker',
      now: Date.now(),
      leaseMs: 3_600_000,
      completions: [],
      claimLimit: count - claimed.length,
      random: Math.random,
    });
    claimed = [...claimed, ...result.claimed];
    if (result.claimed.length === 0) break;
  }
  assert(claimed.length === count, `claimed ${claimed.length} of ${count}`);
  for (const claim of claimed)
    await store.appendEvents(
      claim.runId,
      [
        {
          type: 'step.tool_approval_requested',
          stepId: claim.stepId,
          attempt: claim.attempt,
          callId: `toolu_${claim.runId}`,
          tool: 'Bash',
          digest: '0'.repeat(64),
          summary: 'git push --force',
          timeoutAt: Date.now() + 3_600_000,
        },
      ],
      Date.now(),
    );
}

const homes = { none: tempHome('approvals-none'), pending: tempHome('approvals-pending') };
try {
  const stores = {};
  for (const [name, home] of Object.entries(homes)) stores[name] = openStore(home.dbPath);
  await makePending(stores.pending, PENDING);
  const plan = chainPlan('claim', 1);
  for (const store of Object.values(stores))
    for (let i = 0; i < LIVE_RUNS; i++) await startRun(store, { plan, runId: `c${i}`, workspace: '/tmp' });
  const claim = { none: claimer(stores.none), pending: claimer(stores.pending) };
  const samples = { none: [], pending: [] };
  for (let i = 0; i < SAMPLES; i++)
    for (const name of i % 2 === 0 ? ['none', 'pending'] : ['pending', 'none'])
      samples[name].push(await claim[name]());
  for (const store of Object.values(stores)) await store.close();
  const claimMsNone = median(samples.none);
  const claimMsPending = median(samples.pending);
  emit({ pendingApprovals: PENDING, claimMsNone, claimMsPending, claimRatio: claimMsPending / claimMsNone });
} finally {
  for (const home of Object.values(homes)) home.dispose();
}
