import { DECLARABLE_CLASSES, type DeclarableClass, isDeclarableClass } from '../core/declared-failure.js';
import { BatonError, parseArgvJson } from '../core/errors.js';
import { assertAgentCommand } from '../executors/command-policy.js';
import { DEFAULT_EXEC_PATH } from '../executors/program-lookup.js';
import { type TrustedPrograms, trustedPrograms } from '../executors/trusted-programs.js';

/** The skill's environment variables, read once at the entry point. */
export interface LegacyConfig {
  /** STEP_AGENT_CMD split into argv (default `echo`), already checked against the skill's stricter policy. */
  agentArgv: string[];
  /**
   * STEP_MAX_RETRIES (default 3): tries before the step id goes to `blockers`. 0 is one try, as in
   * the skill: the first run of a step always happens, only retries are capped.
   */
  maxRetries: number;
  /**
   * STEP_MAX_INTERRUPTIONS (default 10): tries cut short by a check that died (found IN_PROGRESS)
   * allowed before the step id goes to `blockers`; they do not count against STEP_MAX_RETRIES.
   */
  maxInterruptions: number;
  /** The programs the operator trusted, checked again before every try. */
  trust: TrustedPrograms;
  /** STEP_EXIT_CODES (`64=invalid,75=transient`): what the agent's exit codes mean, as a plan's `agent.exitCodes`. */
  exitCodes?: Record<string, DeclarableClass>;
}

/**
 * STEP_AGENT_CMD is space-separated in the skill; a JSON array is accepted too for arguments with
 * spaces. The legacy policy also refuses any `-c` or `-e`, as the skill did.
 */
export function legacyConfigFromEnv(
  env: NodeJS.ProcessEnv,
  cwd: string,
  trust: TrustedPrograms = trustedPrograms(null, env),
): LegacyConfig {
  const raw = env.STEP_AGENT_CMD?.trim() || 'echo';
  const argv = raw.startsWith('[') ? parseArgvJson(raw, 'STEP_AGENT_CMD') : raw.split(/\s+/);
  assertAgentCommand(argv, {
    mode: 'legacy',
    cwd,
    pathEnv: env.PATH ?? DEFAULT_EXEC_PATH,
    trust,
    where: 'STEP_AGENT_CMD',
  });
  const maxRetries = wholeNumberVariable(env, 'STEP_MAX_RETRIES', 3, 0);
  const maxInterruptions = wholeNumberVariable(env, 'STEP_MAX_INTERRUPTIONS', 10, 0);
  const exitCodes = exitCodesVariable(env.STEP_EXIT_CODES);
  return { agentArgv: argv, maxRetries, maxInterruptions, trust, ...(exitCodes ? { exitCodes } : {}) };
}

/**
 * STEP_EXIT_CODES: `<code>=<class>` pairs separated by commas or spaces (`64=invalid,75=transient`),
 * the state.json path's `agent.exitCodes`.
 */
function exitCodesVariable(text: string | undefined): Record<string, DeclarableClass> | undefined {
  if (text === undefined || text.trim() === '') return undefined;
  const map: Record<string, DeclarableClass> = {};
  for (const pair of text.trim().split(/[\s,]+/)) {
    const match = /^(\d{1,3})=(.*)$/.exec(pair);
    const code = match ? Number(match[1]) : Number.NaN;
    if (!match || code < 1 || code > 255 || !isDeclarableClass(match[2])) {
      throw new BatonError(
        'CONFIG_INVALID',
        `STEP_EXIT_CODES: "${pair}" is not <exit code 1-255>=<class>; use e.g. 64=invalid,75=transient,77=fatal (classes: ${DECLARABLE_CLASSES.join(', ')})`,
      );
    }
    map[String(code)] = match[2];
  }
  return map;
}

function wholeNumberVariable(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number): number {
  const text = env[name]?.trim() || String(fallback);
  if (!/^\d+$/.test(text) || Number(text) < min || Number(text) > 1000) {
    throw new BatonError(
      'CONFIG_INVALID',
      `${name} must be a whole number from ${min} to 1000, got "${env[name]}"`,
    );
  }
  return Number(text);
}
