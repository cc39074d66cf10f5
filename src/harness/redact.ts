/**
 * Masks secrets before anything reaches an event, a log or the state: API keys in the shapes the
 * common providers issue, bearer tokens, `api_key=...` pairs, and any secret the caller names.
 */
const SECRET_PATTERNS: readonly RegExp[] = [
  /\bsk-(?:ant-|proj-|or-)?[A-Za-z0-9_-]{8,}/g,
  /\bBearer\s+[A-Za-z0-9._~+/=-]{8,}/gi,
  /\bAKIA[0-9A-Z]{16}\b/g,
  /\bAIza[0-9A-Za-z_-]{20,}/g,
  /\bgh[pousr]_[A-Za-z0-9]{20,}/g,
  /\bxox[abprs]-[A-Za-z0-9-]{10,}/g,
  /\b((?:x-)?api[_-]?key|authorization|access[_-]?token|secret)(["']?\s*[:=]\s*["']?)[^\s"',}]{6,}/gi,
];

export const MAX_RECORDED_MESSAGE = 300;

export function redactSecrets(text: string, extraSecrets: readonly string[] = []): string {
  let out = text;
  for (const secret of extraSecrets) {
    if (secret.length >= 6) out = out.split(secret).join('[redacted]');
  }
  for (const pattern of SECRET_PATTERNS) {
    out = out.replace(pattern, (match, name?: string, separator?: string) =>
      typeof name === 'string' && typeof separator === 'string' && !match.startsWith('sk-')
        ? `${name}${separator}[redacted]`
        : '[redacted]',
    );
  }
  return out;
}

/** Redacted and cut to 300 characters: what an event may say about a provider's error. */
export function recordableMessage(text: string, extraSecrets: readonly string[] = []): string {
  const redacted = redactSecrets(text, extraSecrets);
  return redacted.length > MAX_RECORDED_MESSAGE
    ? `${redacted.slice(0, MAX_RECORDED_MESSAGE - 1)}…`
    : redacted;
}
