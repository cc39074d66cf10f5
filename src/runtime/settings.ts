import { ENGINE_DEFAULTS } from '../core/engine-defaults.js';
import { BatonError, parseArgvJson } from '../core/errors.js';
import type { AgentSpec } from '../core/plan/types.js';
import { DEFAULT_PRIORITY_AGING_MS } from '../core/priority.js';
import { parseDurationOption, parsePositiveInt } from './parse-values.js';

/**
 * One setting of Baton: how a command line, the environment and `Baton.open` say it, and its
 * default. `docs/configuration.md` shows this table (`settingsTable`), checked by
 * test/docs-configuration.test.ts.
 */
export interface Setting {
  /** The command-line option, or null where there is none. */
  option: string | null;
  /** The environment variable, or null where there is none. */
  variable: string | null;
  /** The option of `Baton.open`, or null where there is none. */
  api: string | null;
  /** The default, as the docs say it. */
  default: string;
  /** What it sets, in one line. */
  meaning: string;
}

const seconds = (ms: number) => `${ms / 1000}s`;

/**
 * Every setting, in the order the configuration page lists them. A flag wins over its variable;
 * an option of `Baton.open` wins over its variable.
 */
export const SETTINGS: readonly Setting[] = [
  {
    option: '--home',
    variable: 'BATON_HOME',
    api: 'home',
    default:
      'CLI: the nearest `.baton` folder from the current directory upward, else `./.baton`; `Baton.open`: `./.baton`',
    meaning: "Baton's folder: `baton.db`, attempt logs, artifacts, `trusted-programs.json`",
  },
  {
    option: '--store',
    variable: 'BATON_DATABASE_URL',
    api: 'store',
    default: 'the SQLite file `<home>/baton.db`',
    meaning:
      'keep runs in PostgreSQL: `postgres://user:password@host:5432/db[?schema=name]` (masked as a secret everywhere)',
  },
  {
    option: null,
    variable: 'BATON_PG_SCHEMA',
    api: null,
    default: '`baton`',
    meaning: 'the PostgreSQL schema, when the URL has no `?schema=`',
  },
  {
    option: '--concurrency',
    variable: 'BATON_CONCURRENCY',
    api: 'concurrency',
    default: String(ENGINE_DEFAULTS.concurrency),
    meaning:
      'steps running at once in one process (1..256); `limits.concurrency` bounds each run (default 4)',
  },
  {
    option: '--lease',
    variable: 'BATON_LEASE_MS',
    api: 'leaseMs',
    default: seconds(ENGINE_DEFAULTS.leaseMs),
    meaning:
      'how long a claimed step is held without renewal (100ms to 24h; milliseconds or a duration); renewed every third of it',
  },
  {
    option: null,
    variable: 'BATON_PRIORITY_AGING',
    api: null,
    default: '10m',
    meaning:
      'how long a due step waits at most behind steps of higher priority that became due after it (a duration, 1s to 24.8 days); kept in the snapshot of each run started (see [priority](operating.md#priority))',
  },
  {
    option: null,
    variable: null,
    api: 'pollMs',
    default: seconds(ENGINE_DEFAULTS.pollMs),
    meaning: "an idle worker's longest sleep before it looks for runs other processes stored",
  },
  {
    option: '--store-wait',
    variable: null,
    api: null,
    default: 'forever for `worker`, 30s for `check`',
    meaning:
      'how long to wait for a PostgreSQL store that cannot be reached yet: a duration, `forever`, or `0`',
  },
  {
    option: '--grace',
    variable: null,
    api: null,
    default: '30s',
    meaning: '`baton worker`: how long in-flight steps may finish after SIGTERM',
  },
  {
    option: '--max-time',
    variable: null,
    api: null,
    default: 'none',
    meaning: '`baton check` / `step`: stop after this long; unfinished attempts are retried later',
  },
  {
    option: '--agent',
    variable: 'BATON_AGENT_CMD',
    api: null,
    default: 'none: a plan without an agent is refused',
    meaning:
      '`run` / `propose`: the agent for steps whose plan sets none, a JSON argv such as `\'["claude","-p"]\'` (an element `{prompt}` places the prompt there); stored into the run\'s snapshot',
  },
  {
    option: null,
    variable: 'BATON_TRUSTED_AGENTS',
    api: null,
    default: 'none',
    meaning:
      'more programs that may receive prompt text, as absolute paths separated by `:` (besides `baton trust add`, recorded in `<home>/trusted-programs.json`)',
  },
  {
    option: null,
    variable: 'BATON_SECRET_ENV',
    api: null,
    default: 'none',
    meaning:
      'more variables (names separated by commas or colons) whose values are masked everywhere and withheld from agents and hook commands',
  },
  {
    option: null,
    variable: 'BATON_SANDBOX',
    api: null,
    default: '`none`',
    meaning:
      '`baton check` / `step <state.json>`: `workspace` confines the agents as `sandbox: workspace` does',
  },
  {
    option: null,
    variable: 'STEP_AGENT_CMD',
    api: null,
    default: '`echo`',
    meaning: '`baton check` / `step` / `import <state.json>`: the agent, split on spaces or a JSON array',
  },
  {
    option: null,
    variable: 'STEP_MAX_RETRIES',
    api: null,
    default: '3',
    meaning: 'state.json: tries before a step is blocked (0 is one try)',
  },
  {
    option: null,
    variable: 'STEP_MAX_INTERRUPTIONS',
    api: null,
    default: '10',
    meaning: 'state.json: tries cut short by a check that died, allowed before a step is blocked',
  },
  {
    option: null,
    variable: 'STEP_EXIT_CODES',
    api: null,
    default: 'unset: exit codes mean what the profile says',
    meaning:
      "state.json: what the agent's exit codes mean, e.g. `64=invalid,75=transient` (a plan's `agent.exitCodes`); invalid and fatal block the step after one try",
  },
  {
    option: '--public-url',
    variable: 'BATON_PUBLIC_URL',
    api: null,
    default: 'unset: hooks carry the commands; `baton serve` shows its own address',
    meaning:
      "`baton serve`'s address as outsiders reach it: the base of the capability URLs (approve/reject a waiting step, retry/skip a blocked one) and the run links in hooks, and of the URLs the inbox shows (set it for the processes that send hooks)",
  },
  {
    option: null,
    variable: 'NO_COLOR',
    api: null,
    default: 'unset',
    meaning: 'any non-empty value turns colours off',
  },
  {
    option: null,
    variable: 'FORCE_COLOR',
    api: null,
    default: 'unset',
    meaning: '`1`: colours in a pipe too (`NO_COLOR` wins); `0` or `false`: off',
  },
];

