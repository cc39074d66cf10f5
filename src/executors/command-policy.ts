/**
 * Which agent commands Baton agrees to run. The agent CLI runs as argv (never through a shell) and
 * the prompt is appended as one last argument, replaces an element that is exactly `{prompt}`, or
 * is sent on stdin. The policy refuses every way of getting a shell or an interpreter to run that
 * prompt, or other argv text, as code: shells (also behind symlinks), wrappers around them,
 * interpreters given inline code, and programs whose operand is a program.
 *
 * This is a guard against mistakes and against plans that smuggle a shell in, not a sandbox: a
 * script file that the agent command names is trusted.
 */
import { BatonError } from '../core/errors.js';
import {
  FIND_EXEC_OPTIONS,
  findRule,
  INTERPRETERS,
  type InterpreterRule,
  MULTICALL_NAMES,
  type OptionGrammar,
  PROMPT_PLACEHOLDER,
  programKeys,
  REFUSED_PROGRAMS,
  SHELL_NAMES,
  WRAPPERS,
  type WrapperRule,
} from './command-policy-rules.js';
import {
  DEFAULT_EXEC_PATH,
  EXECVP_DEFAULT_PATH,
  joinPath,
  locateProgram,
  realPathOrNull,
} from './program-lookup.js';

export type CommandPolicyMode = 'native' | 'legacy';

export interface CommandPolicyOptions {
  /**
   * `native` (default): `-c` and `-e` are ordinary agent flags (`codex exec -c model=o3`).
   * `legacy`: the Python skill's rule for state.json plans, which also refuses every element that is
   * exactly `-c` or `-e`, whatever the program.
   */
  mode?: CommandPolicyMode;
  /**
   * Search path for a program named without a slash: the PATH of the environment the command will
   * run in. Default: `process.env.PATH`; without any, {@link DEFAULT_EXEC_PATH}, as spawn uses.
   */
  pathEnv?: string;
  /** Directory against which relative program paths and PATH entries resolve. Default: `process.cwd()`. */
  cwd?: string;
}

/**
 * `executable`: where argv[0] was found (absolute, symlinks not followed), the very file the policy
 * checked; spawning it skips a second PATH search in the child. Null when it was not found.
 */
export type CommandVerdict =
  | {
      ok: true;
      executable: string | null;
      /** Where the program that does the work is: past the wrappers (`timeout 600 claude` → 1). */
      programIndex: number;
    }
  | { ok: false; reason: string };

/** Why a command is refused, and how to fix it. */
interface Refusal {
  why: string;
  fix: string;
}

/** The command under inspection, with what resolving its programs needs. */
interface Command {
  argv: readonly string[];
  pathEnv: string;
  cwd: string;
  /** Where argv[0] was found, set while checking it. */
  executable?: string | null;
  /** The innermost program checked: the one a wrapper finally runs. */
  programIndex?: number;
}

/** An option as scanOptions read it: `-C` or the whole long name (`--chdir`), with its value if it takes one. */
interface ParsedOption {
  option: string;
  value?: string;
}

type Scan =
  | { kind: 'operand'; index: number; text: string | undefined }
  | { kind: 'refused'; refusal: Refusal };

const FIX = {
  direct: 'run the agent binary directly, e.g. ["claude","-p"]',
  script: 'put the code in a script file and run that, e.g. ["python3","agent.py"]',
  wrapped: 'name the agent after the wrapper, e.g. ["timeout","600","claude","-p"]',
  shape: 'pass the program and each argument as separate non-empty strings, e.g. ["claude","-p"]',
  legacy: 'move the call into a script file, or use a native plan, where agent CLIs may take -c and -e',
} as const;

/** Wrappers nested deeper than this are refused rather than followed. */
const MAX_WRAPPER_DEPTH = 8;

export function checkAgentCommand(
  argv: readonly string[],
  options: CommandPolicyOptions = {},
): CommandVerdict {
  const found: Found = {};
  const refusal = findRefusal(argv, options, found);
  return refusal === null
    ? { ok: true, executable: found.executable ?? null, programIndex: found.programIndex ?? 0 }
    : { ok: false, reason: `${refusal.why}; ${refusal.fix}` };
}

/**
 * Throws BatonError('AGENT_CMD_REFUSED', `agent command ["sh","-c"] refused: <reason>. <fix hint>`);
 * returns where argv[0] was found (see CommandVerdict), null when it was not.
 */
