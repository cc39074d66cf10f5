import { agentInvocation } from '../../core/agent-prompt.js';
import { lastLines } from './json-output.js';
import { hasFlag } from './prompt-placement.js';
import { type AgentProfile, type AgentReport, MULTI_PROVIDER_KEYS } from './types.js';
import { emptyUsage, usageOrUndefined } from './usage-sum.js';

/**
 * aider (`aider --message <prompt> --yes-always`): no JSON output. Usage is its
 * `Tokens: 2.1k sent, 150 received. Cost: $0.0072 message, $0.0072 session.` lines (summed); a
 * `litellm.RateLimitError` (or any `litellm.*Error`) line that no later turn recovered from is a
 * failure even when it exits 0, which it does when rate-limited.
 */
export const aiderProfile: AgentProfile = {
  name: 'aider',
  programs: ['aider'],
  installs: { packages: [] },
  readsEnv: MULTI_PROVIDER_KEYS,
  outputFlags: '--message (no machine-readable output; Baton reads its Tokens: lines)',
  commandWarnings(command) {
    const warnings: string[] = [];
    if (!hasFlag(command, '--message', '-m', '--message-file', '-f')) {
      warnings.push('aider without --message starts a chat: use [aider, --yes-always, --message]');
    }
    return warnings;
  },
  invocation: agentInvocation,
  read({ stdout, stderr }) {
    const report: AgentReport = {};
    const usage = emptyUsage();
    for (const line of stdout.split('\n')) {
      const match = /^Tokens: ([\d.]+)(k?) sent, ([\d.]+)(k?) received\. Cost: \$([\d.]+) message/.exec(
        line.trim(),
      );
      if (!match) continue;
      usage.inputTokens += scaled(match[1], match[2]);
      usage.outputTokens += scaled(match[3], match[4]);
      usage.costUsd += Number(match[5]);
      usage.costReported = true;
    }
    const counted = usageOrUndefined(usage);
    if (counted) report.usage = counted;
    // aider prints a litellm error and "Retrying in N seconds..." and goes on: the error counts only
    // when nothing of a later turn (its Tokens: line) came after the last one.
    const output = `${stderr}\n${stdout}`;
    const errors = [...output.matchAll(/^(litellm\.\w+Error):?\s*([^\n]*)$/gm)];
    const last = errors.at(-1);
    const recovered =
      last !== undefined && /^Tokens: /m.test(output.slice((last.index ?? 0) + last[0].length));
    if (last && !recovered) {
      const retry = /Retrying in [\d.]+ \w+/.exec(output.slice(last.index ?? 0))?.[0];
      const message = `${last[1]}: ${last[2]}${retry ? ` (${retry})` : ''}`.trim();
      report.error = { message, ...(last[1] === 'litellm.RateLimitError' ? { status: 429 } : {}) };
    } else if (stdout.trim() !== '') {
      report.answer = lastLines(stdout, 2000);
    }
    return report;
  },
  exitCodes: { 0: { meaning: 'finished (also when rate-limited: its output says so)' } },
};

function scaled(value: string | undefined, k: string | undefined): number {
  return Math.round(Number(value ?? 0) * (k === 'k' ? 1000 : 1));
}
