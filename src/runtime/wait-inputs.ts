import { userInfo } from 'node:os';
import { BatonError } from '../core/errors.js';
import { parseJsonWithLimits } from '../core/json-text.js';
import { checkPayloadSize } from '../core/payload-limit.js';
import type { Plan, PlanStep } from '../core/plan/types.js';
import { redactValue } from '../core/redact.js';
import { planSecretEnv } from '../core/run-secrets.js';
import type { RunSecretsCache } from '../engine/run-secrets-cache.js';
import { compileSchema, describeViolations } from '../executors/result-schema.js';
import { readPayloadFile } from './payload-file.js';

/**
 * What every front door (the CLI, the TypeScript API, later the console) hands the store for a
 * step that waits: who decided, an event's payload as JSON text, and the payload's check against
 * the step's `wait.schema`.
 */

/** Who approves or rejects: `by` when given, else the OS user running the command. */
export function decidedBy(by?: string): string {
  if (by !== undefined && by.trim() !== '') return by.trim();
  try {
    return userInfo().username;
  } catch {
    return process.env.USER ?? 'unknown';
  }
}

/**
 * An event's payload from `--data`: JSON, or `@file` holding JSON (a regular file within the
 * payload limit, UTF-8: payload-file.ts); absent: null. Returns JSON text.
 */
export function readEventData(data: string | undefined): string {
  if (data === undefined) return 'null';
  if (!data.startsWith('@')) return eventDataJson(data, '--data');
  return eventDataJson(readPayloadFile(data.slice(1), `--data ${data}`), data.slice(1));
}

/** A payload given as JSON text, within the payload limit, checked and normalised (the same value, compact). */
export function eventDataJson(text: string, where: string): string {
  checkPayloadSize(text, where);
  let parsed: ReturnType<typeof parseJsonWithLimits>;
  try {
    parsed = parseJsonWithLimits(text);
  } catch (error) {
    throw new BatonError(
      'INVALID_ARGUMENT',
      `${where}: not JSON (${(error as Error).message}): give JSON, e.g. --data '{"version":"1.2"}', or @file`,
    );
  }
  if (!('value' in parsed))
    throw new BatonError(
      'INVALID_ARGUMENT',
      `${where}:${parsed.line}:${parsed.column}: ${parsed.problem}: give JSON, e.g. --data '{"version":"1.2"}', or @file`,
    );
  return JSON.stringify(parsed.value);
}

/**
 * The check of a payload against the `wait.schema` of the step it would end (the plan's one schema
 * checker, executors/result-schema.ts: linear-time patterns, loaded the first time a schema is met):
 * throws a BatonError naming the run, the schema's field and what fails.
 */
export function payloadCheck(dataJson: string): (step: PlanStep, runId: string) => void {
  return (step, runId) => {
    const schema = step.wait?.schema;
    if (!schema) return;
    const compiled = compileSchema(schema);
    if (!compiled.ok)
      throw new BatonError(
        'INVALID_ARGUMENT',
        `steps.${step.id}.wait.schema of run ${runId} cannot check a payload: ${compiled.problem} (nothing was stored)`,
      );
    if (compiled.validate(JSON.parse(dataJson))) return;
    throw new BatonError(
      'INVALID_ARGUMENT',
      `--data: the payload does not match steps.${step.id}.wait.schema of run ${runId}: ${describeViolations(compiled.validate.errors ?? [])}; send a payload that does (nothing was stored)`,
    );
  };
}

/**
 * The payload as stored for a run's plan: its secrets (the sender's environment and settings, the
 * plan's secret variables) masked, as an attempt's result is (core/redact.ts).
 */
export function payloadMask(dataJson: string, secrets: RunSecretsCache): (plan: Plan) => string {
  const value = JSON.parse(dataJson) as unknown;
  return (plan) => JSON.stringify(redactValue(value, secrets.secretsFor(planSecretEnv(plan))));
}
