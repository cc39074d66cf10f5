import { BatonError } from './errors.js';

/**
 * The payload limit: an event's payload (`baton send --data`, `Baton.send`, MCP `send_event`, the
 * console's forms and capability URLs) and a result a person gives a step (`baton resolve
 * --result`, MCP `resolve_step`, the console's resolve) are at most this many bytes of UTF-8 text
 * as given. Whatever is over it is refused before it is parsed or stored: it would be stored as the
 * step's result and its event, and printed by every read of the run.
 */
export const MAX_PAYLOAD_BYTES = 1024 * 1024;

/** `the payload limit of 1 MiB (1048576 bytes)`: how every message names it. */
export const PAYLOAD_LIMIT_TEXT = `the payload limit of 1 MiB (${MAX_PAYLOAD_BYTES} bytes)`;

/** The number of bytes `text` has in UTF-8, counted without encoding it. */
export function utf8Length(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x80) bytes += 1;
    else if (code < 0x800) bytes += 2;
    else if (code >= 0xd800 && code <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      // A surrogate pair is one character of four bytes; a lone surrogate is encoded as U+FFFD (3).
      if (next >= 0xdc00 && next <= 0xdfff) {
        bytes += 4;
        i++;
      } else bytes += 3;
    } else bytes += 3;
  }
  return bytes;
}

/**
 * The refusal of a payload of `bytes` bytes (`atLeast`: that many were read, and there are more);
 * `where` names it (`--data @big.json`, `data`, `result`).
 */
export function payloadTooLarge(where: string, bytes: number, atLeast = false): BatonError {
  return new BatonError(
    'INVALID_ARGUMENT',
    `${where}: ${atLeast ? 'at least ' : ''}${bytes} bytes, more than ${PAYLOAD_LIMIT_TEXT}: send less (keep bulk in a file the steps read, and send its path); nothing was stored`,
  );
}

/** Throws the refusal when `text` is over the payload limit; `where` names it in the message. */
export function checkPayloadSize(text: string, where: string): void {
  // Every UTF-16 unit is at most three bytes: short text needs no count.
  if (text.length * 3 <= MAX_PAYLOAD_BYTES) return;
  const bytes = utf8Length(text);
  if (bytes > MAX_PAYLOAD_BYTES) throw payloadTooLarge(where, bytes);
}

/**
 * `bytes` as UTF-8 text, or null when they are not valid UTF-8: bytes that are not are refused, as
 * a plan file's are, rather than silently replaced by U+FFFD. A leading byte order mark is dropped.
 */
export function strictUtf8(bytes: Uint8Array): string | null {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return null;
  }
}
