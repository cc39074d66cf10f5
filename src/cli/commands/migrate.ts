import { dirname, resolve } from 'node:path';
import { BatonError } from '../../core/errors.js';
import { formatDuration } from '../../runtime/format.js';
import { databasePath, resolveHome } from '../../runtime/home.js';
import {
  COPIED_TABLES,
  type HomeCopyResult,
  maskStoreUrl,
  migrateHome,
  migrationTarget,
} from '../../runtime/home-migration.js';
import { EXIT } from '../exit-codes.js';
import { printJson, table } from '../format.js';
import type { GlobalOptions } from '../global-options.js';

interface MigrateOptions extends GlobalOptions {
  from?: string;
  to?: string;
  runs?: string;
}

function parseRunList(value: string): string[] {
  const ids = value
    .split(',')
    .map((id) => id.trim())
    .filter((id) => id !== '');
  if (ids.length === 0) {
    throw new BatonError(
      'INVALID_ARGUMENT',
      `--runs: expected run ids separated by commas, e.g. --runs r1,r2; got "${value}"`,
    );
  }
  return ids;
}

const TABLE_LABELS: Record<(typeof COPIED_TABLES)[number], string> = {
  runs: 'runs',
  run_plans: 'plan snapshots',
  steps: 'steps',
  attempts: 'attempts',
  events: 'events',
  artifacts: 'artifact references',
  effects: 'effects',
  hook_deliveries: 'hook deliveries',
  wait_events: 'kept events',
  run_labels: 'labels',
};

function countsTable(result: HomeCopyResult): string {
  const rows = [['TABLE', 'SQLITE', 'POSTGRES']];
  for (const name of COPIED_TABLES) {
    const differs = result.source[name] !== result.target[name];
    rows.push([
      TABLE_LABELS[name],
      String(result.source[name]),
      `${result.target[name]}${!result.ok && differs ? '  <- differs' : ''}`,
    ]);
  }
  return table(rows);
}

/**
 * `baton migrate --from <baton.db> --to postgres://...`: copies runs (and everything stored with
 * them) from a SQLite file into PostgreSQL in one transaction and verifies the counts. Exit 0
 * copied, 1 the counts differed (rolled back), 2 refused (nothing changed in either database).
 */
export async function migrateCommand(options: MigrateOptions): Promise<number> {
  const from = resolve(options.from ?? databasePath(resolveHome(options)));
  const target = migrationTarget(options.to, options);
  const runIds = options.runs === undefined ? null : parseRunList(options.runs);
  const result = await migrateHome({ from, target, runIds });
  const home = dirname(from);
  if (options.json) {
    printJson({
      ok: result.ok,
      from,
      to: maskStoreUrl(target.url),
      schema: target.schema,
      runs: result.runIds.length,
      counts: Object.fromEntries(
        COPIED_TABLES.map((name) => [name, { source: result.source[name], target: result.target[name] }]),
      ),
      runningSteps: result.runningSteps,
      filesLeftIn: home,
      durationMs: result.durationMs,
    });
    return result.ok ? EXIT.ok : EXIT.workFailed;
  }
  const out = result.ok ? process.stdout : process.stderr;
  if (result.runIds.length === 0) {
    process.stdout.write(`nothing to migrate: ${from} holds no runs\n`);
    return EXIT.ok;
  }
  if (!result.ok) {
    out.write(
      `baton migrate: after copying, ${target.label} did not hold the same number of rows as ${from}; ` +
        'the copy was rolled back and nothing was written\n\n',
    );
    out.write(`${countsTable(result)}\n`);
    return EXIT.workFailed;
  }
  out.write(
    `copied ${result.runIds.length} run(s) from ${from} to ${target.label} in ${formatDuration(result.durationMs)}\n\n`,
  );
  out.write(
    `${countsTable(result)}\n\ncounts verified before commit: every row of these runs is in PostgreSQL.\n`,
  );
  if (result.runningSteps > 0) {
    out.write(
      `${result.runningSteps} step(s) were running when copied: once their leases run out they are retried from PostgreSQL.\n`,
    );
  }
  out.write(
    `\nAttempt logs and result artifacts stay where they are, under ${home}: only their references\n` +
      `were copied. Read them with that home: baton --home ${home} --store <url> logs <run> <step>\n` +
      `${from} was not changed and still holds these runs: point every baton command (check,\n` +
      'worker, cron lines) at the new store (--store or BATON_DATABASE_URL) so that no run is driven from both.\n',
  );
  return EXIT.ok;
}
