import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { TriggerSource } from '../../core/triggers/trigger-rules.js';

/**
 * Whether a delivery comes from the sender its trigger names, before anything is read from its
 * body or stored: each source's signature over the raw bytes, compared in constant time. What it
 * answers names the header at fault, never the signature or the secret.
 */

/** Slack's and Stripe's timestamps older (or newer) than this are refused: a replayed request. */
export const DELIVERY_TOLERANCE_MS = 5 * 60_000;

/** The headers the generic sources read. */
export const HMAC_HEADER = 'x-baton-signature-256';
export const DELIVERY_HEADER = 'x-baton-delivery';
export const EVENT_HEADER = 'x-baton-event';

export type Headers = Readonly<Record<string, string | string[] | undefined>>;

export type Verified = { ok: true; deliveryId: string | null; type: string } | { ok: false; reason: string };

export function verifyDelivery(
  source: TriggerSource,
  secret: string,
  headers: Headers,
  raw: Buffer,
  now: number,
): Verified {
  switch (source) {
    case 'github': {
      const signature = header(headers, 'x-hub-signature-256');
      if (signature === null) return refused('no X-Hub-Signature-256 header');
      if (!sameHex(prefixed(signature, 'sha256='), hmac(secret, raw)))
        return refused('X-Hub-Signature-256 does not match the body');
      return {
        ok: true,
        deliveryId: header(headers, 'x-github-delivery'),
        type: header(headers, 'x-github-event') ?? '',
      };
    }
    case 'slack': {
      const timestamp = header(headers, 'x-slack-request-timestamp');
      const signature = header(headers, 'x-slack-signature');
      if (timestamp === null || signature === null)
        return refused('no X-Slack-Request-Timestamp or X-Slack-Signature header');
      const stale = staleness(timestamp, now);
      if (stale !== null) return refused(`X-Slack-Request-Timestamp ${stale}`);
      const base = Buffer.concat([Buffer.from(`v0:${timestamp}:`), raw]);
      if (!sameHex(prefixed(signature, 'v0='), hmac(secret, base)))
        return refused('X-Slack-Signature does not match the body');
      return { ok: true, deliveryId: null, type: '' };
    }
    case 'stripe': {
      const signature = header(headers, 'stripe-signature');
      if (signature === null) return refused('no Stripe-Signature header');
      const parts = signature.split(',').map((part) => part.trim().split('='));
      const timestamp = parts.find(([key]) => key === 't')?.[1];
      const signatures = parts.filter(([key]) => key === 'v1').map(([, value]) => value ?? '');
      if (timestamp === undefined || signatures.length === 0)
        return refused('Stripe-Signature has no t= or no v1= signature');
      const stale = staleness(timestamp, now);
      if (stale !== null) return refused(`Stripe-Signature timestamp ${stale}`);
      const expected = hmac(secret, Buffer.concat([Buffer.from(`${timestamp}.`), raw]));
      // Every v1 is compared (a secret being rolled signs twice), whichever matches.
      if (!signatures.map((given) => sameHex(given, expected)).includes(true))
        return refused('Stripe-Signature does not match the body');
      return { ok: true, deliveryId: null, type: '' };
    }
    case 'hmac': {
      const signature = header(headers, HMAC_HEADER);
      if (signature === null) return refused('no X-Baton-Signature-256 header');
      if (!sameHex(prefixed(signature, 'sha256='), hmac(secret, raw)))
        return refused('X-Baton-Signature-256 does not match the body');
      return genericDelivery(headers);
    }
    case 'bearer': {
      const authorization = header(headers, 'authorization');
      const token = authorization?.match(/^Bearer\s+(.+)$/i)?.[1]?.trim();
      if (token === undefined) return refused('no Authorization: Bearer header');
      // Digests of equal length: the comparison takes the same time whatever the token's length.
      if (!timingSafeEqual(sha256(Buffer.from(token)), sha256(Buffer.from(secret))))
        return refused("the bearer token is not the trigger's");
      return genericDelivery(headers);
    }
  }
}

/** A hex SHA-256 of the text: a delivery id from a body, a run id from a long delivery id. */
export function sha256Hex(data: string | Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}

function genericDelivery(headers: Headers): Verified {
  return {
    ok: true,
    deliveryId: header(headers, DELIVERY_HEADER),
    type: header(headers, EVENT_HEADER) ?? '',
  };
}

function refused(reason: string): Verified {
  return { ok: false, reason };
}

function header(headers: Headers, name: string): string | null {
  const value = headers[name];
  const first = Array.isArray(value) ? value[0] : value;
  return first === undefined || first === '' ? null : first;
}

function prefixed(value: string, prefix: string): string {
  return value.startsWith(prefix) ? value.slice(prefix.length) : '';
}

function hmac(secret: string, data: Buffer): Buffer {
  return createHmac('sha256', secret).update(data).digest();
}

function sha256(data: Buffer): Buffer {
  return createHash('sha256').update(data).digest();
}

/** Whether hex text is the expected digest, in time independent of where they differ. */
function sameHex(given: string, expected: Buffer): boolean {
  if (!/^[0-9a-fA-F]{64}$/.test(given)) return false;
  return timingSafeEqual(Buffer.from(given, 'hex'), expected);
}

/** Why a timestamp in seconds is outside the tolerance, or null when it is within it. */
function staleness(seconds: string, now: number): string | null {
  if (!/^\d{1,12}$/.test(seconds)) return 'is not a time in seconds';
  const skew = now - Number(seconds) * 1000;
  if (skew > DELIVERY_TOLERANCE_MS) return 'is older than 5 minutes: a replayed request';
  if (skew < -DELIVERY_TOLERANCE_MS) return 'is more than 5 minutes ahead';
  return null;
}
