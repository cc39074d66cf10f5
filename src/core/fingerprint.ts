import type { FailureClass } from './failure.js';

/**
 * Reduces a failure message to its stable shape so that "the same failure again" is recognised
 * even when timestamps, numbers, paths of temp files or hex ids differ between attempts.
 */
export function normaliseFailureMessage(message: string): string {
  return message
    .toLowerCase()
    .replace(/\b\d{4}-\d{2}-\d{2}[t ][\d:.]+z?\b/g, '<time>')
    .replace(/\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/g, '<uuid>')
    .replace(/\b0x[0-9a-f]+\b|\b[0-9a-f]{12,}\b/g, '<hex>')
    .replace(/\/tmp\/[^\s'"]+/g, '<tmp>')
    .replace(/\d+/g, '<n>')
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, 500);
}

/** FNV-1a, 32 bit, as 8 hex digits: pure, fast, and stable across processes and machines. */
function fnv1a(text: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash.toString(16).padStart(8, '0');
}

/** The same step failing with the same class and the same normalised message has the same fingerprint. */
export function failureFingerprint(stepId: string, failureClass: FailureClass, message: string): string {
  return `${failureClass}:${fnv1a(`${stepId}\u0000${failureClass}\u0000${normaliseFailureMessage(message)}`)}`;
}