const code = (text: string | null) => (text === null ? '—' : `\`${text}\``);

/**
 * The table of docs/configuration.md (between its `settings` markers), written by
 * `npm run docs:config` and checked by test/docs-configuration.test.ts.
 */
export function settingsTable(settings: readonly Setting[] = SETTINGS): string {
  const rows = settings.map(
    (s) => `| ${code(s.option)} | ${code(s.variable)} | ${code(s.api)} | ${s.default} | ${s.meaning} |`,
  );
  return ['| option | variable | `Baton.open` | default | meaning |', '|---|---|---|---|---|', ...rows].join(
    '\n',
  );
}

/** What the settings above make of an engine: each front door hands these to createEngine. */
export interface EngineSettings {
  concurrency?: number;
  leaseMs?: number;
  /** Values masked wherever an attempt records text: a store URL given as an option. */
  secrets?: string[];
}

/**
 * The engine settings as given: text from a command line, or numbers from `Baton.open`'s options
 * (taken as they are). A value given, valid or not, means its variable is never read.
 */
export interface EngineSettingsText {
  concurrency?: string | number;
  /** `--lease` as text (a duration), or `leaseMs` as a number of milliseconds. */
  lease?: string | number;
  /** `--store <url>`, or a URL given to `Baton.open`: not in the environment, so masked by name here. */
  store?: string;
}

const MAX_AGING_MS = 2_147_483_647;

/** BATON_PRIORITY_AGING in ms (core/priority.ts), unset: the default; a bad value is a BatonError naming it. */
export function priorityAging(env: NodeJS.ProcessEnv = process.env): number {
  const text = env.BATON_PRIORITY_AGING;
  if (text === undefined || text === '') return DEFAULT_PRIORITY_AGING_MS;
  const ms = parseDurationOption(text, 'BATON_PRIORITY_AGING');
  if (ms < 1000 || ms > MAX_AGING_MS)
    throw new BatonError(
      'CONFIG_INVALID',
      `BATON_PRIORITY_AGING: ${text} is out of range: use a duration from 1s to 24.8 days, e.g. 10m`,
    );
  return ms;
}

/** A run's priority given as text (`--priority`): a whole number from 0 to 9. */
export function parsePriority(value: string, where: string): number {
  if (!/^\d$/.test(value))
    throw new BatonError(
      'INVALID_ARGUMENT',
      `${where}: expected a priority, a whole number from 0 (default) to 9 (first), got "${value}"`,
    );
  return Number(value);
}

const MAX_LEASE_MS = 86_400_000;
const MAX_CONCURRENCY = 256;

/**
 * Options, then BATON_* variables, checked before anything is stored or started; a bad value is a
 * BatonError naming the flag or variable it came from.
 */
export function engineSettings(
  given: EngineSettingsText,
  env: NodeJS.ProcessEnv = process.env,
): EngineSettings {
  const settings: EngineSettings = {};
  if (given.store) settings.secrets = [given.store];
  if (typeof given.concurrency === 'number') settings.concurrency = given.concurrency;
  const concurrency = given.concurrency === undefined ? env.BATON_CONCURRENCY : given.concurrency;
  if (typeof concurrency === 'string' && concurrency) {
    const where = given.concurrency === undefined ? 'BATON_CONCURRENCY' : '--concurrency';
    settings.concurrency = parsePositiveInt(concurrency, where, MAX_CONCURRENCY);
  }
  if (typeof given.lease === 'number') settings.leaseMs = given.lease;
  const lease = given.lease === undefined ? env.BATON_LEASE_MS : given.lease;
  if (typeof lease === 'string' && lease) {
    const where = given.lease === undefined ? 'BATON_LEASE_MS' : '--lease';
    const leaseMs = parseDurationOption(lease, where);
    if (leaseMs < 100 || leaseMs > MAX_LEASE_MS) {
      throw new BatonError(
        'INVALID_ARGUMENT',
        `${where} ${lease}: a lease must be from 100ms to 24h (it is renewed every third of it)`,
      );
    }
    settings.leaseMs = leaseMs;
  }
  return settings;
}

/**
 * An agent command given as text (`--agent`, BATON_AGENT_CMD): a JSON array of strings (argv),
 * never a string to split, e.g. '["claude","-p","--output-format","json"]'.
 */
function parseAgentOption(value: string | undefined, where: string): AgentSpec | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  const argv = parseArgvJson(value, where);
  return { command: argv, promptVia: argv.includes('{prompt}') ? 'placeholder' : 'arg' };
}

/** The default agent: `--agent`, else BATON_AGENT_CMD. */
export function defaultAgent(
  option: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
): AgentSpec | undefined {
  return parseAgentOption(option, '--agent') ?? parseAgentOption(env.BATON_AGENT_CMD, 'BATON_AGENT_CMD');
}