export function assertAgentCommand(
  argv: readonly string[],
  options: CommandPolicyOptions = {},
): string | null {
  const found: Found = {};
  const refusal = findRefusal(argv, options, found);
  if (refusal === null) return found.executable ?? null;
  const fix = refusal.fix.charAt(0).toUpperCase() + refusal.fix.slice(1);
  throw new BatonError('AGENT_CMD_REFUSED', `agent command ${quote(argv)} refused: ${refusal.why}. ${fix}.`);
}

/** What the check learnt of a command it accepts. */
interface Found {
  executable?: string | null;
  programIndex?: number;
}

function findRefusal(
  argv: readonly string[],
  options: CommandPolicyOptions,
  found: Found = {},
): Refusal | null {
  const mode = options.mode ?? 'native';
  if (mode !== 'native' && mode !== 'legacy') {
    throw new BatonError('INVALID_ARGUMENT', `command policy mode ${quote(mode)} is not native or legacy`);
  }
  const shape = checkShape(argv);
  if (shape !== null) return shape;
  const { pathEnv = process.env.PATH ?? DEFAULT_EXEC_PATH } = options;
  // Relative programs and PATH entries resolve as the kernel resolves them once the child is in
  // its folder: against the real folder (`..` of a symlinked folder is the target's parent).
  const given = options.cwd ?? process.cwd();
  const cmd: Command = { argv, pathEnv, cwd: realPathOrNull(given) ?? given };
  const structural = checkProgramAt(cmd, 0, 0);
  found.executable = cmd.executable ?? null;
  found.programIndex = cmd.programIndex ?? 0;
  if (structural !== null || mode === 'native') return structural;
  const index = argv.findIndex((arg) => arg === '-c' || arg === '-e');
  if (index === -1) return null;
  return {
    why: `${at(argv, index)} is refused in legacy mode, which rejects every element that is exactly -c or -e`,
    fix: FIX.legacy,
  };
}

function checkShape(argv: readonly unknown[]): Refusal | null {
  if (!Array.isArray(argv) || argv.length === 0) return { why: 'argv is empty', fix: FIX.shape };
  const index = argv.findIndex((arg) => typeof arg !== 'string' || arg === '' || arg.includes('\0'));
  if (index === -1) return null;
  const arg = argv[index];
  const problem =
    typeof arg !== 'string' ? 'is not a string' : arg === '' ? 'is empty' : 'contains a NUL byte';
  return { why: `argv[${index}] ${problem}`, fix: FIX.shape };
}

/** Checks the command whose program is argv[index], following wrappers into the command they run. */
function checkProgramAt(cmd: Command, index: number, depth: number): Refusal | null {
  const { argv } = cmd;
  if (depth > MAX_WRAPPER_DEPTH) {
    return { why: `wrappers are nested more than ${MAX_WRAPPER_DEPTH} deep`, fix: FIX.direct };
  }
  const program = argv[index]!;
  cmd.programIndex = index;
  if (program === PROMPT_PLACEHOLDER) {
    return {
      why: `${at(argv, index)} is in a program position: the prompt would choose the program`,
      fix: FIX.direct,
    };
  }
  const givenKeys = programKeys(program);
  const candidates = [{ keys: givenKeys, label: quote(program) }];
  const located = locateProgram(program, cmd);
  if (index === 0) cmd.executable = located;
  const realPath = located === null ? null : realPathOrNull(located);
  if (realPath !== null) {
    const realKeys = programKeys(realPath);
    const isMulticall = realKeys.some((key) => (MULTICALL_NAMES as readonly string[]).includes(key));
    if (realKeys[0] !== givenKeys[0] && !isMulticall) {
      candidates.push({ keys: realKeys, label: `${quote(program)} (resolves to ${realPath})` });
    }
  }
  for (const { keys, label } of candidates) {
    const refusal = checkNamedProgram(cmd, keys, label, index, depth);
    if (refusal !== null) return refusal;
  }
  return null;
}

function checkNamedProgram(cmd: Command, keys: string[], label: string, index: number, depth: number) {
  const { argv } = cmd;
  if (keys.some((key) => (SHELL_NAMES as readonly string[]).includes(key))) {
    return { why: `${label} is a shell: a shell would interpret the prompt as code`, fix: FIX.direct };
  }
  const refusedWhy = findRule(REFUSED_PROGRAMS, keys);
  if (refusedWhy !== undefined) return { why: `${label} ${refusedWhy}`, fix: FIX.direct };
  if (keys.includes('find')) {
    const exec = argv.findIndex(
      (arg, i) => i > index && (FIND_EXEC_OPTIONS as readonly string[]).includes(arg),
    );
    return exec === -1 ? null : { why: `${at(argv, exec)} makes ${label} run a command`, fix: FIX.direct };
  }
  const wrapper = findRule<WrapperRule>(WRAPPERS, keys);
  if (wrapper !== undefined) return checkWrapper(cmd, wrapper, label, index, depth);
  const interpreter = findRule<InterpreterRule>(INTERPRETERS, keys);
  if (interpreter !== undefined) return checkInterpreter(argv, interpreter, label, index);
  return null;
}

