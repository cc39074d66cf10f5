import { mkdirSync, realpathSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, isAbsolute, parse, relative, resolve, sep } from 'node:path';
import { BatonError } from '../core/errors.js';

/** Where a run's workspace comes from, for `resolveRunWorkspace`. */
interface RunWorkspaceOptions {
  /** The plan's `workspace` field, relative to the plan file's folder. */
  planWorkspace?: string | undefined;
  /** The plan file, when there is one: named in messages, and the base of a relative workspace. */
  planPath?: string | undefined;
  /** Overrides the plan's workspace; relative to the current directory. */
  workspace?: string | undefined;
  /** The one broad folder (see below) accepted as the workspace anyway. */
  allowWorkspace?: string | undefined;
  /** The Baton home, when known: folders above the one that holds it are broad. */
  batonHome?: string | undefined;
}

/**
 * The absolute workspace of a new run (not created yet: see createRunWorkspace). Refused unless named by
 * `allowWorkspace`: a broad folder an agent should not be let loose in, that is the root (`/`),
 * the user's home folder (its parents are not refused: tests and sandboxes often point HOME at a
 * folder inside the project), or a folder above the one that holds the
 * Baton home (with the home `/srv/app/.baton`: `/srv` and `/`, not `/srv/app`, the usual project
 * folder). `~` is not expanded (a shell expands it, Baton does not), so a workspace starting with
 * `~` is refused rather than becoming a folder named `~`.
 */
export function resolveRunWorkspace(options: RunWorkspaceOptions): string {
  const given = options.workspace ?? options.planWorkspace;
  const where =
    options.workspace !== undefined
      ? `workspace ${JSON.stringify(options.workspace)}`
      : `${options.planPath ?? 'plan'}: workspace`;
  if (given !== undefined && /^~(?:[\\/]|$)/.test(given)) {
    throw new BatonError(
      'CONFIG_INVALID',
      `${where}: ${JSON.stringify(given)} starts with "~", which Baton does not expand (a shell does): write the folder relative to the plan file, or as an absolute path`,
    );
  }
  const planDir = options.planPath ? dirname(resolve(options.planPath)) : process.cwd();
  const workspace =
    options.workspace !== undefined ? resolve(options.workspace) : resolve(planDir, given ?? '.');
  const broad = broadFolderReason(workspace, options.batonHome);
  if (broad !== undefined && !isAllowed(workspace, options.allowWorkspace)) {
    throw new BatonError(
      'CONFIG_INVALID',
      `${where}: ${workspace} is ${broad}: an agent working there can read and change far more than one project; use a folder of its own, or pass --allow-workspace ${workspace} (allowWorkspace in the API) if you mean it`,
    );
  }
  return workspace;
}

/** Creates the workspace if it is missing; refuses a path that is not a folder. */
export function createRunWorkspace(workspace: string): void {
  try {
    mkdirSync(workspace, { recursive: true });
  } catch (error) {
    throw new BatonError(
      'CONFIG_INVALID',
      `workspace ${workspace} cannot be created: ${(error as Error).message}`,
      { cause: error },
    );
  }
  if (!statSync(workspace).isDirectory())
    throw new BatonError('CONFIG_INVALID', `workspace ${workspace} is not a directory`);
}

/** Why `folder` is too broad to be a workspace, or undefined. Symlinks are compared resolved. */
function broadFolderReason(folder: string, batonHome: string | undefined): string | undefined {
  const candidates = [...new Set([folder, realFolder(folder)])];
  const userHome = homedir();
  const homes = [...new Set([resolve(userHome), realFolder(resolve(userHome))])];
  for (const candidate of candidates) {
    if (parse(candidate).root === candidate) return 'the root folder';
    if (homes.includes(candidate)) return 'your home folder';
    if (batonHome !== undefined) {
      const holder = dirname(resolve(batonHome));
      for (const home of new Set([holder, realFolder(holder)])) {
        if (isAbove(candidate, home)) {
          return `a folder above ${home}, which holds the Baton home`;
        }
      }
    }
  }
  return undefined;
}

function isAllowed(workspace: string, allowed: string | undefined): boolean {
  if (allowed === undefined) return false;
  const folder = resolve(allowed);
  return folder === workspace || realFolder(folder) === realFolder(workspace);
}

/** Whether `ancestor` is a folder strictly above `folder`. */
function isAbove(ancestor: string, folder: string): boolean {
  const path = relative(ancestor, folder);
  return path !== '' && path !== '..' && !path.startsWith(`..${sep}`) && !isAbsolute(path);
}

/** The folder with symlinks resolved, as far as it exists (a workspace may not exist yet). */
function realFolder(folder: string): string {
  try {
    return realpathSync.native(folder);
  } catch {
    const parent = dirname(folder);
    if (parent === folder) return folder;
    return resolve(realFolder(parent), relative(parent, folder));
  }
}
