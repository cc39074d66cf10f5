import '../runtime/core-libraries.js';
import { createRequire } from 'node:module';
import { parsePlanTextWith, type YamlModule } from '../core/plan/plan-text.js';
import type { Plan } from '../core/plan/types.js';

let yamlModule: YamlModule | undefined;

/**
 * The YAML parser, loaded by the first YAML plan (about 10 MB and 50 ms of a process's start):
 * JSON plans and plans built in code never load it.
 */
const loadYaml = (): YamlModule => {
  yamlModule ??= createRequire(import.meta.url)('yaml') as YamlModule;
  return yamlModule;
};

/**
 * Parses the text of a plan file: JSON when the file name ends in `.json`, YAML otherwise.
 * `fileName` is only used in messages. Throws `PlanInvalidError` (code `PLAN_INVALID`) with
 * every problem found, syntax errors as `<file>:<line>:<col>: <message>`.
 */
export function parsePlanText(text: string, fileName: string): Plan {
  return parsePlanTextWith(text, fileName, loadYaml);
}
