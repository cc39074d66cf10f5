import fs from 'node:fs';
import path from 'node:path';
import { BatonError } from '../../core/errors.js';
import { knownAgentAt } from '../../executors/agent-identity.js';
import {
  INTERPRETERS,
  programKeys,
  REFUSED_PROGRAMS,
  SHELL_NAMES,
  WRAPPERS,
} from '../../executors/command-policy-rules.js';
import { DEFAULT_EXEC_PATH, locateProgram, realPathOrNull } from '../../executors/program-lookup.js';
import {
  fileSha256,
  readTrustFile,
  TRUST_FILE,
  TRUSTED_AGENTS_VARIABLE,
  type TrustRecord,
  writeTrustFile,
} from '../../executors/trusted-programs.js';

/**
 * The operator's trusted programs (`baton trust add|rm|list`): programs besides the known agent
 * CLIs allowed to receive prompt text, recorded in the Baton home by real path and sha256. No
 * store: the trust file is the home's, read by every process that checks an agent command.
 */

/** Where the command runs: the home holds the trust file; a program is found from `cwd` or on PATH. */
export interface TrustingProcess {
  home: string;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
}

/** Names of programs that run other programs or text as code: trusting one would trust everything. */
const RUNNERS: readonly string[] = [
  ...SHELL_NAMES,
  ...Object.keys(REFUSED_PROGRAMS),
  ...Object.keys(WRAPPERS),
  ...Object.keys(INTERPRETERS),
];

function trustFile(trusting: TrustingProcess): string {
  return path.join(trusting.home, TRUST_FILE);
}

function pathOf(trusting: TrustingProcess): string {
  return (trusting.env ?? process.env).PATH ?? DEFAULT_EXEC_PATH;
}

/** The real path of `program` as the policy finds it: a path from here, else a PATH search. */
function resolveProgram(program: string, trusting: TrustingProcess): string {
  const cwd = trusting.cwd ?? process.cwd();
  const located = locateProgram(program, { cwd, pathEnv: pathOf(trusting) });
  const real = located === null ? null : realPathOrNull(located);
  if (real === null) {
    const where = program.includes('/')
      ? path.resolve(cwd, program)
      : `on PATH (${(trusting.env ?? process.env).PATH ?? ''})`;
    throw new BatonError(
      'INVALID_ARGUMENT',
      `baton trust: ${JSON.stringify(program)} not found ${where}${hereHint(program, cwd)}`,
    );
  }
  if (!fs.statSync(real).isFile()) {
    throw new BatonError('INVALID_ARGUMENT', `baton trust: ${real} is not a regular file`);
  }
  return real;
}

/**
 * A name without a slash is looked up on PATH, as the command policy and a shell look it up, never
 * in the current folder: when a file of that name is here, the fix is to name it as a path.
 */
function hereHint(program: string, cwd: string): string {
  if (program.includes('/') || !fs.existsSync(path.join(cwd, program))) return '';
  return `; a name without a slash is looked up on PATH only. The file in this folder is ./${program}: baton trust add ./${program}`;
}

/**
 * Why `realPath` must not be trusted, or null: a shell, an interpreter or a wrapper (by its names or
 * because its bytes are those of one installed here), which would make any text run as code.
 */
function runnerProblem(given: string, realPath: string, trusting: TrustingProcess): string | null {
  const names = [...programKeys(given), ...programKeys(realPath)];
  const named = names.find((name) => RUNNERS.includes(name));
  if (named !== undefined) {
    return `${realPath} is ${named}, which runs other programs or text as code; trust the script it runs instead (baton trust add my-agent.py)`;
  }
  const size = fs.statSync(realPath).size;
  const hash = fileSha256(realPath);
  for (const runner of installedRunners(pathOf(trusting))) {
    if (runner === realPath) continue;
    let other: fs.Stats;
    try {
      other = fs.statSync(runner);
    } catch {
      continue;
    }
    if (other.size === size && fileSha256(runner) === hash) {
      return `${realPath} is a copy of ${runner}, which runs other programs or text as code`;
    }
  }
  return null;
}

