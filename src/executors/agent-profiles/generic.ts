import { agentInvocation } from '../../core/agent-prompt.js';
import { asRecord, asString, count, lastJsonObject } from './json-output.js';
import type { AgentProfile, AgentReport } from './types.js';
import { emptyUsage, usageOrUndefined } from './usage-sum.js';

/**
 * Any other trusted program. Its answer is the `result` (or `response`) of a JSON object printed
 * last, else the end of stdout; its usage is such an object's `usage` and `total_cost_usd`; it fails
 * when it exits non-zero or that object says `is_error: true` (exit 0 with any other text is a
 * success: loose text never fails an attempt).
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
    if (record?.is_error === true) {
      // A final record in claude's shape saying the run failed: structured, so it fails the attempt.
      const subtype = asString(record.subtype) ?? 'is_error';
      report.error = { message: `the agent reported ${subtype}${text ? `: ${text}` : ''}` };
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
