import { createHash, randomBytes } from 'node:crypto';
import { mkdir, open, readFile, rename, rm, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { ResultRef, StepOutcome } from '../core/failure.js';
import type { StepResult } from '../core/run-state.js';

/**
 * Small checkpoints: a step result larger than this (summary + value as JSON) is stored as a
 * content-addressed file under `<home>/artifacts/` and the run's state keeps only a reference and
 * the start of the summary, so a run's stored state stays small whatever its steps return.
 */
const RESULT_INLINE_MAX_BYTES = 64 * 1024;
/** The bytes of `{"summary":"","value":""}` around a summary and a string value. */
const BODY_BYTES = 25;
/** What stays of the summary of an offloaded result, for `status` and logs. */
const KEPT_SUMMARY_CHARS = 2000;

export function artifactPath(home: string, sha256: string): string {
  return join(home, 'artifacts', sha256.slice(0, 2), sha256);
}

/**
 * Whether an outcome is kept in the run's state as it is: anything but a successful result larger
 * than `maxInlineBytes` (summary + value as JSON) that is not offloaded yet.
 */
export function fitsInline(outcome: StepOutcome, maxInlineBytes = RESULT_INLINE_MAX_BYTES): boolean {
  if (!outcome.ok || outcome.resultRef) return true;
  // Texts that cannot reach the limit even escaped (JSON writes a code unit as at most 6 bytes,
  // `\u001f`): most results (a summary, and a string value), decided without building their JSON.
  const { value } = outcome;
  const valueLength = value === undefined ? 0 : typeof value === 'string' ? value.length : null;
  if (valueLength !== null && (outcome.summary.length + valueLength) * 6 + BODY_BYTES <= maxInlineBytes)
    return true;
  return Buffer.byteLength(resultBody(outcome)) <= maxInlineBytes;
}

function resultBody(outcome: Extract<StepOutcome, { ok: true }>): string {
  return JSON.stringify({
    summary: outcome.summary,
    ...(outcome.value === undefined ? {} : { value: outcome.value }),
  });
}

/** Moves a large successful result to the artifact store; anything else is returned as is. */
export async function offloadLargeResult(
  outcome: StepOutcome,
  home: string,
  maxInlineBytes = RESULT_INLINE_MAX_BYTES,
): Promise<StepOutcome> {
  if (!outcome.ok || fitsInline(outcome, maxInlineBytes)) return outcome;
  const body = resultBody(outcome);
  const size = Buffer.byteLength(body);
  const sha256 = createHash('sha256').update(body).digest('hex');
  await writeOnce(artifactPath(home, sha256), body);
  const { value: _value, ...rest } = outcome;
  return {
    ...rest,
    summary: `${outcome.summary.slice(0, KEPT_SUMMARY_CHARS)}${outcome.summary.length > KEPT_SUMMARY_CHARS ? '…' : ''}`,
    resultRef: { sha256, size },
  };
}

/** Whether any of `results` was offloaded (resolveResults would read it back). */
export function hasOffloadedResults(results: Record<string, StepResult>): boolean {
  for (const stepId in results) if (results[stepId]?.ref) return true;
  return false;
}

/** Results with their offloaded summary and value read back: templates and ctx.results see the whole. */
export async function resolveResults(
  results: Record<string, StepResult>,
  home: string,
): Promise<Record<string, StepResult>> {
  const resolved: Record<string, StepResult> = {};
  for (const [stepId, result] of Object.entries(results)) {
    resolved[stepId] = result.ref ? { ...result, ...(await readResult(home, result.ref)) } : result;
  }
  return resolved;
}

export async function readResult(
  home: string,
  ref: ResultRef,
): Promise<{ summary: string; value?: unknown }> {
  return JSON.parse(await readArtifact(home, ref)) as { summary: string; value?: unknown };
}

/**
 * How an effect result kept as an artifact appears in the effect table: `{ "$artifact": { sha256,
 * size } }`, the file holding the result's JSON (stores read the key for `baton gc`).
 */
const EFFECT_REF_KEY = '$artifact';

/**
 * The effect table keeps small rows by the same rule as step results: a `ctx.effect` (or write
 * tool) result whose JSON is over the limit is stored as a content-addressed file and the row holds
 * only its reference. A small result that looks like a reference is stored as a file too, so that
 * whatever looks like one in the table is one.
 */
export async function offloadEffectResult(
  result: unknown,
  home: string,
  maxInlineBytes = RESULT_INLINE_MAX_BYTES,
): Promise<unknown> {
  const body = JSON.stringify(result ?? null);
  const size = Buffer.byteLength(body);
  if (size <= maxInlineBytes && !isEffectRef(result)) return result;
  const sha256 = createHash('sha256').update(body).digest('hex');
  await writeOnce(artifactPath(home, sha256), body);
  return { [EFFECT_REF_KEY]: { sha256, size } };
}

/** An effect result as recorded, with a reference read back from its file (checked against its hash). */
export async function resolveEffectResult(stored: unknown, home: string): Promise<unknown> {
  if (!isEffectRef(stored)) return stored;
  return JSON.parse(await readArtifact(home, stored[EFFECT_REF_KEY])) as unknown;
}

function isEffectRef(value: unknown): value is { [EFFECT_REF_KEY]: ResultRef } {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const keys = Object.keys(value);
  if (keys.length !== 1 || keys[0] !== EFFECT_REF_KEY) return false;
  const ref = (value as Record<string, unknown>)[EFFECT_REF_KEY] as Partial<ResultRef> | null;
  return (
    typeof ref === 'object' &&
    ref !== null &&
    typeof ref.sha256 === 'string' &&
    /^[0-9a-f]{64}$/.test(ref.sha256) &&
    typeof ref.size === 'number'
  );
}

async function readArtifact(home: string, ref: ResultRef): Promise<string> {
  const text = await readFile(artifactPath(home, ref.sha256), 'utf8');
  if (createHash('sha256').update(text).digest('hex') !== ref.sha256) {
    throw new Error(
      `artifact ${ref.sha256} under ${home}/artifacts is damaged (its content does not match its hash)`,
    );
  }
  return text;
}

/** Content-addressed: an existing file already holds these bytes. Written whole (temp, fsync, rename), 0600. */
async function writeOnce(path: string, body: string): Promise<void> {
  if (
    await stat(path).then(
      () => true,
      () => false,
    )
  )
    return;
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  const temp = `${path}.${randomBytes(6).toString('hex')}.tmp`;
  const handle = await open(temp, 'w', 0o600);
  try {
    await handle.writeFile(body);
    await handle.sync();
  } finally {
    await handle.close();
  }
  try {
    await rename(temp, path);
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
}
