/**
 * When a hook call is due, in SQL for both dialects and `baton check`'s idle read: written here once
 * (keep this module free of imports; the idle read bundles it). The `hook_deliveries` row is `d`.
 */

/**
 * The hook call `d` is owed at `now`: pending (the condition of the partial index
 * hook_deliveries_due), its time come, and leased to no worker whose lease still runs. `now` is
 * used twice: pass a parameter that binds by name or number (`@now`, `$1`), or bind it twice.
 */
export function hookCallDueSql(now: string): string {
  return `d.state = 'pending' AND d.due_at <= ${now} AND (d.lease_expires_at IS NULL OR d.lease_expires_at <= ${now})`;
}
