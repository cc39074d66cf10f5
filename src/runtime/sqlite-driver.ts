/**
 * better-sqlite3's JavaScript as the `baton` launcher bundles it, offered to the SQLite store
 * (store/sqlite/sqlite-driver.ts), which uses it when it is the version installed beside the addon.
 */
export { type BundledSqliteDriver, offerSqliteDriver } from '../store/sqlite/sqlite-driver.js';
