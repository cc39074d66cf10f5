import { startRun } from '../../engine/start-run.js';
import {
  type EngineCliOptions,
  engineFromCli,
  engineSettingsFromCli,
  handleStopSignals,
} from '../engine-setup.js';
import { EXIT } from '../exit-codes.js';
import { blockedHints, formatDuration, printJson, stepProgress } from '../format.js';
import { type GlobalOptions, resolveHome } from '../home.js';
import { openStore } from '../open-store.js';
import { prepareRunFromCli } from '../prepare-run.js';
import { LineProgress, LiveStepList } from '../progress.js';

export interface RunOptions extends GlobalOptions, EngineCliOptions {
  input?: string[];
  workspace?: string;
  id?: string;
  agent?: string;
  detach?: boolean;
}

/** `baton run <plan>`: store the run, then drive it to the end in the foreground (unless --detach). */
export async function runCommand(planPath: string, options: RunOptions): Promise<number> {
  const { plan, prepared } = await prepareRunFromCli(planPath, options);
  const settings = engineSettingsFromCli(options);
  const home = resolveHome(options);
  const store = await openStore(options);
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
      settings,
      progress ? { onClaim: progress.onClaim, onSettle: progress.onSettle } : {},
    );
    const removeHandlers = handleStopSignals(engine, 10_000, (line) =>
      process.stderr.write(`baton run: ${line}\n`),
    );
    try {
      await engine.run({ kind: 'until-settled', runId: created.id });
    } finally {
      removeHandlers();
    }
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
