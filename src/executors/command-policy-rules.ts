/**
 * The data behind command-policy.ts: which programs are shells, wrappers and interpreters, and which
 * of their options make them run text as code.
 *
 * Program names are matched on their base name in lower case, without a `.exe` suffix and also
 * without a trailing version (`python3.12` → `python`, `ksh93` → `ksh`, `BASH.EXE` → `bash`).
 * Matching ignores case on purpose: on a case-insensitive file system (macOS, Windows) `BASH` runs
 * bash, and no agent CLI is named like a shell in another case.
 */

/** The argv element that the executor replaces with the step's prompt. */
export const PROMPT_PLACEHOLDER = '{prompt}';

/** Programs that interpret their arguments or stdin as shell code. */
export const SHELL_NAMES = [
  'sh',
  'bash',
  'dash',
  'zsh',
  'ksh',
  'mksh',
  'lksh',
  'pdksh',
  'oksh',
  'ash',
  'hush',
  'posh',
  'rbash',
  'yash',
  'fish',
  'csh',
  'tcsh',
  'nu',
  'xonsh',
  'elvish',
  'osh',
  'ysh',
  'busybox',
  'toybox',
  'pwsh',
  'powershell',
  'cmd',
  'wsl',
] as const;

/** Multi-call binaries: a symlink to one of them runs the applet named like the symlink. */
export const MULTICALL_NAMES = ['busybox', 'toybox', 'coreutils'] as const;

const SHELL_BUILTIN = 'is a shell builtin: only a shell runs it, and it would run its arguments as code';
const PROGRAM_OPERAND = 'takes its first operand as a program, so the appended prompt would run as code';

const ROOT_CHANGE =
  'can run its command in another file system view, so the program Baton checked would not be the one that runs';
const WORKSPACE_CONFIG = 'reads a configuration file from the folder it runs in that can load code';
const PACKAGE_SCRIPTS = 'runs package scripts through a shell';
const DOWNLOADS =
  'may download and run any package; run the installed agent CLI (node_modules/.bin/<name>) instead';

/** Programs refused whatever their arguments, with why. */
export const REFUSED_PROGRAMS = {
  eval: SHELL_BUILTIN,
  exec: SHELL_BUILTIN,
  source: SHELL_BUILTIN,
  '.': SHELL_BUILTIN,
  xargs: 'builds command lines from its input',
  watch: 'runs its command through sh -c',
  script: 'runs its command through a shell',
  ssh: 'runs its command through a remote shell',
  rsh: 'runs its command through a remote shell',
  su: "runs the target user's shell, which would interpret the arguments",
  runuser: "runs the target user's shell, which would interpret the arguments",
  sg: 'runs its command through sh -c',
  newgrp: 'starts a shell',
  awk: PROGRAM_OPERAND,
  gawk: PROGRAM_OPERAND,
  mawk: PROGRAM_OPERAND,
  nawk: PROGRAM_OPERAND,
  goawk: PROGRAM_OPERAND,
  'original-awk': PROGRAM_OPERAND,
  sed: `${PROGRAM_OPERAND} (sed scripts can also run shell commands)`,
  gsed: `${PROGRAM_OPERAND} (sed scripts can also run shell commands)`,
  tclsh: 'reads Tcl commands from a script argument or stdin',
  chroot: ROOT_CHANGE,
  unshare: ROOT_CHANGE,
  nsenter: ROOT_CHANGE,
  npx: DOWNLOADS,
  bunx: DOWNLOADS,
  pnpx: DOWNLOADS,
  bun: `${WORKSPACE_CONFIG} (bunfig.toml preload); it also ${DOWNLOADS}`,
  deno: `${WORKSPACE_CONFIG} (deno.json import maps); it also ${DOWNLOADS}`,
  rscript: `${WORKSPACE_CONFIG} (.Rprofile)`,
  r: `${WORKSPACE_CONFIG} (.Rprofile)`,
  npm: `${PACKAGE_SCRIPTS}; it ${DOWNLOADS}`,
  pnpm: `${PACKAGE_SCRIPTS}; it ${DOWNLOADS}`,
  yarn: `${PACKAGE_SCRIPTS}; it ${DOWNLOADS}`,
  wish: 'reads Tcl commands from a script argument or stdin',
} as const satisfies Record<string, string>;

/** Options of `find` that run a command. */
export const FIND_EXEC_OPTIONS = ['-exec', '-execdir', '-ok', '-okdir'] as const;

/**
 * How a program parses its options, enough to find its first operand (the wrapped command or the
 * script) and the options that run code. Short options may be clustered (`-Ic`, `-oL`).
 */
