import { readFileSync } from 'node:fs';
import { asRecord } from './agent-profiles/json-output.js';

/**
 * Reading the agent CLIs' own configuration files (settings.json, config.toml, package.json):
 * a file that is missing, unreadable or not what it should be reads as absent, never as an error.
 */
export function readTextFile(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

/** The JSON object in a file; `{}` when the file is missing, unreadable or holds something else. */
export function readJsonObject(path: string): Record<string, unknown> {
  const text = readTextFile(path);
  if (text === undefined) return {};
  try {
    return asRecord(JSON.parse(text)) ?? {};
  } catch {
    return {};
  }
}
