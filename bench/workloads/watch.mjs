// Issue 43 part 2: "a watch subscriber adds <= 5% to W". W (200 runs x 10 chained no-op steps, one
// Engine in drain mode at concurrency 256) measured in this process with no subscriber and with one
// `baton.watch` on its first run (from its first event, as a client that wants the whole run), the two
// alternated BENCH_WATCH_ROUNDS times (default 5), each on a fresh store; the medians and their ratio.
// The watch is checked to have given every event of its run, in order, and to have ended with it.
import { Baton } from '../../dist/workflow/baton.js';
import {
  assert,
  chainPlan,
  createRuns,
  emit,
  median,
  noopEngine,
  now,
  openStore,
  tempHome,
} from '../lib.mjs';

const ROUNDS = Number(process.env.BENCH_WATCH_ROUNDS ?? 5);

/** W's steps per second on a fresh store; with `watched`, one baton.watch of r0001 meanwhile. */
async function w(watched) {
  const home = tempHome(watched ? 'watch-on' : 'watch-off');
  const store = openStore(home.dbPath);
  try {
    await createRuns(store, chainPlan('bench-w', 10), 200, home.dir);
    let watching = null;
    if (watched) {
      // The API over the same store handle, as a service that runs a worker and a watch would have it.
      const baton = Baton.open({ home: home.dir, store });
      watching = (async () => {
        const seen = [];
        for await (const event of baton.watch('r0001', { after: 0 })) seen.push(event);
        return seen;
      })();
    }
    const start = now();
    const report = await noopEngine(store, home.dir).run({ kind: 'drain' });
    const seconds = (now() - start) / 1000;
    assert(report.attemptsCommitted === 2000, `W committed ${report.attemptsCommitted} of 2000`);
    if (watching) {
      const seen = await watching;
      const stored = await store.getEvents('r0001');
      assert(
        JSON.stringify(seen.map((e) => e.seq)) === JSON.stringify(stored.map((e) => e.seq)),
        `the watch gave ${seen.length} events of ${stored.length}`,
      );
      assert(seen.at(-1)?.type === 'run.succeeded', `the watch ended on ${seen.at(-1)?.type}`);
    }
    return 2000 / seconds;
  } finally {
    await store.close();
    home.dispose();
  }
}

const without = [];
const withWatch = [];
for (let round = 0; round < ROUNDS; round++) {
  without.push(await w(false));
  withWatch.push(await w(true));
}
const wStepsPerSec = median(without);
const watchedStepsPerSec = median(withWatch);
emit({
  rounds: ROUNDS,
  wStepsPerSec,
  watchedStepsPerSec,
  ratio: watchedStepsPerSec / wStepsPerSec,
  without,
  withWatch,
});
