import { startRun } from '../../runtime/commands/start-commands.js';
import { blockedHints, formatDuration, stepProgress } from '../../runtime/format.js';
import { openCommandContext } from '../../runtime/open-store.js';
import { requireRun } from '../../runtime/run-reads.js';
import { engineSettings } from '../../runtime/settings.js';
import type { RunDetail } from '../../runtime/types.js';
import { type EngineCliOptions, engineFromCli } from '../engine-setup.js';
import { EXIT } from '../exit-codes.js';
import { printJson } from '../format.js';
import type { GlobalOptions } from '../global-options.js';
import { prepareRunFromCli } from '../prepare-run.js';
import { LineProgress, LiveStepList } from '../progress.js';
import { RunFollower } from '../run-follow.js';
import { STOP_SIGNAL_EXIT, type StopSignal, watchStopSignals } from '../stop-signal.js';

export interface RunOptions extends GlobalOptions, EngineCliOptions {
  input?: string[];
  workspace?: string;
  id?: string;
  agent?: string;
  detach?: boolean;
  /** `--stop-agents`: on SIGINT/SIGTERM stop the running agents instead of leaving them to their lease. */
  stopAgents?: boolean;
}

/**
 * `baton run <plan>`: store the run, then drive it to the end in the foreground (unless --detach).
 * With `--id` of a run that exists, the same plan and inputs resume that run (a run that already
 * ended only reports); anything else is refused.
 */
export async function runCommand(planPath: string, options: RunOptions): Promise<number> {
  const prepared = await prepareRunFromCli(planPath, options);
  const { plan } = prepared;
  const settings = engineSettings(options);
  const { ctx, close } = await openCommandContext(options, 'write');
  try {
    // A run of that id (`--id`) that is this run is answered as it is; another one is refused.
    const started = await startRun(ctx, prepared);
    const stored = started.created ? null : await requireRun(ctx.store, started.run.id);
    if (stored) {
      const startedAt = new Date(stored.createdAt).toISOString();
      const done = `${stepProgress(stored)} steps done`;
      process.stderr.write(
        stored.status === 'running'
          ? `baton run: resuming run ${stored.id} (started ${startedAt}, ${done})\n`
          : `baton run: run ${stored.id} already ${stored.status.replace('_', ' ')} (started ${startedAt}, ${done})\n`,
      );
    }
    const created = stored ?? started.run;
    if (options.detach) {
      if (options.json) printJson(created);
      else
        process.stdout.write(
          `run ${created.id} ${stored ? 'exists' : 'stored'} (${plan.steps.length} steps); drive it with: baton check\n`,
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
      ctx,
      settings,
      progress ? { onClaim: progress.onClaim, onSettle: progress.onSettle } : {},
    );
    // WAITING lines and the statuses no attempt reports; with --json, on stderr: stdout is the run's JSON.
    const follower = new RunFollower(ctx.store, created.id, plan, {
      out: options.json ? process.stderr : process.stdout,
      ...(progress instanceof LiveStepList ? { list: progress } : {}),
      home: ctx.home,
      env: ctx.env,
    });
    follower.start();
    const signals = watchStopSignals();
    let signal: StopSignal | null;
    try {
      const running = engine.run({ kind: 'until-settled', runId: created.id });
      signal = await Promise.race([running.then(() => null), signals.received]);
      // --stop-agents: the running attempts are aborted (their process groups killed) and recorded
      // interrupted before this returns.
      if (signal && options.stopAgents) {
        engine.stop(0);
        await running;
      }
    } finally {
      signals.remove();
      await follower.stop();
    }
    const run = await requireRun(ctx.store, created.id);
    if (signal) {
      const code = STOP_SIGNAL_EXIT[signal];
      process.stderr.write(`${stoppedLine(signal, run, planPath, options.stopAgents === true)}\n`);
      // Without --stop-agents the running attempts are left to their leases: this process ends
      // here, as a killed one would, and whoever drives the run next reclaims them.
      if (!options.stopAgents) process.exit(code);
      return code;
    }
    if (progress instanceof LiveStepList) progress.settle(run.steps);
    if (options.json) printJson(run);
    else printOutcome(run);
    return run.status === 'succeeded' ? EXIT.ok : run.status === 'running' ? EXIT.ok : EXIT.workFailed;
  } finally {
    await close();
  }
}

function stoppedLine(signal: StopSignal, run: RunDetail, planPath: string, stopAgents: boolean): string {
  const running = run.steps.filter((s) => s.status === 'running').map((s) => s.stepId);
  const left =
    stopAgents || running.length === 0
      ? ''
      : `; ${running.join(', ')} left to ${running.length === 1 ? 'its lease' : 'their leases'} (run again once it runs out)`;
  const stopped = stopAgents ? '; running agents stopped' : '';
  return `baton run: ${signal}: run ${run.id} stopped (${stepProgress(run)} steps done${stopped}${left}); continue with: baton run ${planPath} --id ${run.id} (or baton worker, baton check)`;
}

function printOutcome(run: RunDetail): void {
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
