import { ENGINE_DEFAULTS } from '../core/engine-defaults.js';
import { BatonError, parseArgvJson } from '../core/errors.js';
import type { AgentSpec } from '../core/plan/types.js';
import { parseDurationOption, parsePositiveInt } from './parse-values.js';

/**
 * One setting of Baton: how a command line, the environment and `Baton.open` say it, and its
 * default. `docs/configuration.md` is checked against this table by test/docs-configuration.test.ts.
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
      'CLI: the nearest `.baton` folder from the current directory upward, else `./.baton`; API: `./.baton`',
    meaning: "Baton's folder: the SQLite file, attempt logs, artifacts, the home's trusted programs",
  },
  {
    option: '--store',
    variable: 'BATON_DATABASE_URL',
    api: 'store',
    default: 'the SQLite file `<home>/baton.db`',
    meaning: 'a `postgres://` URL to keep runs in PostgreSQL instead (masked as a secret everywhere)',
  },
  {
    option: null,
    variable: 'BATON_PG_SCHEMA',
    api: null,
    default: '`baton`',
    meaning: 'the PostgreSQL schema, unless the URL says `?schema=`',
  },
  {
    option: '--concurrency',
    variable: 'BATON_CONCURRENCY',
    api: 'concurrency',
    default: String(ENGINE_DEFAULTS.concurrency),
    meaning: 'steps running at once in one process (1 to 256)',
  },
  {
    option: '--lease',
    variable: 'BATON_LEASE_MS',
    api: 'leaseMs',
    default: seconds(ENGINE_DEFAULTS.leaseMs),
    meaning:
      "a running step's lease (100ms to 24h), renewed every third of it; a dead worker's step is retried after it",
  },
  {
    option: null,
    variable: null,
    api: 'pollMs',
    default: seconds(ENGINE_DEFAULTS.pollMs),
    meaning: "an idle worker's longest sleep before it looks for runs other processes stored",
  },
  {
    option: '--agent',
    variable: 'BATON_AGENT_CMD',
    api: null,
    default: 'none: a plan names its agent',
    meaning: 'the agent of steps whose plan names none, as a JSON array of argv',
  },
  {
    option: null,
    variable: 'BATON_TRUSTED_AGENTS',
    api: null,
    default: 'none',
    meaning: 'more programs trusted to receive prompts (paths separated by `:`), beside `baton trust add`',
  },
  {
    option: null,
    variable: 'BATON_SECRET_ENV',
    api: null,
    default: 'none',
    meaning: 'more variables whose values are masked everywhere (`NAME,NAME` or `NAME:NAME`)',
  },
  {
    option: null,
    variable: 'BATON_SANDBOX',
    api: null,
    default: '`none`',
    meaning: '`workspace` confines the agent of a state.json step with bubblewrap',
  },
  {
    option: '--store-wait',
    variable: null,
    api: null,
    default: '`worker`: forever; `check`: 30s',
    meaning: 'how long `worker` and `check` wait for a store that cannot be reached yet (`0`: not at all)',
  },
  {
    option: '--grace',
    variable: null,
    api: null,
    default: '30s',
    meaning: 'how long a stopping `worker` lets running steps finish',
  },
  {
    option: '--max-time',
    variable: null,
    api: null,
    default: 'none',
    meaning: 'how long `check` may drive due work before it stops',
  },
  {
    option: null,
    variable: 'STEP_AGENT_CMD',
    api: null,
    default: '`echo`',
    meaning: "the agent of a state.json plan (the skill's variable)",
  },
  {
    option: null,
    variable: 'STEP_MAX_RETRIES',
    api: null,
    default: '3',
    meaning: 'tries of a state.json step before it goes to `blockers`',
  },
  {
    option: null,
    variable: 'STEP_MAX_INTERRUPTIONS',
    api: null,
    default: '10',
    meaning: 'tries of a state.json step cut short by a dead check before it goes to `blockers`',
  },
  {
    option: null,
    variable: 'NO_COLOR',
    api: null,
    default: 'unset',
    meaning: 'no colours in tables (`FORCE_COLOR=1` turns them on in a pipe; NO_COLOR wins)',
  },
];

/** What the settings above make of an engine: each front door hands these to createEngine. */
export interface EngineSettings {
  concurrency?: number;
  leaseMs?: number;
  /** Values masked wherever an attempt records text: a store URL given as an option. */
  secrets?: string[];
}

/** The engine settings as text, from a command line (or nothing, for the API's variables only). */
export interface EngineSettingsText {
  concurrency?: string;
  lease?: string;
  /** `--store <url>`, or a URL given to `Baton.open`: not in the environment, so masked by name here. */
  store?: string;
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
  const concurrency = given.concurrency ?? env.BATON_CONCURRENCY;
  if (concurrency) {
    const where = given.concurrency === undefined ? 'BATON_CONCURRENCY' : '--concurrency';
    settings.concurrency = parsePositiveInt(concurrency, where, MAX_CONCURRENCY);
  }
  const lease = given.lease ?? env.BATON_LEASE_MS;
  if (lease) {
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
export function parseAgentOption(value: string | undefined, where: string): AgentSpec | undefined {
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
