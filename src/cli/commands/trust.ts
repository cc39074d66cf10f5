import {
  listTrust,
  TRUSTED_AGENTS_VARIABLE,
  trustProgram,
  untrustProgram,
} from '../../runtime/commands/trust-commands.js';
import { resolveHome } from '../../runtime/home.js';
import { EXIT } from '../exit-codes.js';
import { printJson } from '../format.js';
import type { GlobalOptions } from '../global-options.js';

/** `baton trust add <program>`: record the program's real path and sha256 in the Baton home. */
export async function trustAddCommand(program: string, options: GlobalOptions): Promise<number> {
  const { record, knownAgent } = trustProgram({ home: resolveHome(options) }, program);
  if (options.json) printJson(record);
  else {
    process.stdout.write(
      `trusted ${record.path} (sha256 ${record.sha256.slice(0, 16)}…)${knownAgent ? `; it is also the ${knownAgent} CLI, trusted without this` : ''}\n` +
        'if the file changes, Baton refuses it until you trust it again\n',
    );
  }
  return EXIT.ok;
}

/** `baton trust rm <program>`: forget a trusted program (by the path given or its real path). */
export async function trustRmCommand(program: string, options: GlobalOptions): Promise<number> {
  const { removed, path } = untrustProgram({ home: resolveHome(options) }, program);
  if (!options.json) process.stdout.write(`no longer trusted: ${removed === 1 ? path : program}\n`);
  else printJson({ removed });
  return EXIT.ok;
}

/** `baton trust list`: what is trusted, from the home and BATON_TRUSTED_AGENTS, and whether it changed. */
export async function trustListCommand(options: GlobalOptions): Promise<number> {
  const { file, programs, environment } = listTrust({ home: resolveHome(options) });
  if (options.json) {
    printJson({ file, programs, environment });
    return EXIT.ok;
  }
  const out: string[] = [];
  if (programs.length === 0 && environment.length === 0) {
    out.push(`no programs trusted (${file}); known agent CLIs installed from npm need none`);
  }
  for (const record of programs) {
    const note =
      record.state === 'ok'
        ? ''
        : record.state === 'missing'
          ? '  ✗ missing'
          : '  ✗ changed: refused until trusted again';
    out.push(`${record.path}  sha256 ${record.sha256.slice(0, 16)}…  since ${record.trustedAt}${note}`);
  }
  for (const entry of environment) out.push(`${entry}  (${TRUSTED_AGENTS_VARIABLE})`);
  process.stdout.write(`${out.join('\n')}\n`);
  return EXIT.ok;
}
