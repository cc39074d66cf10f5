/**
 * The programs an operator trusted out of band to receive prompt text: `baton trust add <program>`
 * records the file's real path and sha256 in the Baton home (`trusted-programs.json`, mode 0600),
 * and BATON_TRUSTED_AGENTS names files for the environment-driven legacy path. A plan can trust
 * nothing: neither source is read from a plan.
 *
 * A recorded file whose content changed is refused until it is trusted again; a file named by
 * BATON_TRUSTED_AGENTS is trusted by path (the operator sets the variable for each process).
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { BatonError } from '../core/errors.js';

export const TRUST_FILE = 'trusted-programs.json';
/** Separates the files BATON_TRUSTED_AGENTS names, like PATH. */
export const TRUSTED_AGENTS_VARIABLE = 'BATON_TRUSTED_AGENTS';

export interface TrustRecord {
  /** The file's real path: no symlink, no `..`. */
  path: string;
  sha256: string;
  /** ISO 8601. */
  trustedAt: string;
}

type TrustVerdict =
  | { trusted: true; by: 'home' | 'environment' }
  | { trusted: false; changed?: { was: string; now: string } };

export interface TrustedPrograms {
  /** Whether the file at `realPath` (already resolved) may receive prompt text. */
  verdict(realPath: string): TrustVerdict;
  /** Where `baton trust add` records programs, or null (environment only). */
  readonly file: string | null;
}

/** The trust of a Baton home (null: none) and of BATON_TRUSTED_AGENTS in `env`. Read each call. */
export function trustedPrograms(
  home: string | null | undefined,
  env: Readonly<Record<string, string | undefined>> = process.env,
): TrustedPrograms {
  const file = home ? path.join(home, TRUST_FILE) : null;
  const records = file === null ? [] : readTrustFile(file);
  const fromEnv = environmentPaths(env);
  return {
    file,
    verdict(realPath) {
      if (fromEnv.has(realPath)) return { trusted: true, by: 'environment' };
      const record = records.find((entry) => entry.path === realPath);
      if (record === undefined) return { trusted: false };
      const now = fileSha256(realPath);
      if (now === record.sha256) return { trusted: true, by: 'home' };
      return { trusted: false, changed: { was: record.sha256, now: now ?? 'unreadable' } };
    },
  };
}

function environmentPaths(env: Readonly<Record<string, string | undefined>>): Set<string> {
  const paths = new Set<string>();
  for (const entry of (env[TRUSTED_AGENTS_VARIABLE] ?? '').split(path.delimiter)) {
    if (!entry.startsWith('/')) continue;
    try {
      paths.add(fs.realpathSync.native(entry));
    } catch {
      // A file that does not exist trusts nothing.
    }
  }
  return paths;
}

/** The records of a trust file; none when it does not exist. A damaged file is refused, never guessed at. */
export function readTrustFile(file: string): TrustRecord[] {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw new BatonError('CONFIG_INVALID', `${file}: cannot be read: ${(error as Error).message}`);
  }
  const damaged = (why: string) =>
    new BatonError(
      'CONFIG_INVALID',
      `${file}: ${why}; fix or delete the file, then trust your agents again with baton trust add <program>`,
    );
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw damaged('is not valid JSON');
  }
  const programs = (parsed as { programs?: unknown } | null)?.programs;
  if (!Array.isArray(programs)) throw damaged('has no "programs" list');
  return programs.map((entry, index) => {
    const record = entry as Partial<TrustRecord> | null;
    if (
      typeof record?.path !== 'string' ||
      !record.path.startsWith('/') ||
      typeof record.sha256 !== 'string' ||
      !/^[0-9a-f]{64}$/.test(record.sha256)
    ) {
      throw damaged(`programs[${index}] needs an absolute "path" and a "sha256" of 64 hex digits`);
    }
    return { path: record.path, sha256: record.sha256, trustedAt: String(record.trustedAt ?? '') };
  });
}

/** Writes the records atomically (a temporary file renamed over the old one), mode 0600. */
export function writeTrustFile(file: string, records: readonly TrustRecord[]): void {
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const temp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(temp, `${JSON.stringify({ version: 1, programs: records }, null, 2)}\n`, {
    mode: 0o600,
  });
  fs.renameSync(temp, file);
}

interface HashEntry {
  key: string;
  sha256: string;
}
const hashCache = new Map<string, HashEntry>();

/**
 * The sha256 of a file, or null when it cannot be read. Cached while the file's identity and times
 * stay the same (a native agent binary is 100+ MB; hashing it every attempt would cost seconds).
 */
export function fileSha256(file: string): string | null {
  let stat: fs.Stats;
  try {
    stat = fs.statSync(file);
  } catch {
    return null;
  }
  if (!stat.isFile()) return null;
  const key = `${stat.dev}:${stat.ino}:${stat.size}:${stat.mtimeMs}:${stat.ctimeMs}`;
  const cached = hashCache.get(file);
  if (cached?.key === key) return cached.sha256;
  const hash = createHash('sha256');
  let fd: number;
  try {
    fd = fs.openSync(file, 'r');
  } catch {
    return null;
  }
  try {
    const buffer = Buffer.allocUnsafe(1 << 20);
    for (;;) {
      const read = fs.readSync(fd, buffer, 0, buffer.length, null);
      if (read === 0) break;
      hash.update(buffer.subarray(0, read));
    }
  } finally {
    fs.closeSync(fd);
  }
  const sha256 = hash.digest('hex');
  hashCache.set(file, { key, sha256 });
  return sha256;
}
