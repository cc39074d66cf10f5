/**
 * Whether a file is a genuine agent CLI: part of the npm package a profile names, or where the
 * CLI's own installer puts it under the user's home. A name proves nothing (a shell script or a copy
 * of a shell can be called `claude`); where the file lives, in a package the user installed, does.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { AgentProfileName } from '../core/plan/types.js';
import { AGENT_PROFILES } from './agent-profiles/choose-profile.js';

/** Folders walked up from the file looking for its package.json (`bundle/`, `bin/`, `dist/esm/`…). */
const MAX_PACKAGE_DEPTH = 6;

const packageNames = new Map<string, string | null>();

/** The name in `folder/package.json`, or null (none, no name, unreadable). Cached per folder. */
function packageNameIn(folder: string): string | null {
  const cached = packageNames.get(folder);
  if (cached !== undefined) return cached;
  let name: string | null = null;
  try {
    const parsed = JSON.parse(fs.readFileSync(path.join(folder, 'package.json'), 'utf8')) as {
      name?: unknown;
    };
    if (typeof parsed?.name === 'string') name = parsed.name;
  } catch {
    name = null;
  }
  packageNames.set(folder, name);
  return name;
}

/** The npm package that holds `realPath`: the nearest package.json with a name, looking up. */
function owningPackage(realPath: string): string | null {
  let folder = path.dirname(realPath);
  for (let depth = 0; depth < MAX_PACKAGE_DEPTH; depth += 1) {
    const name = packageNameIn(folder);
    if (name !== null) return name;
    const parent = path.dirname(folder);
    if (parent === folder) return null;
    folder = parent;
  }
  return null;
}

/**
 * The profile whose CLI `realPath` (a real path: no symlinks) is, or null when it is none of
 * them. `home` is the user's home folder, for CLIs installed by their own installer.
 */
export function knownAgentAt(realPath: string, home: string = os.homedir()): AgentProfileName | null {
  const pkg = owningPackage(realPath);
  for (const profile of Object.values(AGENT_PROFILES)) {
    if (pkg !== null && profile.installs.packages.includes(pkg)) return profile.name;
    for (const folder of profile.installs.homeFolders ?? []) {
      const root = path.join(home, folder);
      if (realPath.startsWith(`${root}/`)) return profile.name;
    }
  }
  return null;
}
