import { agentInvocation } from '../../core/agent-prompt.js';
import { classOfDeclaredStatus } from '../../core/declared-failure.js';
import { asRecord, asString, count, httpStatus, type JsonRecord, lastJsonObject } from './json-output.js';
import type { AgentProfile, AgentReport, ProviderError } from './types.js';
import { emptyUsage, usageOrUndefined } from './usage-sum.js';

/**
 * The error a program's last JSON object reports, or undefined: a record saying `is_error: true`
 * (claude's shape), or one with an `error` (an object or a text). Its HTTP status, from
 * `api_error_status`, `status` or `code` (of the record or of its `error`), declares the class
 * (core/declared-failure.ts `classOfDeclaredStatus`: 400/404/422 invalid, 401/403 fatal, 408/429/5xx
 * transient).
 */
function errorRecord(record: JsonRecord): ProviderError | undefined {
  const error = asRecord(record.error);
  const errorText = asString(record.error)?.trim() || undefined;
  if (record.is_error !== true && error === undefined && errorText === undefined) return undefined;
  const status =
    httpStatus(record.api_error_status) ??
    httpStatus(record.status) ??
    httpStatus(record.code) ??
    httpStatus(error?.status) ??
    httpStatus(error?.code);
  const said =
    asString(record.result) ??
    asString(record.response) ??
    asString(error?.message) ??
    errorText ??
    asString(record.message);
  const what = record.is_error === true ? (asString(record.subtype) ?? 'is_error') : 'an error';
  const message = `the agent reported ${what}${status === undefined ? '' : ` (HTTP ${status})`}${said ? `: ${said}` : ''}`;
  const declaredClass = status === undefined ? undefined : classOfDeclaredStatus(status);
  return {
    message,
    ...(status === undefined ? {} : { status }),
    ...(declaredClass === undefined ? {} : { declaredClass }),
  };
}

/**
 * Any other trusted program. Its answer is the `result` (or `response`) of a JSON object printed
 * last, else the end of stdout; its usage is such an object's `usage` and `total_cost_usd`; it fails
 * when it exits non-zero or that object reports an error (`errorRecord`; exit 0 with any other
 * text is a success: loose text never fails an attempt).
 */
export const genericProfile: AgentProfile = {
  name: 'generic',
  programs: [],
  installs: { packages: [] },
  readsEnv: [],
  outputFlags: '(none known)',
  commandWarnings: () => [],
  invocation: agentInvocation,
  read({ stdout }) {
    const report: AgentReport = {};
    const record = lastJsonObject(stdout);
    const text = asString(record?.result) ?? asString(record?.response);
    const failed = record ? errorRecord(record) : undefined;
    if (failed) {
      report.error = failed;
    } else {
      const answer = text ?? stdout;
      if (answer.trim() !== '') report.answer = answer.trim();
    }
    const u = asRecord(record?.usage);
    if (record && (u || typeof record.total_cost_usd === 'number')) {
      const usage = emptyUsage();
      usage.inputTokens = count(u?.input_tokens);
      usage.outputTokens = count(u?.output_tokens);
      usage.costUsd = count(record.total_cost_usd);
      usage.costReported = typeof record.total_cost_usd === 'number';
      const counted = usageOrUndefined(usage);
      if (counted) report.usage = counted;
    }
    return report;
  },
  exitCodes: { 0: { meaning: 'finished' } },
};
