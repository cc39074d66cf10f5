import { parseDurationMs } from './duration.js';
import type { PlanIssue } from './issues.js';
import { workspaceFileProblem } from './result-fields.js';
import type { PlanFileStep } from './schema.js';
import { DEFAULT_VERIFY_TIMEOUT_MS, type PlanStep, type VerifyModelSpec } from './types.js';

const DEFAULT_GRADER_OUTPUT_TOKENS = 1024;
const DEFAULT_GRADER_REQUEST_TIMEOUT_MS = 120_000;

/**
 * A step's `verify:` as normalized: only an agent step is verified (a function's result is its own
 * code's to check, a model step has no workspace work to test), it needs a command, a rubric or
 * both, and a rubric needs the model that grades it. The rubric's path stays in the workspace,
 * checked here without the disk (symlinks are resolved when it is read, executors/verify-gate.ts).
 */
export function normalizeVerify(
  step: PlanFileStep,
  kind: PlanStep['kind'],
  path: string,
  issues: PlanIssue[],
): Pick<PlanStep, 'verify'> {
  const verify = step.verify;
  if (verify === undefined) return {};
  const at = `${path}.verify`;
  if (kind !== 'agent') {
    issues.push({
      path: at,
      problem: `checks an agent's work, and this is a ${kind} step: remove "verify" (or check in the step itself)`,
    });
    return {};
  }
  if (verify.command === undefined && verify.rubric === undefined) {
    issues.push({
      path: at,
      problem: 'checks nothing: give command (e.g. [npm, test]), rubric (with model), or both',
    });
    return {};
  }
  if (verify.rubric !== undefined && verify.model === undefined) {
    issues.push({
      path: `${at}.model`,
      problem: 'is needed to grade the rubric: add model: { provider, model } (e.g. openai, gpt-4o-mini)',
    });
  }
  if (verify.model !== undefined && verify.rubric === undefined) {
    issues.push({
      path: `${at}.model`,
      problem: 'grades a rubric, and there is none: add rubric (e.g. rubric.md) or remove "model"',
    });
  }
  if (verify.rubric !== undefined) {
    const problem = workspaceFileProblem(verify.rubric, 'the rubric', 'rubric.md');
    if (problem !== undefined) issues.push({ path: `${at}.rubric`, problem });
  }
  const model = verify.model;
  const grader: VerifyModelSpec | undefined =
    model === undefined
      ? undefined
      : {
          provider: model.provider,
          model: model.model,
          ...(model.baseUrl === undefined ? {} : { baseUrl: model.baseUrl }),
          ...(model.apiKeyEnv === undefined ? {} : { apiKeyEnv: model.apiKeyEnv }),
          ...(model.capabilities === undefined ? {} : { capabilities: { ...model.capabilities } }),
          ...(model.price === undefined ? {} : { price: { ...model.price } }),
          maxOutputTokens: model.maxOutputTokens ?? DEFAULT_GRADER_OUTPUT_TOKENS,
          requestTimeoutMs: parseDurationMs(
            model.requestTimeoutMs ?? DEFAULT_GRADER_REQUEST_TIMEOUT_MS,
            `${at}.model.requestTimeoutMs`,
          ),
        };
  return {
    verify: {
      ...(verify.command === undefined ? {} : { command: [...verify.command] }),
      timeoutMs: parseDurationMs(verify.timeoutMs ?? DEFAULT_VERIFY_TIMEOUT_MS, `${at}.timeoutMs`),
      ...(verify.rubric === undefined ? {} : { rubric: verify.rubric }),
      ...(grader === undefined ? {} : { model: grader }),
      ...(verify.maxIterations === undefined ? {} : { maxIterations: verify.maxIterations }),
    },
  };
}
