import { realpathSync } from 'node:fs';
import { isAbsolute, relative, resolve, sep } from 'node:path';

/**
 * A declared output as the workspace checks take it: the skill accepts an absolute path inside the
 * workspace, Baton's checks want it relative. `path` is the relative form of an absolute path inside
 * the workspace (lexically, under its given or its real path), else the declaration as written: an
 * absolute path outside stays absolute and is refused by the check, named as declared.
 */
interface LegacyOutput {
  declared: string;
  path: string;
}

export function legacyOutputs(workspace: string, declared: readonly string[]): LegacyOutput[] {
  const roots = [resolve(workspace)];
  try {
    roots.push(realpathSync(workspace));
  } catch {
    // A workspace that does not exist: every output is missing anyway.
  }
  return declared.map((output) => {
    if (!isAbsolute(output)) return { declared: output, path: output };
    for (const root of roots) {
      const inside = relative(root, resolve(output));
      if (inside !== '' && inside !== '..' && !inside.startsWith(`..${sep}`) && !isAbsolute(inside))
        return { declared: output, path: inside.split(sep).join('/') };
    }
    return { declared: output, path: output };
  });
}
