import { dirname, resolve } from 'node:path';
import { EXIT } from '../exit-codes.js';
import { printJson } from '../format.js';
import type { GlobalOptions } from '../home.js';

/** `baton check <state.json>` and `baton step <state.json>`: drop-ins for the skill's check and runner scripts. */
export async function legacyCommand(
  mode: 'check' | 'step',
  statePath: string,
  options: GlobalOptions & { quiet?: boolean },
): Promise<number> {
  const { legacyConfigFromEnv } = await import('../../legacy/legacy-config.js');
  const { runLegacyCheck } = await import('../../legacy/legacy-check.js');
  // A refused STEP_AGENT_CMD is bad configuration: exit 2 before the file is touched.
  const config = legacyConfigFromEnv(process.env, dirname(resolve(statePath)));
  const report = await runLegacyCheck({
    statePath,
    config,
    env: process.env,
    mode,
    log: options.json || options.quiet ? () => undefined : (line) => process.stdout.write(`${line}\n`),
  });
  if (options.json) printJson(report);
  else if (report.outcome === 'blocked' && options.quiet)
    process.stdout.write(`BLOCKED ${statePath}: ${report.blockers.join(', ')}\n`);
  return report.outcome === 'blocked' ? EXIT.workFailed : EXIT.ok;
}