/** Shells listed in /etc/shells and the shells and interpreters found on PATH. */
function installedRunners(pathEnv: string): Set<string> {
  const found = new Set<string>();
  try {
    for (const line of fs.readFileSync('/etc/shells', 'utf8').split('\n')) {
      const real = line.startsWith('/') ? realPathOrNull(line.trim()) : null;
      if (real !== null) found.add(real);
    }
  } catch {
    // No /etc/shells: the PATH search below still finds them.
  }
  for (const name of [...SHELL_NAMES, ...Object.keys(INTERPRETERS), 'python3', 'perl', 'env']) {
    const located = locateProgram(name, { cwd: '/', pathEnv });
    const real = located === null ? null : realPathOrNull(located);
    if (real !== null) found.add(real);
  }
  return found;
}

/** A program trusted: its record, and the agent CLI it also is (trusted without this), if any. */
export interface TrustedProgram {
  record: TrustRecord;
  knownAgent: string | null;
}

/** `baton trust add <program>`: records the program's real path and sha256 in the home. */
export function trustProgram(trusting: TrustingProcess, program: string): TrustedProgram {
  const realPath = resolveProgram(program, trusting);
  const problem = runnerProblem(program, realPath, trusting);
  if (problem !== null) throw new BatonError('INVALID_ARGUMENT', `baton trust: refused: ${problem}`);
  const file = trustFile(trusting);
  const records = readTrustFile(file).filter((record) => record.path !== realPath);
  const record: TrustRecord = {
    path: realPath,
    sha256: fileSha256(realPath) ?? '',
    trustedAt: new Date().toISOString(),
  };
  writeTrustFile(file, [...records, record]);
  return { record, knownAgent: knownAgentAt(realPath) };
}

/** What `untrustProgram` removed: how many records, and the path it names when one. */
export interface Untrusted {
  removed: number;
  /** The real path of the program (else the absolute path given) when one record went. */
  path: string;
}

/** `baton trust rm <program>`: forgets a trusted program (by the path given or its real path). */
export function untrustProgram(trusting: TrustingProcess, program: string): Untrusted {
  const file = trustFile(trusting);
  const records = readTrustFile(file);
  const cwd = trusting.cwd ?? process.cwd();
  const absolute = path.resolve(cwd, program);
  const located = locateProgram(program, { cwd, pathEnv: pathOf(trusting) });
  const real = located === null ? null : realPathOrNull(located);
  const kept = records.filter((record) => record.path !== absolute && record.path !== real);
  if (kept.length === records.length) {
    throw new BatonError(
      'INVALID_ARGUMENT',
      `baton trust rm: ${JSON.stringify(program)} is not trusted in ${file} (see baton trust list)`,
    );
  }
  writeTrustFile(file, kept);
  return { removed: records.length - kept.length, path: real ?? absolute };
}

/** A trusted program's record, and whether its file is as it was trusted. */
export type TrustState = TrustRecord & { state: 'ok' | 'missing' | 'changed' };

/** `baton trust list`: what is trusted, from the home and BATON_TRUSTED_AGENTS, and whether it changed. */
export function listTrust(trusting: TrustingProcess): {
  file: string;
  programs: TrustState[];
  environment: string[];
} {
  const file = trustFile(trusting);
  const programs = readTrustFile(file).map((record): TrustState => {
    const now = fileSha256(record.path);
    const state = now === null ? 'missing' : now === record.sha256 ? 'ok' : 'changed';
    return { ...record, state };
  });
  const environment = ((trusting.env ?? process.env)[TRUSTED_AGENTS_VARIABLE] ?? '')
    .split(path.delimiter)
    .filter((entry) => entry !== '');
  return { file, programs, environment };
}

export { TRUSTED_AGENTS_VARIABLE };
