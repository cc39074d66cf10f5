import { BatonError } from '../core/errors.js';
import { SCHEMA_APP_ID } from './schema-tables.js';

export { SCHEMA_APP_ID };

/**
 * The schema version `baton_meta` records (`where` names the database in messages), both dialects'
 * migration runners: damaged metadata is refused, the database left untouched.
 */
export function recordedSchemaVersion(
  where: string,
  app: string | undefined,
  version: string | undefined,
): number {
  if (app !== SCHEMA_APP_ID || version === undefined || !/^\d+$/.test(version)) {
    throw new BatonError(
      'DB_CORRUPT',
      `${where}: the Baton metadata is damaged (app=${app ?? 'missing'}, schema_version=${version ?? 'missing'}).`,
    );
  }
  return Number(version);
}

/** Refuses a database newer than this code (`latest`), before anything in it is changed. */
export function refuseNewerSchema(where: string, version: number, latest: number): void {
  if (version <= latest) return;
  throw new BatonError(
    'DB_TOO_NEW',
    `${where} has schema version ${version} but this Baton knows only up to ${latest}. Upgrade Baton; the database was left untouched.`,
  );
}
