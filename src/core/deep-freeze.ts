/**
 * Freezes a JSON-like value and everything in it, in place, and returns it: for objects many
 * holders share (a plan read by several runs), so that a change is a TypeError, not a change of
 * what the others see. A frozen value is not walked again.
 */
export function deepFreeze<T>(value: T): T {
  if (value === null || typeof value !== 'object' || Object.isFrozen(value)) return value;
  Object.freeze(value);
  if (Array.isArray(value)) for (const item of value) deepFreeze(item);
  else
    for (const key in value)
      if (Object.hasOwn(value, key)) deepFreeze((value as Record<string, unknown>)[key]);
  return value;
}
