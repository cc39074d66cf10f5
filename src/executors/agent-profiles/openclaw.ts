import { createHash } from 'node:crypto';
import { isAbsolute, join } from 'node:path';
import type { AgentSpec } from '../../core/plan/types.js';
import { openclawFolders, openclawStateDir } from './config-folders.js';
import { asRecord, asString, count, type JsonRecord, lastJsonObject } from './json-output.js';
import { flagValue, hasFlag, promptAfterDoubleDash, promptAsFlagValue } from './prompt-placement.js';
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
    const file = messageFile(command, 0);
    const stdin = isExecForm(command, 0) ? '-' : '/dev/stdin';
    if (file === '-' && stdin !== '-') {
      warnings.push(
        'openclaw agent without exec reads --message-file - as a file named "-": write --message-file /dev/stdin, and Baton sends the prompt on stdin',
      );
    } else if (file !== undefined && file !== '' && !STDIN_FILES.includes(file)) {
      warnings.push(
        `openclaw reads its prompt from the file "${file}" (--message-file), so the step's instruction never reaches it: write --message-file ${stdin}, and Baton sends the prompt on stdin`,
      );
    }
    return warnings;
  },
  invocation: (agent, prompt, programIndex = 0) => {
    const file = messageFile(agent.command, programIndex);
    if (file !== undefined && agent.promptVia === 'arg')
      return promptAsMessageFile(agent, prompt, file, programIndex);
    // agent exec: the prompt is its positional, after `--`; agent --message: one --message=<text>.
    return isExecForm(agent.command, programIndex)
      ? promptAfterDoubleDash(agent, prompt, programIndex)
      : promptAsFlagValue(agent, prompt, ['-m', '--message'], programIndex);
  },
  retryCap(command, _retries, context) {
    // Its retry budget is an embedded session setting read from <cwd>/.openclaw/settings.json
    // (agent exec) or its agent's own folder, <state>/agents/<id>/agent/settings.json (agent
    // --local): no variable or flag, and Baton does not write there. So the plan warns until the user
    // has set it.
    const description =
      "nothing: openclaw reads retry.provider.maxRetries only from <workspace>/.openclaw/settings.json (agent exec) or its agent's settings.json (agent --local); set it to 1 there";
    const setting = '{"retry":{"provider":{"maxRetries":1}}}';
    const exec = isExecForm(command, 0);
    const settings = exec ? execSettings(command, context.workspace) : agentSettings(command, context.env);
    if (settings !== undefined && hasMaxRetries(context.readTextFile(settings)))
      return { env: {}, args: [], description };
    const where =
      settings ?? (exec ? '<workspace>/.openclaw/settings.json' : '<state>/agents/<id>/agent/settings.json');
    return {
      env: {},
      args: [],
      description,
      reminder: `openclaw retries a 429 up to 10 times (about 150 s) inside one attempt, and no variable or flag lets Baton cap that: put ${setting} in ${where} (capRetries: false in the step's agent silences this)`,
    };
  },
  attemptTemp: { strays: stateLockFiles },
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
      // Its own command line or setup (no Gateway, a bad flag): nothing a retry changes. `agent
      // --local` reports a provider's failure as a cli_error too, with the provider's HTTP status:
      // that status decides.
      if (error?.type === 'cli_error' && status === undefined)
        report.setup ??= { failureClass: 'invalid', message: message.trim() };
    }
    return report;
  },
  // `agent --local` and the Gateway form keep a conversation per `--session-id` in the agent's own
  // state (its SQLite files), created when the id is new: a retry goes on in the session the attempt
  // before used (Baton records it beside that attempt's log; openclaw prints it only when the turn
  // finished); `agent exec` keeps none. An unknown id is not refused but started empty, which its
  // JSON says (no messages before the prompt).
  session: {
    ownFlags: ['--session-id', '--session-key', '--to', '-t'],
    keepsSessions: (command) => !isExecForm(command, 0),
    start: (id) => ['--session-id', id],
    inPlace: true,
    resume: (previous) => ['--session-id', previous],
    missing: ({ stdout }) => {
      const status = asRecord(
        asRecord(asRecord(lastJsonObject(stdout)?.meta)?.agentMeta)?.contextBudgetStatus,
      );
      return status?.messageCount === 0;
    },
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

/** `openclaw agent exec …` (exec right after agent). */
function isExecForm(command: readonly string[], programIndex: number): boolean {
  const agent = command.indexOf('agent', programIndex + 1);
  return agent !== -1 && command[agent + 1] === 'exec';
}

/** Files through which openclaw reads its standard input (`-` only for `agent exec`). */
const STDIN_FILES: readonly string[] = ['-', '/dev/stdin'];

/** The value of the command's `--message-file`; `''` when the flag ends the command, waiting for one. */
function messageFile(command: readonly string[], programIndex: number): string | undefined {
  const own = command.slice(programIndex + 1);
  if (!hasFlag(own, '--message-file')) return undefined;
  return own.at(-1) === '--message-file' ? '' : flagValue(own, '--message-file');
}

/**
 * A command that says where openclaw reads its prompt (`--message-file`) gets it there, never a
 * second prompt beside it (openclaw refuses both): on stdin for `-` (agent exec) and /dev/stdin,
 * and a bare `--message-file` ending the command gets the file that is stdin. Any other file is the
 * user's own prompt: nothing is added, and commandWarnings says the instruction does not reach it.
 */
function promptAsMessageFile(
  agent: AgentSpec,
  prompt: string,
  file: string,
  programIndex: number,
): { argv: string[]; stdinText?: string } {
  if (file === '') {
    const stdin = isExecForm(agent.command, programIndex) ? '-' : '/dev/stdin';
    return { argv: [...agent.command, stdin], stdinText: prompt };
  }
  return STDIN_FILES.includes(file)
    ? { argv: [...agent.command], stdinText: prompt }
    : { argv: [...agent.command] };
}

/** `agent exec`'s settings: `.openclaw/settings.json` in the folder it runs in (`--cwd`, else the workspace). */
function execSettings(command: readonly string[], workspace: string | undefined): string | undefined {
  if (workspace === undefined) return undefined;
  const cwd = flagValue(command, '--cwd');
  const folder = cwd === undefined || isAbsolute(cwd) ? (cwd ?? workspace) : join(workspace, cwd);
  return join(folder, '.openclaw', 'settings.json');
}

/** `agent --local`'s settings: its agent's own folder in the state (`--agent`, else `main`). */
function agentSettings(
  command: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
): string | undefined {
  const state = openclawStateDir(env);
  if (state === undefined) return undefined;
  return join(state, 'agents', flagValue(command, '--agent') ?? 'main', 'agent', 'settings.json');
}

/** Whether a settings.json sets `retry.provider.maxRetries`. */
function hasMaxRetries(text: string | undefined): boolean {
  if (text === undefined) return false;
  try {
    const settings = asRecord(JSON.parse(text));
    return typeof asRecord(asRecord(settings?.retry)?.provider)?.maxRetries === 'number';
  } catch {
    return false;
  }
}

/**
 * openclaw 2026.9 locks each state database it opens with empty files in a fixed folder,
 * `/tmp/openclaw-state-locks-<uid>` (no variable moves it), named `<family>.<hash>.lock.sqlite`
 * after the first 8 hex digits of the SHA-256 of the database's real path. `agent exec` makes its
 * state in `$TMPDIR/openclaw-agent-exec-XXXXXX` (database `state/openclaw.sqlite`) and never removes
 * those lock files: these are the ones of the state folders made in an attempt's temp folder.
 */
function stateLockFiles(tempDir: string, entries: readonly string[], uid: number | undefined) {
  const folder = uid === undefined ? '/tmp/openclaw-state-locks' : `/tmp/openclaw-state-locks-${uid}`;
  return entries
    .filter((entry) => entry.startsWith('openclaw-agent-exec-'))
    .map((entry) => {
      const database = join(tempDir, entry, 'state', 'openclaw.sqlite');
      const hash = createHash('sha256').update(database).digest('hex').slice(0, 8);
      return { folder, nameIncludes: `.${hash}.lock.sqlite` };
    });
}
