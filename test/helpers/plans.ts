/** Small plan builders shared by the CLI end-to-end tests. */
import { join } from 'node:path';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { ClaimedStep } from '../../src/store/store.js';
import { agentCommand, type RunJson, tempDir } from './cli.js';

/** A plan folder (also the default workspace) with a Baton home inside it that does not exist yet. */
export function planDir(prefix = 'baton-cli-run-'): { dir: string; home: string } {
  const dir = tempDir(prefix);
  return { dir, home: join(dir, 'home') };
}

/**
 * A plan whose steps run the fixture `agent` unless they set their own agent, with fast retries
 * (3 attempts, 10 ms initial delay). `extra` adds top-level fields; its `defaults` are merged.
 */
export function fixturePlan(steps: object[], extra: Record<string, unknown> = {}, agent = 'agent-succeed') {
  const { defaults, ...rest } = extra as { defaults?: Record<string, unknown> };
  return {
    name: 'cli-test',
    defaults: {
      agent: { command: agentCommand(agent) },
      retry: { maxAttempts: 3, initialDelayMs: 10, maxDelayMs: 50 },
      ...defaults,
    },
    ...rest,
    steps,
  };
}

/** One step of `status <run> --json`. */
export function stepOf(run: RunJson, id: string): RunJson['steps'][number] {
  const step = run.steps.find((s) => s.stepId === id);
  if (!step) throw new Error(`run ${run.id} has no step ${id}`);
  return step;
}

/**
 * Claims the first due step in `home`'s database as another worker would, in this process; the
 * lease lasts `leaseMs` and nobody reports the attempt (a worker that died, or one still busy).
 */
export async function claimAsWorker(home: string, owner: string, leaseMs: number): Promise<ClaimedStep[]> {
  const store = SqliteStore.open(join(home, 'baton.db'));
  try {
    const result = await store.cycle({
      owner,
      now: Date.now(),
      leaseMs,
      completions: [],
      claimLimit: 1,
      random: () => 0,
    });
    return result.claimed;
  } finally {
    await store.close();
  }
}
