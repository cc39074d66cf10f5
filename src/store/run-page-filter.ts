import type { RunPageQuery } from './store.js';

/** The default and largest page of `listRunPage`. */
const RUN_PAGE_DEFAULT_LIMIT = 50;
const RUN_PAGE_MAX_LIMIT = 500;

/**
 * The WHERE clauses and values of a run page's filters (all but status), the same in both dialects
 * apart from how a parameter is written and how a substring is found. Only fixed SQL text is built
 * here; every value is a parameter. Built per query, so the planner sees only the filters in use
 * (and can use runs_by_status for a status filter).
 */
export function runPageFilter(
  query: Pick<RunPageQuery, 'planName' | 'createdFrom' | 'createdBefore' | 'idContains' | 'labels'>,
  dialect: 'sqlite' | 'postgres',
  /** The run row's alias (`r.`) and the schema of the labels table (`baton.`), when the query needs them. */
  names: { run?: string; schema?: string } = {},
): { where: string[]; values: unknown[]; bind: (value: unknown) => string } {
  const run = names.run ?? '';
  const values: unknown[] = [];
  /** Adds a value; returns its placeholder (SQLite binds them in the order the text names them). */
  const bind = (value: unknown) => {
    values.push(value);
    return dialect === 'sqlite' ? '?' : `$${values.length}`;
  };
  const where: string[] = [];
  const add = (clause: (p: string) => string, value: unknown) => where.push(clause(bind(value)));
  if (query.planName !== undefined) add((p) => `${run}plan_name = ${p}`, query.planName);
  if (query.createdFrom !== undefined) add((p) => `${run}created_at >= ${p}`, query.createdFrom);
  if (query.createdBefore !== undefined) add((p) => `${run}created_at < ${p}`, query.createdBefore);
  if (query.idContains !== undefined && query.idContains !== '')
    add(
      (p) => (dialect === 'sqlite' ? `instr(${run}id, ${p}) > 0` : `strpos(${run}id, ${p}) > 0`),
      query.idContains,
    );
  // One seek of run_labels_by_label per label.
  for (const [key, value] of Object.entries(query.labels ?? {}))
    where.push(
      `EXISTS (SELECT 1 FROM ${names.schema ?? ''}run_labels lb WHERE lb.key = ${bind(key)} AND lb.value = ${bind(value)} AND lb.run_id = ${run}id)`,
    );
  return { where, values, bind };
}

/** `limit` and `offset` of a page, bounded. */
export function runPageBounds(query: RunPageQuery): { limit: number; offset: number } {
  const limit = Math.min(Math.max(1, Math.floor(query.limit ?? RUN_PAGE_DEFAULT_LIMIT)), RUN_PAGE_MAX_LIMIT);
  const offset = Math.max(0, Math.floor(query.offset ?? 0));
  return { limit, offset };
}
