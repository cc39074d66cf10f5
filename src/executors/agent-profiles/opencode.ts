import { asRecord, asString, count, jsonLines } from './json-output.js';
import { flagValue, promptAfterDoubleDash } from './prompt-placement.js';
import { type AgentProfile, type AgentReport, MULTI_PROVIDER_KEYS } from './types.js';
import { emptyUsage, usageOrUndefined } from './usage-sum.js';

/**
 * opencode (`opencode run --format json`): JSON lines. Text parts (`type: text`, `part.text`) make
 * the answer (the last one); each `step_finish` carries `part.cost` and `part.tokens{input, output,
 * reasoning, cache{read, write}}` (summed); an `error` event is a failure. opencode may hang on a
 * 429 or a spent quota: the step's timeout ends it.
 */
export const opencodeProfile: AgentProfile = {
  name: 'opencode',
  programs: ['opencode'],
  installs: { packages: ['opencode-ai'] },
  readsEnv: MULTI_PROVIDER_KEYS,
  outputFlags: 'run --format json',
  commandWarnings(command) {
    const warnings: string[] = [];
    if (!command.includes('run'))
      warnings.push('opencode without run starts its interactive UI: use opencode run');
    if (flagValue(command, '--format') !== 'json') {
      warnings.push(
        'opencode run without --format json prints text: Baton cannot read its usage or errors; add --format json',
      );
    }
    return warnings;
  },
  invocation: promptAfterDoubleDash,
  read({ stdout }) {
    const report: AgentReport = {};
    const events = jsonLines(stdout);
    if (events.length === 0) {
      if (stdout.trim() !== '') report.answer = stdout.trim();
      return report;
    }
    const usage = emptyUsage();
    for (const event of events) {
      const part = asRecord(event.part);
      if (event.type === 'text') {
        const text = asString(part?.text);
        if (text !== undefined && text.trim() !== '') report.answer = text.trim();
      } else if (event.type === 'step_finish') {
        const tokens = asRecord(part?.tokens);
        const cache = asRecord(tokens?.cache);
        usage.inputTokens += count(tokens?.input) + count(cache?.read) + count(cache?.write);
        usage.outputTokens += count(tokens?.output) + count(tokens?.reasoning);
        usage.cacheReadTokens += count(cache?.read);
        usage.cacheWriteTokens += count(cache?.write);
        if (typeof part?.cost === 'number') {
          usage.costUsd += count(part.cost);
          usage.costReported = true;
        }
      } else if (event.type === 'error') {
        const error = asRecord(event.error);
        const data = asRecord(error?.data);
        const message =
          asString(data?.message) ??
          asString(error?.message) ??
          asString(error?.name) ??
          'opencode reported an error';
        const status = count(data?.statusCode);
        report.error = { message, ...(status > 0 ? { status } : {}) };
      }
    }
    const counted = usageOrUndefined(usage);
    if (counted) report.usage = counted;
    return report;
  },
  exitCodes: { 0: { meaning: 'finished (also after permissions were auto-rejected: its output says so)' } },
};
