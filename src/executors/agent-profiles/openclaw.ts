import { openclawFolders } from './config-folders.js';
import { asRecord, asString, count, type JsonRecord, lastJsonObject } from './json-output.js';
import { hasFlag, promptAfterDoubleDash, promptAsFlagValue } from './prompt-placement.js';
import { type AgentProfile, type AgentReport, type AgentUsage, MULTI_PROVIDER_KEYS } from './types.js';
import { emptyUsage, usageOrUndefined } from './usage-sum.js';

/**
 * OpenClaw (2026.9), the agent host the step-sequencer skill was written for. Two headless forms
 * print one JSON object: `openclaw agent exec --json <prompt>` (one isolated turn: `ok`, `status`,
 * `final`, `payloads[].text`, `usage{input, output, cacheRead, cacheWrite, cost.total}`, `costUsd`,
 * `error{message, kind}`; exit 0, 1 error, 2 timeout) and `openclaw agent --local --agent <id>
 * --message <prompt> --json` (`payloads`, `meta.agentMeta.usage`; on error `{ok:false, error}`).
 * Without `--local` or `exec`, `openclaw agent` needs a running Gateway.
 */
export const openclawProfile: AgentProfile = {
  name: 'openclaw',
  programs: ['openclaw'],
  installs: { packages: ['openclaw'] },
  readsEnv: MULTI_PROVIDER_KEYS,
  outputFlags: 'agent exec --json (or agent --local --json)',
  commandWarnings(command) {
    const warnings: string[] = [];
    if (!command.includes('agent')) {
      warnings.push('openclaw without the agent subcommand runs no agent turn: use openclaw agent exec');
    } else if (!command.includes('exec') && !hasFlag(command, '--local')) {
      warnings.push(
        'openclaw agent without exec or --local needs a running Gateway (it fails with "gateway agent requires credentials"): use openclaw agent exec, or add --local',
      );
    }
    if (!hasFlag(command, '--json')) {
      warnings.push(
        'openclaw agent without --json prints text: Baton cannot read its usage or errors; add --json',
      );
    }
    return warnings;
  },
  // agent exec: the prompt is its positional, after `--`; agent --message: one --message=<text>.
  invocation: (agent, prompt, programIndex = 0) =>
    isExecForm(agent.command, programIndex)
      ? promptAfterDoubleDash(agent, prompt, programIndex)
      : promptAsFlagValue(agent, prompt, ['-m', '--message'], programIndex),
  retryCap() {
    // Its retry budget is an embedded session setting read from <cwd>/.openclaw/settings.json
    // (agent exec) or its agent's state folder (--local): no variable or flag, and Baton does not
    // write into the workspace.
    return {
      env: {},
      args: [],
      description:
        'nothing: openclaw reads retry.provider.maxRetries only from <workspace>/.openclaw/settings.json (agent exec); set it to 1 there',
    };
  },
  read({ stdout, stderr, exitCode }) {
    const report: AgentReport = {};
    const node = /openclaw: Node ([\d.]+): node:sqlite is unavailable[^\n]*/.exec(stderr);
    if (node) {
      report.setup = {
        failureClass: 'fatal',
        message: `openclaw needs Node.js 24.16+ or 26.1+ and got ${node[1]}: run it with a newer node, e.g. agent.command [/path/to/node26, /path/to/openclaw.mjs, agent, exec, --json]`,
      };
    }
    const record = lastJsonObject(stdout) ?? (exitCode === 0 ? undefined : lastJsonObject(stderr));
    if (!record) {
      if (stdout.trim() !== '' && exitCode === 0) report.answer = stdout.trim();
      return report;
    }
    const answer = openclawAnswer(record);
    if (answer !== undefined) report.answer = answer;
    const usage = openclawUsage(record);
    if (usage) report.usage = usage;
    const error = asRecord(record.error) ?? asRecord(asRecord(record.meta)?.error);
    if (record.ok === false || error) {
      const message =
        asString(error?.message) ??
        asString(record.error) ??
        `openclaw reported ${asString(record.status) ?? 'an error'}`;
      const status = /\bHTTP (\d{3})\b/.exec(message)?.[1];
      report.error = { message: message.trim(), ...(status === undefined ? {} : { status: Number(status) }) };
      // Its own command line or setup (no Gateway, a bad flag): nothing a retry changes.
      if (error?.type === 'cli_error') report.setup ??= { failureClass: 'invalid', message: message.trim() };
    }
    return report;
  },
  confinedWritable: openclawFolders,
  exitCodes: {
    0: { meaning: 'finished' },
    1: { meaning: 'failed: the JSON error says why' },
    2: { meaning: 'the turn ran out of time (agent exec --timeout)', failureClass: 'transient' },
  },
};

function openclawAnswer(record: JsonRecord): string | undefined {
  const final = asString(record.final) ?? asString(asRecord(record.meta)?.finalAssistantVisibleText);
  if (final !== undefined && final.trim() !== '') return final.trim();
  const payloads = Array.isArray(record.payloads) ? record.payloads : [];
  const texts = payloads.map((p) => asString(asRecord(p)?.text)).filter((t): t is string => t !== undefined);
  return texts.length > 0 ? texts.join('\n').trim() : undefined;
}

/** `usage` (agent exec) or `meta.agentMeta.usage` (--local); cost is openclaw's own figure. */
function openclawUsage(record: JsonRecord): AgentUsage | undefined {
  const u = asRecord(record.usage) ?? asRecord(asRecord(asRecord(record.meta)?.agentMeta)?.usage);
  if (!u) return undefined;
  const usage = emptyUsage();
  usage.cacheReadTokens = count(u.cacheRead);
  usage.cacheWriteTokens = count(u.cacheWrite);
  usage.inputTokens = count(u.input) + usage.cacheReadTokens + usage.cacheWriteTokens;
  usage.outputTokens = count(u.output);
  const cost = typeof record.costUsd === 'number' ? record.costUsd : asRecord(u.cost)?.total;
  if (typeof cost === 'number') {
    usage.costUsd = count(cost);
    usage.costReported = true;
  }
  return usageOrUndefined(usage);
}

/** `openclaw agent exec …` (exec right after agent), unless the message comes from a file. */
function isExecForm(command: readonly string[], programIndex: number): boolean {
  const agent = command.indexOf('agent', programIndex + 1);
  return agent !== -1 && command[agent + 1] === 'exec' && !hasFlag(command, '--message-file');
}
