import { claudeFolders } from './config-folders.js';
import { asRecord, asString, count, httpStatus, jsonLines, lastLines } from './json-output.js';
import { flagValue, hasFlag, promptAfterDoubleDash } from './prompt-placement.js';
import type { AgentProfile, AgentReport, AgentUsage, SetupProblem } from './types.js';
import { emptyUsage, usageOrUndefined } from './usage-sum.js';

/**
 * Claude Code (`claude -p --output-format json`, or `stream-json --verbose`): one final record
 * `{"type":"result", "is_error", "subtype", "api_error_status", "terminal_reason", "result",
 * "total_cost_usd", "usage", "modelUsage"}`, the last line of stdout. On an API error it exits 1 with
 * `is_error: true`, the HTTP status in `api_error_status` and the provider's message in `result`.
 */
export const claudeProfile: AgentProfile = {
  name: 'claude',
  programs: ['claude'],
  installs: { packages: ['@anthropic-ai/claude-code'], homeFolders: ['.local/share/claude/versions'] },
  readsEnv: ['ANTHROPIC_API_KEY', 'ANTHROPIC_AUTH_TOKEN', 'CLAUDE_CODE_OAUTH_TOKEN'],
  outputFlags: '--output-format json',
  commandWarnings(command) {
    const warnings: string[] = [];
    if (!hasFlag(command, '-p', '--print')) {
      warnings.push('claude without -p (--print) starts its interactive UI: add -p');
    }
    const format = flagValue(command, '--output-format');
    if (format !== 'json' && format !== 'stream-json') {
      warnings.push(
        'claude without --output-format json prints plain text: Baton cannot read its usage, cost or API errors; add --output-format json',
      );
    }
    if (hasFlag(command, '--dangerously-skip-permissions')) {
      warnings.push(
        'claude refuses --dangerously-skip-permissions as root: prefer --permission-mode acceptEdits',
      );
    }
    return warnings;
  },
  invocation: promptAfterDoubleDash,
  retryCap(_command, retries) {
    return {
      env: { CLAUDE_CODE_MAX_RETRIES: String(retries) },
      args: [],
      description: `CLAUDE_CODE_MAX_RETRIES=${retries}`,
    };
  },
  read({ stdout, stderr }) {
    const report: AgentReport = {};
    const setup = claudeSetupProblem(stderr);
    if (setup) report.setup = setup;
    const records = jsonLines(stdout);
    const result = records.findLast((record) => record.type === 'result');
    if (!result) {
      // Text output (no --output-format json): the answer is what it printed.
      if (records.length === 0 && stdout.trim() !== '') report.answer = stdout.trim();
      return report;
    }
    const text = asString(result.result);
    const usage = claudeUsage(result);
    if (usage) report.usage = usage;
    const subtype = asString(result.subtype) ?? '';
    if (result.is_error === true || subtype.startsWith('error')) {
      // terminal_reason and subtype are claude's own words (api_error, error_max_turns), not the
      // provider's error type: only the status is structured.
      const status = httpStatus(result.api_error_status);
      // api_error names what failed when no status came back ("connection_failed").
      const apiError = asString(result.api_error);
      const message = text?.trim() || `claude reported ${asString(result.terminal_reason) ?? subtype}`;
      report.error = {
        message: apiError && !message.includes(apiError) ? `${message} (${apiError})` : message,
        ...(status === undefined ? {} : { status }),
      };
    } else if (text !== undefined) {
      report.answer = text.trim();
    }
    return report;
  },
  confinedWritable: claudeFolders,
  // `--resume=<id>` (its value is optional: the `=` form keeps the next argument apart), forked into
  // a session named in advance: each attempt has its own id, and the one before stays as it was.
  session: {
    ownFlags: [
      '--session-id',
      '--resume',
      '-r',
      '--continue',
      '-c',
      '--fork-session',
      '--no-session-persistence',
    ],
    start: (id) => ['--session-id', id],
    resume: (previous, id) => [`--resume=${previous}`, '--fork-session', '--session-id', id],
    missing: ({ stderr }) => /No conversation found with session ID/.test(stderr),
  },
  // Print mode sends each permission request to the MCP tool named (claude 2.1: { tool_name,
  // input, tool_use_id } in, { behavior: allow, updatedInput } or { behavior: deny, message } out).
  // --mcp-config takes several files: the flag after it ends the list.
  toolApprovals: {
    args: (configPath) => ['--mcp-config', configPath, '--permission-prompt-tool', 'mcp__baton__approve'],
    ownFlags: ['--permission-prompt-tool'],
  },
  exitCodes: {
    0: { meaning: 'finished (the result record may still say is_error)' },
    1: { meaning: 'failed: the result record or stderr says why' },
  },
};

/** Summed over `modelUsage` (every model it called, subagents and side calls included), else `usage`. */
function claudeUsage(result: Record<string, unknown>): AgentUsage | undefined {
  const usage = emptyUsage();
  const models = Object.values(asRecord(result.modelUsage) ?? {}).map(asRecord);
  if (models.length > 0) {
    for (const model of models) {
      const cacheRead = count(model?.cacheReadInputTokens);
      const cacheWrite = count(model?.cacheCreationInputTokens);
      usage.inputTokens += count(model?.inputTokens) + cacheRead + cacheWrite;
      usage.outputTokens += count(model?.outputTokens);
      usage.cacheReadTokens += cacheRead;
      usage.cacheWriteTokens += cacheWrite;
    }
  } else {
    const u = asRecord(result.usage);
    const cacheRead = count(u?.cache_read_input_tokens);
    const cacheWrite = count(u?.cache_creation_input_tokens);
    usage.inputTokens = count(u?.input_tokens) + cacheRead + cacheWrite;
    usage.outputTokens = count(u?.output_tokens);
    usage.cacheReadTokens = cacheRead;
    usage.cacheWriteTokens = cacheWrite;
  }
  if (typeof result.total_cost_usd === 'number') {
    usage.costUsd = count(result.total_cost_usd);
    usage.costReported = true;
  }
  return usageOrUndefined(usage);
}

/** What claude says on stderr about its command line or the machine: nothing a retry changes. */
function claudeSetupProblem(stderr: string): SetupProblem | undefined {
  const swallowed = /"[^\n]*" was read as a value of (--[\w-]+)/.exec(stderr);
  if (swallowed) {
    return {
      failureClass: 'invalid',
      message: `the prompt was read as a value of ${swallowed[1]}: put ${swallowed[1]}'s values in one argument (${swallowed[1]}=Bash,Read) or let Baton place the prompt (promptVia: arg)`,
    };
  }
  const unknown = /error: unknown option '([^']+)'/.exec(stderr);
  if (unknown) return { failureClass: 'invalid', message: `claude does not know the option ${unknown[1]}` };
  if (/cannot be used with root\/sudo privileges/.test(stderr)) {
    return { failureClass: 'invalid', message: lastLines(stderr, 300) };
  }
  if (/Input must be provided either through stdin or as a prompt argument/.test(stderr)) {
    return { failureClass: 'invalid', message: 'claude got no prompt: let Baton append it (promptVia: arg)' };
  }
  return undefined;
}
