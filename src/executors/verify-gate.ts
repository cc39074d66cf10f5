import { constants } from 'node:fs';
import { mkdir, open, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { FailureClass, OutputArtifact, StepUsage, Verification } from '../core/failure.js';
import type { ModelStepSpec, VerifySpec } from '../core/plan/types.js';
import {
  type CheckRecord,
  endsCount,
  failedCheckMessage,
  failedChecksBefore,
  type GradedFile,
  graderPrompt,
  MAX_RUBRIC_CRITERIA,
  readVerdict,
  rubricCriteria,
} from '../core/verify.js';
import { attemptMarkerOf } from './attempt-processes.js';
import { ByteTail } from './byte-tail.js';
import { checkAgentCommand } from './command-policy.js';
import type { Grader } from './grader.js';
import { DEFAULT_EXEC_PATH } from './program-lookup.js';
import { runProcess } from './run-process.js';
import { confineCommand, type SandboxSpec, sandboxStartFailure } from './sandbox.js';
import { attemptLogPath, type ExecutionContext } from './step-executor.js';
import type { TrustedPrograms } from './trusted-programs.js';
import { checkOutputPath } from './workspace-paths.js';

/** The end of a failed command's output quoted in the failure (and so in the next prompt). */
export const VERIFY_OUTPUT_QUOTE_BYTES = 4096;
/** Of each produced file, what the grader reads; and of all of them together. */
const GRADED_FILE_MAX_BYTES = 32 * 1024;
const GRADED_TOTAL_MAX_BYTES = 128 * 1024;
const RUBRIC_MAX_BYTES = 64 * 1024;

export interface VerifyGateInput {
  context: ExecutionContext;
  spec: VerifySpec;
  /** The step's `retry.maxAttempts`: the default, and the bound, of `maxIterations`. */
  maxAttempts: number;
  /** What the agent was asked (rendered), answered, and left. */
  task: string;
  answer: string;
  value?: unknown;
  outputs: readonly OutputArtifact[];
  /** The agent's environment (secrets withheld, the attempt's BATON_* variables set). */
  env: NodeJS.ProcessEnv;
  trust: TrustedPrograms;
  sandbox?: SandboxSpec;
  killGraceMs: number;
  grader: Grader;
}

export type VerifyGateResult =
  | { passed: true; verification: Verification; usage?: StepUsage }
  | { passed: false; failureClass: FailureClass; message: string; usage?: StepUsage };

/** Where an attempt's check leaves its record and its output, relative to the home. */
function checkPaths(context: ExecutionContext, attempt: number): { record: string; log: string } {
  const base = attemptLogPath({ ...context.claim, attempt }).replace(/\.log$/, '');
  return { record: `${base}.verify.json`, log: `${base}.verify.log` };
}

/**
 * The verification gate of one attempt whose agent exited 0 with its outputs in place: the command
 * (a trusted program in the workspace), then the rubric (graded by a model), each failure recorded.
 * A check that fails asks for another attempt (`agent_failed`, quoting what failed) until
 * `maxIterations` checks failed in this round of tries; then the step goes to a person with them.
 */
export async function runVerifyGate(input: VerifyGateInput): Promise<VerifyGateResult> {
  const { context, spec } = input;
  const { claim, home } = context;
  const maxIterations = Math.min(spec.maxIterations ?? input.maxAttempts, input.maxAttempts);
  const round = claim.firstStartedAt ?? 0;
  const iteration = (await failedChecksSoFar(context, round)) + 1;
  const paths = checkPaths(context, claim.attempt);
  const failures: string[] = [];
  let usage: StepUsage | undefined;
  if (spec.command) {
    const ran = await runCheckCommand(input, spec.command, join(home, paths.log));
    if ('refused' in ran) return ran.refused;
    if (ran.failure !== null) failures.push(ran.failure);
  }
  if (failures.length === 0 && spec.rubric !== undefined && spec.model) {
    const graded = await gradeRubric(input, spec.rubric, spec.model);
    if ('refused' in graded) return graded.refused;
    usage = graded.usage;
    failures.push(...graded.failures);
  }
  const passed = failures.length === 0;
  const exhausted = !passed && iteration >= maxIterations;
  const record: CheckRecord = { round, passed, exhausted, failures };
  await mkdir(dirname(join(home, paths.record)), { recursive: true, mode: 0o700 });
  await writeFile(join(home, paths.record), JSON.stringify(record), { mode: 0o600 });
  const spent = usage ? { usage } : {};
  if (passed)
    return { passed: true, verification: { passed: true, iterations: iteration, failures: [] }, ...spent };
  return {
    passed: false,
    // Used up: not retried, a person reads the last failures (the step's reason says so).
    failureClass: exhausted ? 'no_progress' : 'agent_failed',
    message: failedCheckMessage(iteration, maxIterations, failures),
    ...spent,
  };
}

/** Checks failed in this round before this attempt, from the records beside the earlier attempts. */
async function failedChecksSoFar(context: ExecutionContext, round: number): Promise<number> {
  const records: (CheckRecord | null)[] = [];
  for (let attempt = context.claim.attempt - 1; attempt >= 1; attempt--) {
    const record = await readRecord(join(context.home, checkPaths(context, attempt).record));
    records.push(record);
    // The count ends at the first record that ends it: no need to read further back.
    if (record !== null && endsCount(record, round)) break;
  }
  return failedChecksBefore(records, round);
}

async function readRecord(file: string): Promise<CheckRecord | null> {
  try {
    const parsed = JSON.parse(await readFile(file, 'utf8')) as Partial<CheckRecord>;
    if (typeof parsed.round !== 'number' || typeof parsed.passed !== 'boolean') return null;
    return {
      round: parsed.round,
      passed: parsed.passed,
      exhausted: parsed.exhausted === true,
      failures: Array.isArray(parsed.failures) ? parsed.failures.map(String) : [],
    };
  } catch {
    return null;
  }
}

type Refused = { refused: Extract<VerifyGateResult, { passed: false }> };

/** Runs the command as the agent ran (argv, the workspace, its environment, confined when it was). */
async function runCheckCommand(
  input: VerifyGateInput,
  command: readonly string[],
  logPath: string,
): Promise<{ failure: string | null } | Refused> {
  const { context } = input;
  const workspace = context.claim.workspace;
  const shown = JSON.stringify(command);
  // Checked at every attempt, as the agent's command is: what a name runs may have changed.
  const verdict = checkAgentCommand(command, {
    cwd: workspace,
    trust: input.trust,
    pathEnv: input.env.PATH ?? DEFAULT_EXEC_PATH,
  });
  if (!verdict.ok) {
    const message = `verify.command ${shown} refused: ${verdict.reason}`;
    return { refused: { passed: false, failureClass: 'invalid', message } };
  }
  const marker = attemptMarkerOf(input.env);
  const confined =
    input.sandbox && verdict.executable !== null
      ? confineCommand({
          ...input.sandbox,
          workspace,
          writable: [],
          attemptPaths: [],
          executable: verdict.executable,
          programFiles: command.map((arg) => (arg.startsWith('/') ? arg : join(workspace, arg))),
          argv: command,
          env: input.env,
          marker,
        })
      : undefined;
  const result = await runProcess({
    argv: confined?.argv ?? command,
    executable: confined?.executable ?? verdict.executable,
    cwd: workspace,
    env: confined?.env ?? input.env,
    ...(confined ? { launcher: true, statusFd: true } : {}),
    timeoutMs: input.spec.timeoutMs,
    killGraceMs: input.killGraceMs,
    logPath,
    // What is quoted comes from the log (stdout and stderr in the order they came): keep little here.
    tailBytes: VERIFY_OUTPUT_QUOTE_BYTES,
    signal: context.signal,
    onSpawn: (pid) => context.onProcess(pid),
    ...(marker ? { marker } : {}),
  });
  const unconfinable = confined ? sandboxStartFailure(result) : undefined;
  if (unconfinable !== undefined)
    return { refused: { passed: false, failureClass: 'fatal', message: unconfinable } };
  if (result.aborted) {
    const message =
      'stopped while its verify.command ran (cancelled, lease lost, shutting down or out of time)';
    return { refused: { passed: false, failureClass: 'interrupted', message } };
  }
  if (result.spawnError) {
    const message = `verify.command ${shown} could not start (${result.spawnError.code ?? result.spawnError.message})`;
    return { refused: { passed: false, failureClass: 'invalid', message } };
  }
  if (result.exitCode === 0 && !result.timedOut) return { failure: null };
  const how = result.timedOut
    ? `did not finish within ${input.spec.timeoutMs} ms (verify.timeoutMs)`
    : result.exitCode === null
      ? `was killed by ${result.signal ?? 'a signal'}`
      : `exited with code ${result.exitCode}`;
  const tail = await logTail(logPath);
  return {
    failure: `command ${shown} ${how}${tail === '' ? ' and printed nothing' : `; its output ended with:\n${tail}`}`,
  };
}

/** The last VERIFY_OUTPUT_QUOTE_BYTES of a log, cut at a character's start. */
async function logTail(file: string): Promise<string> {
  const handle = await open(file, 'r').catch(() => null);
  if (handle === null) return '';
  try {
    const { size } = await handle.stat();
    const length = Math.min(size, VERIFY_OUTPUT_QUOTE_BYTES);
    const buffer = Buffer.alloc(length);
    await handle.read(buffer, 0, length, size - length);
    const tail = new ByteTail(VERIFY_OUTPUT_QUOTE_BYTES);
    if (size > length) tail.push(Buffer.alloc(1));
    tail.push(buffer);
    return tail.text().trimEnd();
  } finally {
    await handle.close();
  }
}

/** The rubric's criteria graded by the model against what the agent answered and left. */
async function gradeRubric(
  input: VerifyGateInput,
  rubric: string,
  model: NonNullable<VerifySpec['model']>,
): Promise<{ failures: string[]; usage?: StepUsage } | Refused> {
  const { context } = input;
  const workspace = context.claim.workspace;
  const refuse = (failureClass: FailureClass, message: string, usage?: StepUsage): Refused => ({
    refused: { passed: false, failureClass, message, ...(usage ? { usage } : {}) },
  });
  const where = await checkOutputPath(workspace, rubric);
  if (!where.ok) return refuse('invalid', `verify.rubric ${where.message.replace(/^requiredOutputs /, '')}`);
  const text = await readHead(where.absPath, RUBRIC_MAX_BYTES);
  if (text === null)
    return refuse('invalid', `verify.rubric ${JSON.stringify(rubric)} is not a readable file`);
  const criteria = rubricCriteria(text.text).slice(0, MAX_RUBRIC_CRITERIA);
  if (criteria.length === 0) {
    return refuse('invalid', `verify.rubric ${JSON.stringify(rubric)} holds no criteria: write one per line`);
  }
  const files: GradedFile[] = [];
  let budget = GRADED_TOTAL_MAX_BYTES;
  for (const output of input.outputs) {
    if (output.sha256 === '' || budget <= 0) continue;
    const head = await readHead(join(workspace, output.path), Math.min(GRADED_FILE_MAX_BYTES, budget));
    if (head === null) continue;
    budget -= head.bytes;
    files.push({ path: output.path, size: output.size, text: head.text, cut: head.bytes < output.size });
  }
  const prompt = graderPrompt({
    task: input.task,
    answer: input.answer,
    ...(input.value === undefined ? {} : { value: input.value }),
    files,
    criteria,
  });
  const spec: ModelStepSpec = { ...model, prompt, tools: [], maxTurns: 1, stream: false };
  const logPath = checkPaths(context, context.claim.attempt).log.replace(/\.log$/, '.grader.log');
  const graded = await input.grader(context, spec, prompt, logPath);
  const outcome = graded.outcome;
  const usage = outcome.usage;
  if (!outcome.ok) {
    // The grader could not answer: not the agent's failure; retried (or not) as that call's class.
    return refuse(outcome.failureClass, `the verify.rubric grader failed: ${outcome.message}`, usage);
  }
  const verdicts = readVerdict(outcome.summary, criteria);
  if (verdicts === null) {
    const message = 'the verify.rubric grader answered with no verdict (a JSON object with "criteria")';
    return refuse('transient', message, usage);
  }
  const failures = verdicts
    .filter((verdict) => !verdict.passed)
    .map(
      (verdict) =>
        `criterion "${verdict.criterion}" failed${verdict.reason === '' ? '' : `: ${verdict.reason}`}`,
    );
  return { failures, ...(usage ? { usage } : {}) };
}

/** The start of a regular file (no symlink followed, no FIFO waited on), or null. */
async function readHead(file: string, max: number): Promise<{ text: string; bytes: number } | null> {
  const handle = await open(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK).catch(
    () => null,
  );
  if (handle === null) return null;
  try {
    if (!(await handle.stat()).isFile()) return null;
    const buffer = Buffer.alloc(max);
    const { bytesRead } = await handle.read(buffer, 0, max, 0);
    return { text: buffer.subarray(0, bytesRead).toString('utf8'), bytes: bytesRead };
  } finally {
    await handle.close();
  }
}
