/**
 * Which agent and hook commands Baton agrees to run. The command runs as argv (never through a
 * shell) and the prompt is appended as one last argument, replaces an element that is exactly
 * `{prompt}`, or is sent on stdin.
 *
 * Trust, not a deny-list: the program that finally runs (past wrappers such as `env`, `timeout`,
 * `nice`) must be a genuine agent CLI (a file of the npm package its profile names, see
 * agent-identity.ts), a file the operator trusted out of band (trusted-programs.ts), one of the few
 * programs that do nothing with their arguments (`echo`, `true`, `false`), or an interpreter whose
 * script is one of those. No list of names can be complete: a copy of a shell called `claude` is
 * none of these. The rules for shells, interpreters' inline-code flags and programs that run their
 * operands stay in front, so that a refusal says exactly what was wrong.
 */
import fs from 'node:fs';
import { BatonError } from '../core/errors.js';
import { knownAgentAt } from './agent-identity.js';
import { at, FIX, type ParsedOption, quote, type Refusal, scanOptions } from './command-options.js';
import {
  FIND_EXEC_OPTIONS,
  findRule,
  INTERPRETERS,
  type InterpreterRule,
  isCodeLoadingVariable,
  MULTICALL_NAMES,
  NO_OP_PROGRAMS,
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
  joinFrom,
  joinPath,
  locateProgram,
  realFolderOf,
  realPathOrNull,
} from './program-lookup.js';
import { type TrustedPrograms, trustedPrograms } from './trusted-programs.js';

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
  /**
   * The programs the operator trusted (see trusted-programs.ts). Default: BATON_TRUSTED_AGENTS of
   * this process's environment only; the CLI passes its Baton home's as well.
   */
  trust?: TrustedPrograms;
  /**
   * Where the command comes from, to begin a refusal's message with (`plan.yaml:
   * steps.report.agent.command`, `STEP_AGENT_CMD`); the offending element's index is appended.
   */
  where?: string;
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

/** The command under inspection, with what resolving its programs needs. */
interface Command {
  argv: readonly string[];
  pathEnv: string;
  cwd: string;
  trust: TrustedPrograms;
  /** Where argv[0] was found, set while checking it. */
  executable?: string | null;
  /** The innermost program checked: the one a wrapper finally runs. */
  programIndex?: number;
}

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
  const where =
    options.where === undefined
      ? ''
      : `${options.where}${refusal.index === undefined ? '' : `[${refusal.index}]`}: `;
  throw new BatonError(
    'AGENT_CMD_REFUSED',
    `${where}command ${quote(argv)} refused: ${refusal.why}. ${fix}.`,
  );
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
  const trust = options.trust ?? trustedPrograms(null);
  const cmd: Command = { argv, pathEnv, cwd: realFolderOf(given), trust };
  const structural = checkProgramAt(cmd, 0, 0);
  found.executable = cmd.executable ?? null;
  found.programIndex = cmd.programIndex ?? 0;
  if (structural !== null || mode === 'native') return structural;
  const index = argv.findIndex((arg) => arg === '-c' || arg === '-e');
  if (index === -1) return null;
  return {
    why: `${at(argv, index)} is refused in legacy mode, which rejects every element that is exactly -c or -e`,
    fix: FIX.legacy,
    index,
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
    return { why: `wrappers are nested more than ${MAX_WRAPPER_DEPTH} deep`, fix: FIX.direct, index };
  }
  const program = argv[index]!;
  cmd.programIndex = index;
  if (program === PROMPT_PLACEHOLDER) {
    return {
      why: `${at(argv, index)} is in a program position: the prompt would choose the program`,
      fix: FIX.direct,
      index,
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
  const found: Program = { index, label: quote(program), realPath };
  // Every name's refusal first (a link called `agent` to bash is a shell), then the role of the
  // file that runs: the resolved name's (a link to node is node), else the given one's.
  for (const { keys, label } of candidates) {
    const refusal = refusedByName(cmd, keys, label, index);
    if (refusal !== null) return { ...refusal, index: refusal.index ?? index };
  }
  const { keys, label } = candidates[candidates.length - 1]!;
  const refusal = checkRole(cmd, keys, { ...found, label }, depth);
  return refusal === null ? null : { ...refusal, index: refusal.index ?? index };
}

/** The program at argv[index]: how messages name it, and its real path (null: not found). */
interface Program {
  index: number;
  label: string;
  realPath: string | null;
}

/** Programs refused by what they are called: shells, programs that run their operands, `find -exec`. */
function refusedByName(cmd: Command, keys: string[], label: string, index: number): Refusal | null {
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
    if (exec !== -1)
      return { why: `${at(argv, exec)} makes ${label} run a command`, fix: FIX.direct, index: exec };
  }
  return null;
}

/** A wrapper's command, an interpreter's script, or the program itself must be trusted. */
function checkRole(cmd: Command, keys: string[], program: Program, depth: number): Refusal | null {
  const { index, label } = program;
  const wrapper = findRule<WrapperRule>(WRAPPERS, keys);
  if (wrapper !== undefined) {
    // What it wraps first: that is the refusal worth reading (`sudo sh`: the shell).
    return checkWrapper(cmd, wrapper, label, index, depth) ?? systemProgramProblem(cmd, program, 'wrapper');
  }
  const interpreter = findRule<InterpreterRule>(INTERPRETERS, keys);
  if (interpreter !== undefined) {
    const problem = checkInterpreter(cmd, interpreter, program);
    if (problem === null || 'why' in problem) return problem;
    const trusted = checkTrusted(cmd, problem.script, `the script ${problem.script.label} of ${label}`);
    return trusted === null ? null : { ...trusted, index: problem.script.index };
  }
  if (keys.some((key) => (NO_OP_PROGRAMS as readonly string[]).includes(key))) {
    return systemProgramProblem(cmd, program, 'no-op');
  }
  return checkTrusted(cmd, program, label);
}