export interface OptionGrammar {
  /** Short letters taking a value: the rest of the cluster, else the next argument (`-u NAME`). */
  readonly shortValue?: string;
  /** Short letters whose optional value can only be attached (`perl -i.bak`); they end the cluster. */
  readonly shortAttached?: string;
  /** Long options taking the next argument unless written `--name=value`. */
  readonly longValue?: readonly string[];
  /** Options whose value is the script (`python3 -m module`, `php -f file`). */
  readonly scriptOption?: readonly string[];
  /** Options that make the program run text from the command line as code (`-c`, `--eval`). */
  readonly code?: readonly string[];
  /** Options whose value is loaded as code (a module specifier, which may be a `data:` URL). */
  readonly codeValue?: readonly string[];
  /** Other refused options, with why (completing "makes <program> ..."). */
  readonly refused?: Readonly<Record<string, string>>;
  /** A bare `-` ends the options and is one itself (env's `-` means `-i`), not an operand. */
  readonly dashIsOption?: boolean;
  /**
   * Long options without a value. With the others above, the names a GNU-style program accepts
   * abbreviated (`--ch` for `--chdir`): an abbreviation is read as the option it starts.
   */
  readonly longFlags?: readonly string[];
}

/** A program that runs another command: its first operand (after `positionals`) is that command. */
export interface WrapperRule extends OptionGrammar {
  /** Operands before the wrapped command (timeout's duration, chroot's new root). */
  readonly positionals?: number;
  /** `NAME=value` operands before the command are environment assignments (env, sudo). */
  readonly assignments?: boolean;
}

const SHELL_OPTION = 'run the command through a shell';
const SPLITS_STRING = 'split its argument into a command line';

export const WRAPPERS = {
  env: {
    shortValue: 'uCPa',
    longValue: ['--unset', '--chdir', '--argv0'],
    longFlags: [
      '--ignore-environment',
      '--null',
      '--debug',
      '--block-signal',
      '--default-signal',
      '--ignore-signal',
      '--list-signal-handling',
      '--help',
      '--version',
    ],
    refused: { '-S': SPLITS_STRING, '--split-string': SPLITS_STRING },
    dashIsOption: true,
    assignments: true,
  },
  nohup: {},
  sudo: {
    shortValue: 'ugpCDrtTURh',
    longValue: [
      '--user',
      '--group',
      '--prompt',
      '--close-from',
      '--chdir',
      '--role',
      '--type',
      '--command-timeout',
      '--other-user',
      '--chroot',
      '--host',
    ],
    refused: { '-s': SHELL_OPTION, '--shell': SHELL_OPTION, '-i': SHELL_OPTION, '--login': SHELL_OPTION },
    assignments: true,
  },
  doas: { shortValue: 'Cu', refused: { '-s': 'run a shell' } },
  pkexec: { longValue: ['--user'] },
  timeout: { shortValue: 'ks', longValue: ['--kill-after', '--signal'], positionals: 1 },
  nice: { shortValue: 'n', longValue: ['--adjustment'] },
  ionice: { shortValue: 'cnpPu', longValue: ['--class', '--classdata', '--pid', '--pgid', '--uid'] },
  stdbuf: { shortValue: 'ioe', longValue: ['--input', '--output', '--error'] },
  setsid: {},
  chrt: {
    shortValue: 'TPD',
    longValue: ['--sched-runtime', '--sched-period', '--sched-deadline'],
    positionals: 1,
  },
  taskset: { positionals: 1 },
  flock: {
    shortValue: 'wE',
    longValue: ['--timeout', '--wait', '--conflict-exit-code'],
    refused: { '-c': 'run its argument through sh -c', '--command': 'run its argument through sh -c' },
    positionals: 1,
  },
  time: { shortValue: 'fo', longValue: ['--format', '--output'] },
  command: {},
  builtin: {},
  coreutils: { refused: { '--coreutils-prog': 'hide which utility runs' } },
} as const satisfies Record<string, WrapperRule>;

/** A program that runs a script: its first operand is the script (or a subcommand). */
export interface InterpreterRule extends OptionGrammar {
  /** Subcommands: `null` means the script follows (`deno run x.ts`); a string is why it is refused
   * (completing "makes <program> ..."). */
  readonly subcommands?: Readonly<Record<string, string | null>>;
}

const READS_STDIN = 'read code from stdin, where the prompt may be sent';
const PRELOADS =
  'load code named on the command line, which Baton cannot check; load it from the trusted script';
const ENV_FILE = 'load environment variables from a file, and NODE_OPTIONS there loads code';

