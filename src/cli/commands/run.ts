import { BatonError } from '../../core/errors.js';
import { prepareRun, startRun } from '../../engine/start-run.js';
import { loadPlanFile } from '../../plan/load-plan-file.js';
import { type EngineCliOptions, engineFromCli } from '../engine-setup.js';
import { EXIT } from '../exit-codes.js';
import { blockedHints, formatDuration, printJson, stepProgress } from '../format.js';
import { agentFromEnvOrOption, type GlobalOptions, openStore, resolveHome } from '../home.js';
import { LineProgress, LiveStepList } from '../progress.js';

export interface RunOptions extends GlobalOptions, EngineCliOptions {
  input?: string[];
  workspace?: string;
  id?: string;
  detach?: boolean;
}

export function parseInputs(pairs: readonly string[] = []): Record<string, string> {
  const inputs: Record<string, string> = {};
  for (const pair of pairs) {
    const eq = pair.indexOf('=');
    if (eq <= 0)
      throw new BatonError(
        'INVALID_ARGUMENT',
        `--input "${pair}": expected name=value, e.g. --input topic="durable execution"`,
      );
    inputs[pair.slice(0, eq)] = pair.slice(eq + 1);
  }
  return inputs;
}

/** `baton run <plan>`: store the run, then drive it to the end in the foreground (unless --detach). */
export async function runCommand(planPath: string, options: RunOptions): Promise<number> {
  const { plan } = await loadPlanFile(planPath);
  const defaultAgent = agentFromEnvOrOption(options.agent);
  // Everything is checked before the database is opened: bad input creates nothing.
  const prepared = prepareRun({
    plan,
    planPath,
    inputs: parseInputs(options.input),
    ...(options.workspace ? { workspace: options.workspace } : {}),
    ...(defaultAgent ? { defaultAgent } : {}),
    ...(options.id ? { runId: options.id } : {}),
  });
  const home = resolveHome(options);
  const store = openStore(home);
  try {
    const created = await startRun(store, prepared);
    if (options.detach) {
      if (options.json) printJson(created);
      else
        process.stdout.write(
          `run ${created.id} stored (${plan.steps.length} steps); drive it with: baton check\n`,
        );
      return EXIT.ok;
    }
    const live = process.stdout.isTTY && !options.json;
    if (!options.json) process.stdout.write(`run ${created.id}: ${plan.name}, ${plan.steps.length} steps\n`);
    const progress = live
      ? new LiveStepList(
          process.stdout,
          plan.steps.map((s) => ({ id: s.id, title: s.title })),
        )
      : options.json
        ? null
        : new LineProgress(process.stdout, false);
    const engine = engineFromCli(
      store,
      home,
      options,
      progress ? { onClaim: progress.onClaim, onSettle: progress.onSettle } : {},
    );
    const stop = () => engine.stop(10_000);
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
    await engine.run({ kind: 'until-settled', runId: created.id });
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
    const run = (await store.getRun(created.id))!;
    if (progress instanceof LiveStepList) progress.settle(run.steps);
    if (options.json) {
      printJson(run);
    } else {
      const took = formatDuration((run.finishedAt ?? Date.now()) - run.createdAt);
      process.stdout.write(`run ${run.id} ${run.status} (${stepProgress(run)} steps done, ${took})\n`);
      for (const step of run.steps.filter((s) => s.status === 'blocked')) {
        process.stdout.write(
          `  blocked: ${step.stepId}: ${step.blockedReason}\n  ${blockedHints(run.id, step.stepId)}\n`,
        );
      }
      if (run.status === 'blocked' && run.blockedReason?.startsWith('budget:'))
        process.stdout.write(`  ${run.blockedReason}\n`);
      if (run.status === 'running')
        process.stdout.write(`  stopped early; continue with: baton check (or baton worker)\n`);
    }
    return run.status === 'succeeded' ? EXIT.ok : run.status === 'running' ? EXIT.ok : EXIT.workFailed;
  } finally {
    await store.close();
  }
}