/**
 * Wrappers and the do-nothing programs are trusted by name only where the system keeps its
 * programs: a file called `timeout` or `echo` anywhere else may be anything.
 */
function systemProgramProblem(cmd: Command, program: Program, role: 'wrapper' | 'no-op'): Refusal | null {
  const { realPath, label } = program;
  if (realPath === null) return notFound(cmd, program);
  if (isSystemProgram(realPath)) return null;
  const what = role === 'wrapper' ? 'wraps the agent' : 'ignores its arguments';
  return {
    why: `${label} is ${realPath}, not the system's program of that name (in ${SYSTEM_PROGRAM_DIRS.join(', ')}), so Baton cannot tell that it only ${what}`,
    fix: `${FIX.direct}; or, if this file is yours and safe, trust it: baton trust add ${realPath}`,
  };
}

function notFound(cmd: Command, program: Program): Refusal {
  const where = argvPath(cmd.argv[program.index]!)
    ? `at ${cmd.argv[program.index]}`
    : `on PATH (${cmd.pathEnv})`;
  return {
    why: `${program.label} was not found ${where}, so Baton cannot check what it is`,
    fix: 'install the agent CLI, or name it by its absolute path',
  };
}

function argvPath(program: string): boolean {
  return program.includes('/');
}

/**
 * A program (or a script an interpreter runs) may receive prompt text only if it is a genuine
 * agent CLI or the operator trusted it (see the file's comment).
 */
function checkTrusted(cmd: Command, program: Program, label: string): Refusal | null {
  const { realPath } = program;
  if (realPath === null) return notFound(cmd, program);
  if (knownAgentAt(realPath) !== null) return null;
  const verdict = cmd.trust.verdict(realPath);
  if (verdict.trusted) return null;
  if (verdict.changed !== undefined) {
    return {
      why: `${label} (${realPath}) changed since it was trusted (sha256 ${verdict.changed.was.slice(0, 12)}…, now ${verdict.changed.now.slice(0, 12)}…)`,
      fix: `check the file, then trust it again: baton trust add ${realPath}`,
    };
  }
  return {
    why: `${label} (${realPath}) is neither a known agent CLI (claude, codex, gemini, openclaw, opencode installed from npm) nor a program the operator trusted, and only those receive prompt text`,
    fix: `if it is your agent and runs no text as code, trust it: baton trust add ${realPath} (or list it in BATON_TRUSTED_AGENTS)`,
  };
}

/** Folders whose programs are the system's own: a wrapper or `echo` found there is what its name says. */
const SYSTEM_PROGRAM_DIRS = [
  '/usr/bin',
  '/bin',
  '/usr/sbin',
  '/sbin',
  '/usr/local/bin',
  '/usr/local/sbin',
  '/opt/homebrew/bin',
] as const;

function isSystemProgram(realPath: string): boolean {
  const folder = realPath.slice(0, realPath.lastIndexOf('/')) || '/';
  return (SYSTEM_PROGRAM_DIRS as readonly string[]).includes(folder) || realPath.startsWith('/nix/store/');
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
  while (rule.assignments === true && command < argv.length && argv[command]!.includes('=')) {
    const name = argv[command]!.slice(0, argv[command]!.indexOf('='));
    if (isCodeLoadingVariable(name)) {
      return {
        why: `${at(argv, command)} sets ${name}, which makes programs load or run code`,
        fix: FIX.environment,
        index: command,
      };
    }
    command += 1;
  }
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
  return { argv: cmd.argv, pathEnv, cwd, trust: cmd.trust };
}

/** A refusal, or the script the interpreter runs (to be trusted). */
function checkInterpreter(
  cmd: Command,
  rule: InterpreterRule,
  program: Program,
): Refusal | { script: Program } | null {
  const { argv } = cmd;
  const { label, index } = program;
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
    const refuse = (why: string): Refusal => ({ why, fix: FIX.script, index: operand });
    if (text === '-') return refuse(`${where} makes ${label} read its program from stdin`);
    if (text === PROMPT_PLACEHOLDER)
      return refuse(`${where} is the script of ${label}: the prompt would be the program it runs`);
    if (/^data:/i.test(text)) return refuse(`${where} is a data: URL: ${label} would run inline code`);
    const subcommand = rule.subcommands !== undefined ? findRule(rule.subcommands, [text]) : undefined;
    if (subcommand !== undefined) {
      if (subcommand !== null) return refuse(`${where} makes ${label} ${subcommand}`);
      start = operand + 1;
      continue;
    }
    if (program.realPath === null) return notFound(cmd, program);
    const file = text.startsWith('/') ? text : joinFrom(cmd.cwd, text);
    const realPath = realPathOrNull(file);
    if (realPath === null) return refuse(`${where}, the script of ${label}, was not found (${file})`);
    if (!isRegularFile(realPath)) {
      // /dev/stdin, /proc/self/fd/0, a FIFO: the program would come from wherever that reads.
      return refuse(
        `${where} is not a regular file (${realPath}): ${label} would read its program from it, and stdin may carry the prompt`,
      );
    }
    return { script: { index: operand, label: quote(text), realPath } };
  }
}

function isRegularFile(file: string): boolean {
  try {
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}
