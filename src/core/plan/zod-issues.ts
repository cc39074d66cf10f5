import type { z } from 'zod';
import { closestMatch, formatIssuePath, type PlanIssue, stepPathNames } from './issues.js';

/** Turning zod's issues into plan issues that name the field, the value and the fix. */

/** A short, quoted description of a value for messages: `"abc"`, `12`, `a list`, `nothing`. */
export function describeValue(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (typeof value === 'string')
    return JSON.stringify(value.length > 60 ? `${value.slice(0, 57)}...` : value);
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object' && value !== null) return 'an object';
  return String(value);
}

export function unknownKeysMessage(keys: readonly string[], known: readonly string[]): string {
  const allowed = known.filter((key) => key !== '$schema');
  return keys
    .map((key) => {
      const match = closestMatch(key, allowed);
      return match === undefined
        ? `unknown key "${key}" (allowed: ${allowed.join(', ')})`
        : `unknown key "${key}": did you mean "${match}"?`;
    })
    .join('; ');
}

/** Messages for issues that the schema itself does not word. */
export const planErrorMap: z.core.$ZodErrorMap = (issue) => {
  const value = describeValue(issue.input);
  switch (issue.code) {
    case 'invalid_type':
      return `expected ${article(issue.expected)}, got ${value}`;
    case 'too_small':
      return issue.origin === 'array'
        ? `needs at least ${issue.minimum} item${issue.minimum === 1 ? '' : 's'}`
        : issue.origin === 'string'
          ? 'cannot be empty'
          : `${value} is too small: use ${issue.inclusive ? 'at least' : 'more than'} ${issue.minimum}`;
    case 'too_big':
      return `${value} is too large: use ${issue.inclusive ? 'at most' : 'less than'} ${issue.maximum}`;
    case 'invalid_value':
      return `${value} is not allowed: use ${issue.values.map((v) => JSON.stringify(v)).join(' or ')}`;
    case 'invalid_format':
      return `${value} has the wrong format`;
    default:
      return undefined;
  }
};

/** One plan issue per zod issue, with `steps.<id>` paths and "required" for missing fields. */
export function planIssuesFromZod(issues: readonly z.core.$ZodIssue[], raw: unknown): PlanIssue[] {
  const stepNames = stepPathNames(raw);
  const finallyNames = stepPathNames(
    raw !== null && typeof raw === 'object' ? { steps: (raw as { finally?: unknown }).finally } : undefined,
  );
  return issues.map((issue) => {
    const path = formatIssuePath(issue.path, stepNames, finallyNames);
    if (issue.code === 'invalid_type' && issue.path.length > 0 && valueAt(raw, issue.path) === undefined) {
      // A schema may say what a missing field is for (forEach.maxItems): its own words then.
      return { path, problem: issue.message.startsWith('is required') ? issue.message : 'required' };
    }
    if (issue.code === 'invalid_key') {
      return { path, problem: issue.issues.map((inner) => inner.message).join('; ') };
    }
    return { path, problem: issue.message };
  });
}

function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let current = root;
  for (const segment of path) {
    if (typeof current !== 'object' || current === null || !Object.hasOwn(current, segment)) return undefined;
    current = (current as Record<PropertyKey, unknown>)[segment];
  }
  return current;
}

function article(expected: string): string {
  if (expected === 'int') return 'a whole number';
  if (expected === 'array') return 'a list';
  return /^[aeiou]/.test(expected) ? `an ${expected}` : `a ${expected}`;
}
