import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * The token of a capability URL (a waiting step's, wait-urls.ts; a blocked step's, blocked-urls.ts;
 * a held tool call's, tool-urls.ts):
 * the seq of the event its capability is bound to (the `step.waiting` that started the wait, the
 * event that blocked the step), 8 bytes, then HMAC-SHA256(key, kind, run, step, that seq, action),
 * 32 bytes, URL-safe base64 (54 characters). The URL carries everything its MAC covers, so a token
 * is checked from the URL alone, before anything is read: a wrong token, an unknown run and an
 * unknown step cost the same work and read nothing, and only a token the key made leads to a
 * lookup, which then asks whether that seq is still the step's wait or block (single use).
 */

/** What a token is bound to besides its seq. `kind` (`baton-wait`, `baton-blocked`, `baton-tool`): one never passes for another. */
export interface CapabilityFields {
  kind: 'baton-wait' | 'baton-blocked' | 'baton-tool';
  runId: string;
  stepId: string;
  action: string;
}

const SEQ_BYTES = 8;
const MAC_BYTES = 32;
const TOKEN_BYTES = SEQ_BYTES + MAC_BYTES;

function macOf(key: Buffer, fields: CapabilityFields, seq: number): Buffer {
  return createHmac('sha256', key)
    .update([fields.kind, fields.runId, fields.stepId, seq, fields.action].join('\0'))
    .digest();
}

/** The token of `fields` bound to the event at `seq` (a non-negative integer). */
export function capabilityToken(key: Buffer, fields: CapabilityFields, seq: number): string {
  const bytes = Buffer.alloc(TOKEN_BYTES);
  bytes.writeBigUInt64BE(BigInt(seq));
  macOf(key, fields, seq).copy(bytes, SEQ_BYTES);
  return bytes.toString('base64url');
}

/**
 * The seq `offered` is bound to, when it is a token `key` made for `fields`; else null. Always one
 * HMAC and one constant-time comparison of 32 bytes, whatever is offered (a token of the wrong
 * length is compared as one of seq 0 that cannot match).
 */
export function capabilitySeq(key: Buffer, fields: CapabilityFields, offered: string): number | null {
  const bytes = Buffer.from(offered, 'base64url');
  // Node skips characters that are not base64url: only the canonical text of 40 bytes is a token.
  const wellFormed = bytes.length === TOKEN_BYTES && bytes.toString('base64url') === offered;
  const given = wellFormed ? bytes : Buffer.alloc(TOKEN_BYTES);
  const seq = given.readBigUInt64BE();
  const safeSeq = seq <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(seq) : 0;
  const same = timingSafeEqual(macOf(key, fields, safeSeq), given.subarray(SEQ_BYTES));
  return same && wellFormed && safeSeq === Number(seq) ? safeSeq : null;
}