const PYTHON: InterpreterRule = {
  shortValue: 'WX',
  longValue: ['--check-hash-based-pycs'],
  code: ['-c'],
  // A module run as a program decides what its arguments mean: `python -m timeit <prompt>`
  // executes the prompt. Run the agent's own console script instead (aider, not python -m aider).
  refused: {
    '-i': READS_STDIN,
    '-m': "run a library module whose arguments may be code (e.g. python -m timeit); run the agent's own command",
  },
};
const NODE: InterpreterRule = {
  shortValue: 'C',
  longValue: ['--conditions', '--title', '--input-type', '--redirect-warnings', '--watch-path'],
  code: ['-e', '-p', '--eval', '--print'],
  refused: {
    '-i': READS_STDIN,
    '--interactive': READS_STDIN,
    '-r': PRELOADS,
    '--require': PRELOADS,
    '--import': PRELOADS,
    '--loader': PRELOADS,
    '--experimental-loader': PRELOADS,
    '--env-file': ENV_FILE,
    '--env-file-if-exists': ENV_FILE,
  },
};
const PERL: InterpreterRule = {
  shortValue: 'I',
  shortAttached: 'i0lCdDxMmVF',
  code: ['-e', '-E'],
  refused: {
    '-M': PRELOADS,
    '-m': PRELOADS,
    '-d': PRELOADS,
    '-x': 'run a program it finds inside another file',
  },
};
const RUBY: InterpreterRule = {
  shortValue: 'IrCEF',
  shortAttached: 'xiKTW0',
  longValue: ['--encoding', '--external-encoding', '--internal-encoding', '--enable', '--disable', '--dump'],
  code: ['-e'],
  refused: { '-r': PRELOADS },
};
const PHP: InterpreterRule = {
  shortValue: 'cdzSt',
  longValue: ['--php-ini', '--define', '--zend-extension', '--rf', '--rc', '--re', '--rz', '--ri'],
  scriptOption: ['-f', '-F', '--file', '--process-file'],
  code: ['-r', '-R', '-B', '-E', '--run', '--process-code', '--process-begin', '--process-end'],
  refused: {
    '-a': READS_STDIN,
    '--interactive': READS_STDIN,
    '-d': 'set ini options such as auto_prepend_file, which load code',
    '--define': 'set ini options such as auto_prepend_file, which load code',
    '-c': 'read an ini file that can load code (auto_prepend_file)',
    '--php-ini': 'read an ini file that can load code (auto_prepend_file)',
    '-z': PRELOADS,
    '--zend-extension': PRELOADS,
  },
};
const LUA: InterpreterRule = {
  shortValue: 'jO',
  code: ['-e'],
  refused: { '-i': READS_STDIN, '-l': PRELOADS },
};
const JULIA: InterpreterRule = {
  shortValue: 'LJCtp',
  longValue: ['--load', '--sysimage', '--cpu-target', '--threads', '--procs', '--machine-file', '--project'],
  code: ['-e', '-E', '--eval', '--print'],
  refused: { '-i': READS_STDIN, '-L': PRELOADS, '--load': PRELOADS },
};
/** Interpreters by name. */
export const INTERPRETERS = {
  python: PYTHON,
  pythonw: PYTHON,
  ipython: PYTHON,
  pypy: PYTHON,
  node: NODE,
  nodejs: NODE,
  perl: PERL,
  ruby: RUBY,
  php: PHP,
  lua: LUA,
  luajit: LUA,
  osascript: { shortValue: 'ls', code: ['-e'], refused: { '-i': READS_STDIN } },
  julia: JULIA,
  expect: { shortValue: 'D', scriptOption: ['-f'], code: ['-c'], refused: { '-i': READS_STDIN } },
} as const satisfies Record<string, InterpreterRule>;

/** Lookup keys of a program: its base name in lower case without `.exe`, then without a version. */
export function programKeys(program: string): string[] {
  const base = (program.split(/[\\/]/).pop() ?? program).toLowerCase().replace(/\.exe$/, '');
  const unversioned = base.replace(/-?\d+(?:\.\d+)*[a-z]?$/, '');
  return unversioned === '' || unversioned === base ? [base] : [base, unversioned];
}

/** The rule of the first key that `table` has. */
export function findRule<T>(table: Readonly<Record<string, T>>, keys: readonly string[]): T | undefined {
  const key = keys.find((candidate) => Object.hasOwn(table, candidate));
  return key === undefined ? undefined : table[key];
}

/**
 * Programs known to do nothing with their arguments (the skill's default agent is `echo`): they may
 * receive prompt text without being trusted, when they are the system's own (see command-policy.ts).
 */
export const NO_OP_PROGRAMS = ['echo', 'true', 'false'] as const;

// One list for the env wrapper (here) and agent.env.set (plan validation, which must stay pure).
export {
  CODE_LOADING_PREFIXES,
  CODE_LOADING_VARIABLES,
  isCodeLoadingVariable,
} from '../core/code-loading-variables.js';