function checkWrapper(cmd: Command, rule: WrapperRule, label: string, index: number, depth: number) {
  const { argv } = cmd;
  let command = index + 1;
  const options: ParsedOption[] = [];
  // Options may also follow the positionals: `flock FILE -c COMMAND`.
  for (let operand = 0; ; operand += 1) {
    const scan = scanOptions(argv, command, rule, label, FIX.direct, options);
    if (scan.kind === 'refused') return scan.refusal;
    command = scan.index;
    if (operand === (rule.positionals ?? 0)) break;
    command += 1;
  }
  const firstAssignment = command;
  while (rule.assignments === true && command < argv.length && argv[command]!.includes('=')) command += 1;
  if (command >= argv.length) {
    return {
      why: `${label} wraps no command: the appended prompt would become the program it runs`,
      fix: FIX.wrapped,
    };
  }
  // env may change where the wrapped program is looked up: follow it, or the check and the exec differ.
  const wrapped = programKeys(argv[index]!).includes('env')
    ? envLookup(cmd, options, argv.slice(firstAssignment, command))
    : cmd;
  const refusal = checkProgramAt(wrapped, command, depth + 1);
  cmd.programIndex = wrapped.programIndex ?? command;
  return refusal;
}

/**
 * How `env` finds the command it runs, from the options scanOptions read and the NAME=value
 * assignments after them: `-i`/`-`, `-u PATH`, `PATH=...` change the search path and `-C dir` the
 * folder, as GNU env applies them (unsets before assignments, the folder change before the exec).
 * BSD env's `-P altpath` searches altpath.
 */
function envLookup(cmd: Command, options: readonly ParsedOption[], assignments: readonly string[]): Command {
  let cleared = false;
  let unsetPath = false;
  let altPath: string | undefined;
  let cwd = cmd.cwd;
  for (const { option, value } of options) {
    if (option === '-' || option === '-i' || option === '--ignore-environment') cleared = true;
    else if ((option === '-u' || option === '--unset') && value === 'PATH') unsetPath = true;
    else if ((option === '-C' || option === '--chdir') && value !== undefined)
      cwd = value.startsWith('/') ? value : joinPath(cwd, value);
    else if (option === '-P' && value !== undefined) altPath = value;
  }
  const assignedPath = assignments.findLast((arg) => arg.startsWith('PATH='))?.slice('PATH='.length);
  const inherited = cleared || unsetPath ? undefined : cmd.pathEnv;
  const pathEnv = altPath ?? assignedPath ?? inherited ?? EXECVP_DEFAULT_PATH;
  return { argv: cmd.argv, pathEnv, cwd };
}

function checkInterpreter(argv: readonly string[], rule: InterpreterRule, label: string, index: number) {
  let start = index + 1;
  for (;;) {
    const scan = scanOptions(argv, start, rule, label, FIX.script);
    if (scan.kind === 'refused') return scan.refusal;
    const { index: operand, text } = scan;
    if (text === undefined) {
      const why = `${label} names no script: it would run the appended prompt as its script, or read its program from stdin`;
      return { why, fix: FIX.script };
    }
    const where = `${quote(text)} (argv[${operand}])`;
    if (text === '-') return { why: `${where} makes ${label} read its program from stdin`, fix: FIX.script };
    if (text === PROMPT_PLACEHOLDER) {
      return {
        why: `${where} is the script of ${label}: the prompt would be the program it runs`,
        fix: FIX.script,
      };
    }
    if (/^data:/i.test(text))
      return { why: `${where} is a data: URL: ${label} would run inline code`, fix: FIX.script };
    const subcommand = rule.subcommands !== undefined ? findRule(rule.subcommands, [text]) : undefined;
    if (subcommand === undefined) return null;
    if (subcommand !== null) return { why: `${where} makes ${label} ${subcommand}`, fix: FIX.script };
    start = operand + 1;
  }
}

