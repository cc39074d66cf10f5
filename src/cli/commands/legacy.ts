import { createHash } from 'node:crypto';
import { readFileSync, realpathSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { EXIT } from '../exit-codes.js';
import { printJson } from '../format.js';
import type { GlobalOptions } from '../global-options.js';

/**
 * `baton check <state.json>` and `baton step <state.json>`: drop-ins for the skill's check and runner
 * scripts. stdout: progress lines (not with --quiet), then one `BLOCKED <step>: <reason>` line per
 * blocked step on every check (also with --quiet); --json prints the report instead.
 */
export async function legacyCommand(
  mode: 'check' | 'step',
  statePath: string,
  options: GlobalOptions & { quiet?: boolean; maxTime?: string; one?: boolean },
): Promise<number> {
  const { legacyConfigFromEnv } = await import('../../legacy/legacy-config.js');
  const { runLegacyCheck } = await import('../../legacy/legacy-check.js');
  // A refused STEP_AGENT_CMD is bad configuration: exit 2 before the file is touched.
  const { resolveHome } = await import('../../runtime/home.js');
  const { parseDurationOption } = await import('../../runtime/parse-values.js');
  const { trustedPrograms } = await import('../../executors/trusted-programs.js');
  const trust = trustedPrograms(resolveHome(options), process.env);
  const config = legacyConfigFromEnv(process.env, dirname(resolve(statePath)), trust);
  // BATON_SANDBOX=workspace confines the agents; refused (exit 2) where it cannot, never ignored.
  const { sandboxFromEnv } = await import('../../executors/sandbox.js');
  const bwrap = sandboxFromEnv(process.env);
  const maxTimeMs = options.maxTime ? parseDurationOption(options.maxTime, '--max-time') : null;
  // --max-time and SIGTERM/SIGINT stop the running agent; that try does not count.
  const stop = new AbortController();
  const timer = maxTimeMs === null ? null : setTimeout(() => stop.abort(), maxTimeMs);
  const onSignal = () => stop.abort();
  process.once('SIGTERM', onSignal);
  process.once('SIGINT', onSignal);
  const report = await runLegacyCheck({
    statePath,
    config,
    env: process.env,
    mode,
    ...(options.one ? { oneStep: true } : {}),
    ...(bwrap ? { bwrap } : {}),
    signal: stop.signal,
    log: options.json || options.quiet ? () => undefined : (line) => process.stdout.write(`${line}\n`),
  });
  if (timer) clearTimeout(timer);
  process.off('SIGTERM', onSignal);
  process.off('SIGINT', onSignal);
  if (report.outcome === 'missing') {
    // Exit 0 as the skill's check and runner (silent both), so that what is chained after them with
    // && still runs; one line on stderr, so that a wrong path is seen (--quiet keeps it too).
    process.stderr.write(`baton ${mode}: no state file at ${statePath}: nothing to do\n`);
  }
  if (options.json) printJson(report);
  else
    for (const { stepId, reason } of report.blocked) process.stdout.write(`BLOCKED ${stepId}: ${reason}\n`);
  // As the skill's scripts: the check exits 0 even while a step is blocked (heartbeat lines chained
  // with && go on); the runner exits 1 when the step it was called for failed.
  return report.outcome === 'failed' ? EXIT.workFailed : EXIT.ok;
}

/**
 * The run id an import of this file gets: the same for the same file (its real path) with the
 * same bytes, so importing twice finds the first run instead of making a second one.
 */
function importRunId(statePath: string): string {
  const path = realpathSync(statePath);
  const hash = createHash('sha256').update(path).update('\0').update(readFileSync(path)).digest('hex');
  return `import-${hash.slice(0, 20)}`;
}

/** `baton import <state.json>`: a skill state file becomes a native run (the file is only read). */
export async function importCommand(
  statePath: string,
  options: GlobalOptions & { id?: string; new?: boolean; detach?: boolean; allowWorkspace?: string },
): Promise<number> {
  const { BatonError } = await import('../../core/errors.js');
  const { legacyConfigFromEnv } = await import('../../legacy/legacy-config.js');
  const { readLegacyState } = await import('../../legacy/state-file-io.js');
  const { planFromLegacyState } = await import('../../legacy/import-state.js');
  const { prepareRun, startRun } = await import('../../runtime/commands/start-commands.js');
  const { withCommandContext } = await import('../../runtime/open-store.js');
  const { resolveHome } = await import('../../runtime/home.js');
  const state = readLegacyState(statePath);
  if (!state) throw new BatonError('PLAN_NOT_FOUND', `state file not found: ${statePath}`);
  const { trustedPrograms } = await import('../../executors/trusted-programs.js');
  const home = resolveHome(options);
  const config = legacyConfigFromEnv(
    process.env,
    dirname(resolve(statePath)),
    trustedPrograms(home, process.env),
  );
  const { plan, completedSteps, workspace } = planFromLegacyState(state, statePath, config);
  // Named by the file and its content unless told otherwise: importing it again finds that run.
  const derivedId = !options.id && !options.new;
  const prepared = prepareRun(
    { home },
    {
      plan,
      workspace,
      completedSteps,
      ...(options.allowWorkspace ? { allowWorkspace: options.allowWorkspace } : {}),
      ...(options.id ? { runId: options.id } : derivedId ? { runId: importRunId(statePath) } : {}),
    },
  );
  return withCommandContext(
    options,
    async (ctx) => {
      // The same file with the same content was imported before: that run, not a second one.
      const earlier = derivedId ? await ctx.store.getRun(prepared.run.id) : null;
      if (earlier) {
        if (options.json) printJson({ ...earlier, created: false });
        else
          process.stdout.write(
            `${statePath} was already imported as run ${earlier.id} (same file, same content; ${earlier.status}): nothing changed\n` +
              'import it again as another run with: baton import --new\n',
          );
        return EXIT.ok;
      }
      const started = await startRun(ctx, prepared);
      // `--id` of a stored run: refused, whether or not it is this run.
      if (!started.created)
        throw new BatonError('INVALID_ARGUMENT', `a run with id "${prepared.run.id}" already exists`);
      if (options.json) printJson({ ...started.run, created: true });
      else {
        process.stdout.write(
          `imported ${statePath} as run ${started.run.id}: ${plan.steps.length} steps, ${completedSteps.length} already done\n` +
            `drive it with: baton check   (the state file was not changed; stop its old heartbeat line)\n`,
        );
      }
      return EXIT.ok;
    },
    'write',
  );
}
