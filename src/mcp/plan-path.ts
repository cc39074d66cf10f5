import { realpath } from 'node:fs/promises';
import { isAbsolute, relative, resolve, sep } from 'node:path';
import { BatonError } from '../core/errors.js';
import { PlanInvalidError, type PlanIssue } from '../core/plan/issues.js';
import type { Plan } from '../core/plan/types.js';
import { loadPlanFile } from '../workflow/load-plan-file.js';

/**
 * A plan file a tool is given by `path` (validate_plan, propose, run, schedule_add,
 * schedule_update). A host's model may be steered by text it read, so a path is not trusted to
 * name a plan: it must lie inside the project or the Baton home, and what a file holds is never
 * quoted back unless it is a plan.
 *
 * - The project is the folder `baton mcp` was started in (hosts start a project's server there);
 *   the home is the server's Baton home (`--home`, BATON_HOME or the search). A path is resolved
 *   against the project, and refused before anything is read when it names a place outside both
 *   (`../.env`, `/etc/passwd`), then again when its real path (symbolic links followed) is
 *   outside them: a link in the project to `~/.ssh/id_ed25519` is refused as the key itself.
 * - A file that is not a plan document (a mapping with `steps`: `.env`, a key, any YAML or JSON
 *   that is something else) is refused with the kind of problem and, for a syntax error, its line
 *   and column, never its text: parse and schema messages quote what they read.
 */

/** Where a plan given by path may be: the server's folder and its Baton home. */
export interface PlanFolders {
  project: string;
  home: string;
}

const NOT_QUOTED = 'a file given by path is not quoted over MCP: open it to see what it holds';

/** The plan in the file `given` names, as `loadPlanFile` loads it; refused outside `folders`. */
export async function loadProjectPlanFile(
  given: string,
  folders: PlanFolders,
): Promise<{ plan: Plan; planPath: string }> {
  const real = await realPathInside(given, folders);
  try {
    return { plan: (await loadPlanFile(real, given)).plan, planPath: given };
  } catch (error) {
    if (error instanceof PlanInvalidError && !error.planDocument) throw withoutFileText(error, given);
    throw error;
  }
}

/** The real path of `given`, which must be inside the project or the home, as written and as it resolves. */
async function realPathInside(given: string, folders: PlanFolders): Promise<string> {
  const wanted = resolve(folders.project, given);
  const roots = await Promise.all([folders.project, folders.home].map(realFolder));
  if (!roots.some((root) => within(root.given, wanted) || within(root.real, wanted)))
    throw outside(given, folders, 'is outside');
  let real: string;
  try {
    real = await realpath(wanted);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR')
      throw new BatonError('PLAN_NOT_FOUND', `plan file not found: ${given}`, { cause: error });
    throw new BatonError('PLAN_INVALID', `${given}: cannot read the plan file (${code ?? 'error'})`, {
      cause: error,
    });
  }
  if (!roots.some((root) => within(root.real, real)))
    throw outside(given, folders, 'is a symbolic link (or inside one) to a file outside');
  return real;
}

async function realFolder(folder: string): Promise<{ given: string; real: string }> {
  const given = resolve(folder);
  // A home not made yet has no real path: it holds nothing to read either.
  return { given, real: await realpath(given).catch(() => given) };
}

function within(folder: string, path: string): boolean {
  const rel = relative(folder, path);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));
}

function outside(given: string, folders: PlanFolders, what: string): BatonError {
  return new BatonError(
    'PATH_ESCAPE',
    `path ${given}: ${what} the folders a plan is read from over MCP, the project ${folders.project} (where baton mcp was started) and the Baton home ${folders.home}: give a plan file inside one of them, or the plan's text in "plan"`,
  );
}

/** The refusal of a file that is not a plan: the kind of problem and where, none of its text. */
function withoutFileText(error: PlanInvalidError, given: string): PlanInvalidError {
  const format = /\.json$/i.test(given) ? 'JSON' : 'YAML';
  const syntax = error.issues.filter((issue) => issue.line !== undefined);
  const issues: PlanIssue[] =
    syntax.length > 0
      ? syntax.slice(0, 5).map((issue) => ({
          path: '',
          line: issue.line!,
          column: issue.column ?? 1,
          problem: `not valid ${format} here (${NOT_QUOTED})`,
        }))
      : [
          {
            path: '',
            problem: `not a Baton plan: a plan is a mapping with at least name and steps (${NOT_QUOTED})`,
          },
        ];
  return new PlanInvalidError(given, issues);
}