/** Walks the options from argv[start] to the first operand, refusing options that run code. */
function scanOptions(
  argv: readonly string[],
  start: number,
  rule: OptionGrammar,
  label: string,
  fix: string,
  seen: ParsedOption[] = [],
): Scan {
  const refuse = (why: string, fixHint: string = FIX.script): Scan => ({
    kind: 'refused',
    refusal: { why, fix: fixHint },
  });
  const valueProblem = (option: string, value: string | undefined, i: number): Scan | null => {
    if (!rule.codeValue?.includes(option)) return null;
    if (value === undefined) return refuse(`${at(argv, i)} would load the appended prompt as code`);
    if (value === PROMPT_PLACEHOLDER)
      return refuse(`"{prompt}" after ${quote(option)} would be loaded as code`);
    if (/^data:/i.test(value))
      return refuse(`${at(argv, i)} makes ${label} load inline code from a data: URL`);
    return null;
  };
  const optionProblem = (option: string, i: number): Scan | null => {
    const clustered = argv[i] !== option && !argv[i]!.startsWith(`${option}=`);
    const spelled = clustered ? `${at(argv, i)} includes ${option}, which` : at(argv, i);
    if (rule.code?.includes(option)) return refuse(`${spelled} makes ${label} run inline code`);
    const why = rule.refused !== undefined ? findRule(rule.refused, [option]) : undefined;
    return why === undefined ? null : refuse(`${spelled} makes ${label} ${why}`, fix);
  };
  for (let i = start; i < argv.length; i += 1) {
    const arg = argv[i]!;
    if (arg === '--') return operandAt(argv, i + 1);
    if (arg === '-' && rule.dashIsOption === true) {
      seen.push({ option: '-' });
      return operandAt(argv, i + 1);
    }
    if (!arg.startsWith('-') || arg === '-') return operandAt(argv, i);
    if (arg.startsWith('--')) {
      const eq = arg.indexOf('=');
      const name = longOption(eq === -1 ? arg : arg.slice(0, eq), rule);
      const inline = eq === -1 ? undefined : arg.slice(eq + 1);
      const problem = optionProblem(name, i);
      if (problem !== null) return problem;
      if (rule.scriptOption?.includes(name)) {
        return inline === undefined ? operandAt(argv, i + 1) : { kind: 'operand', index: i, text: inline };
      }
      if (rule.longValue?.includes(name) || rule.codeValue?.includes(name)) {
        const value = inline ?? argv[i + 1];
        const valueRefusal = valueProblem(name, value, i);
        if (valueRefusal !== null) return valueRefusal;
        seen.push(value === undefined ? { option: name } : { option: name, value });
        if (inline === undefined) i += 1;
      } else seen.push({ option: name });
      continue;
    }
    for (let j = 1; j < arg.length; j += 1) {
      const letter = arg.charAt(j);
      const option = `-${letter}`;
      const rest = arg.slice(j + 1);
      const problem = optionProblem(option, i);
      if (problem !== null) return problem;
      if (rule.scriptOption?.includes(option)) {
        return rest === '' ? operandAt(argv, i + 1) : { kind: 'operand', index: i, text: rest };
      }
      if (rule.shortValue?.includes(letter) || rule.codeValue?.includes(option)) {
        const value = rest === '' ? argv[i + 1] : rest;
        const valueRefusal = valueProblem(option, value, i);
        if (valueRefusal !== null) return valueRefusal;
        seen.push(value === undefined ? { option } : { option, value });
        if (rest === '') i += 1;
        break;
      }
      seen.push({ option });
      if (rule.shortAttached?.includes(letter)) break;
    }
  }
  return { kind: 'operand', index: argv.length, text: undefined };
}

/**
 * The long option `name` stands for: getopt_long accepts any unambiguous abbreviation (`--sp` is
 * `--split-string`). An abbreviation of a refused or code option is read as that option even when
 * it could also start another (the program would refuse it as ambiguous, or run it: refusing is safe).
 */
function longOption(name: string, rule: OptionGrammar): string {
  const refused = [...Object.keys(rule.refused ?? {}), ...(rule.code ?? []), ...(rule.codeValue ?? [])];
  const known = [
    ...refused,
    ...(rule.longValue ?? []),
    ...(rule.scriptOption ?? []),
    ...(rule.longFlags ?? []),
  ];
  if (name.length < 3 || known.includes(name)) return name;
  const dangerous = refused.filter((option) => option.startsWith('--') && option.startsWith(name));
  if (dangerous.length > 0) return dangerous[0]!;
  const matches = known.filter((option) => option.startsWith(name));
  return matches.length === 1 ? matches[0]! : name;
}

function operandAt(argv: readonly string[], index: number): Scan {
  return { kind: 'operand', index, text: argv[index] };
}

function quote(value: unknown): string {
  return JSON.stringify(value);
}

function at(argv: readonly string[], index: number): string {
  return `${quote(argv[index]!)} (argv[${index}])`;
}
