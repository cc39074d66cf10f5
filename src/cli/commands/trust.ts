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
import { resolveHome } from '../../runtime/home.js';
import { EXIT } from '../exit-codes.js';
import { printJson } from '../format.js';
import type { GlobalOptions } from '../global-options.js';

/** Names of programs that run other programs or text as code: trusting one would trust everything. */
const RUNNERS: readonly string[] = [
  ...SHELL_NAMES,
  ...Object.keys(REFUSED_PROGRAMS),
  ...Object.keys(WRAPPERS),
  ...Object.keys(INTERPRETERS),
];

function trustFile(options: GlobalOptions): string {
  return path.join(resolveHome(options), TRUST_FILE);
}

/** The real path of `program` as the policy finds it: a path from here, else a PATH search. */
function resolveProgram(program: string): string {
  const located = locateProgram(program, {
    cwd: process.cwd(),
    pathEnv: process.env.PATH ?? DEFAULT_EXEC_PATH,
  });
  const real = located === null ? null : realPathOrNull(located);
  if (real === null) {
    const where = program.includes('/') ? path.resolve(program) : `on PATH (${process.env.PATH ?? ''})`;
    throw new BatonError(
      'INVALID_ARGUMENT',
      `baton trust: ${JSON.stringify(program)} not found ${where}${hereHint(program)}`,
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
function hereHint(program: string): string {
  if (program.includes('/') || !fs.existsSync(program)) return '';
  return `; a name without a slash is looked up on PATH only. The file in this folder is ./${program}: baton trust add ./${program}`;
}

/**
 * Why `realPath` must not be trusted, or null: a shell, an interpreter or a wrapper (by its names or
 * because its bytes are those of one installed here), which would make any text run as code.
 */
function runnerProblem(given: string, realPath: string): string | null {
  const names = [...programKeys(given), ...programKeys(realPath)];
  const named = names.find((name) => RUNNERS.includes(name));
  if (named !== undefined) {
    return `${realPath} is ${named}, which runs other programs or text as code; trust the script it runs instead (baton trust add ./my-agent.py)`;
  }
  const size = fs.statSync(realPath).size;
  const hash = fileSha256(realPath);
  for (const runner of installedRunners()) {
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
function installedRunners(): Set<string> {
  const found = new Set<string>();
  try {
    for (const line of fs.readFileSync('/etc/shells', 'utf8').split('\n')) {
      const real = line.startsWith('/') ? realPathOrNull(line.trim()) : null;
      if (real !== null) found.add(real);
    }
  } catch {
    // No /etc/shells: the PATH search below still finds them.
  }
  const pathEnv = process.env.PATH ?? DEFAULT_EXEC_PATH;
  for (const name of [...SHELL_NAMES, ...Object.keys(INTERPRETERS), 'python3', 'perl', 'env']) {
    const located = locateProgram(name, { cwd: '/', pathEnv });
    const real = located === null ? null : realPathOrNull(located);
    if (real !== null) found.add(real);
  }
  return found;
}

/** `baton trust add <program>`: record the program's real path and sha256 in the Baton home. */
export async function trustAddCommand(program: string, options: GlobalOptions): Promise<number> {
  const realPath = resolveProgram(program);
  const problem = runnerProblem(program, realPath);
  if (problem !== null) throw new BatonError('INVALID_ARGUMENT', `baton trust: refused: ${problem}`);
  const file = trustFile(options);
  const records = readTrustFile(file).filter((record) => record.path !== realPath);
  const record: TrustRecord = {
    path: realPath,
    sha256: fileSha256(realPath) ?? '',
    trustedAt: new Date().toISOString(),
  };
  writeTrustFile(file, [...records, record]);
  if (options.json) printJson(record);
  else {
    const known = knownAgentAt(realPath);
    process.stdout.write(
      `trusted ${realPath} (sha256 ${record.sha256.slice(0, 16)}…)${known ? `; it is also the ${known} CLI, trusted without this` : ''}\n` +
        'if the file changes, Baton refuses it until you trust it again\n',
    );
  }
  return EXIT.ok;
}

/** `baton trust rm <program>`: forget a trusted program (by the path given or its real path). */
export async function trustRmCommand(program: string, options: GlobalOptions): Promise<number> {
  const file = trustFile(options);
  const records = readTrustFile(file);
  const absolute = path.resolve(program);
  const located = locateProgram(program, {
    cwd: process.cwd(),
    pathEnv: process.env.PATH ?? DEFAULT_EXEC_PATH,
  });
  const real = located === null ? null : realPathOrNull(located);
  const kept = records.filter((record) => record.path !== absolute && record.path !== real);
  if (kept.length === records.length) {
    throw new BatonError(
      'INVALID_ARGUMENT',
      `baton trust rm: ${JSON.stringify(program)} is not trusted in ${file} (see baton trust list)`,
    );
  }
  writeTrustFile(file, kept);
  if (!options.json)
    process.stdout.write(
      `no longer trusted: ${records.length - kept.length === 1 ? (real ?? absolute) : program}\n`,
    );
  else printJson({ removed: records.length - kept.length });
  return EXIT.ok;
}

/** `baton trust list`: what is trusted, from the home and BATON_TRUSTED_AGENTS, and whether it changed. */
export async function trustListCommand(options: GlobalOptions): Promise<number> {
  const file = trustFile(options);
  const records = readTrustFile(file).map((record) => {
    const now = fileSha256(record.path);
    const state = now === null ? 'missing' : now === record.sha256 ? 'ok' : 'changed';
    return { ...record, state };
  });
  const fromEnv = (process.env[TRUSTED_AGENTS_VARIABLE] ?? '')
    .split(path.delimiter)
    .filter((entry) => entry !== '');
  if (options.json) {
    printJson({ file, programs: records, environment: fromEnv });
    return EXIT.ok;
  }
  const out: string[] = [];
  if (records.length === 0 && fromEnv.length === 0) {
    out.push(`no programs trusted (${file}); known agent CLIs installed from npm need none`);
  }
  for (const record of records) {
    const note =
      record.state === 'ok'
        ? ''
        : record.state === 'missing'
          ? '  ✗ missing'
          : '  ✗ changed: refused until trusted again';
    out.push(`${record.path}  sha256 ${record.sha256.slice(0, 16)}…  since ${record.trustedAt}${note}`);
  }
  for (const entry of fromEnv) out.push(`${entry}  (${TRUSTED_AGENTS_VARIABLE})`);
  process.stdout.write(`${out.join('\n')}\n`);
  return EXIT.ok;
}
