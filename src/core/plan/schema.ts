import { z } from 'zod';
import { isCodeLoadingVariable } from '../code-loading-variables.js';
import { DECLARABLE_CLASSES } from '../declared-failure.js';
import { HOOK_FORMATS } from '../hook-format.js';
import { hookUrlProblem } from '../hooks.js';
import { STORE_SECRET_ENV } from '../run-secrets.js';
import {
  argvElementSchema,
  checkpointSchema,
  durationSchema,
  flowKeySchema,
  flowSchema,
  idSchema,
  jsonValueSchema,
  MAX_TIMEOUT_MS,
  nameSchema,
  notBeforeSchema,
  prioritySchema,
  silenceTimeoutSchema,
  strictObject,
  timeoutSchema,
} from './schema-fields.js';
import { forEachSchema } from './schema-for-each.js';
import { modelSchema } from './schema-model.js';
import { resultFileSchema, resultSchemaSchema } from './schema-result.js';
import { verifySchema } from './schema-verify.js';
import { waitSchema } from './schema-wait.js';
import { AGENT_PROFILE_NAMES, ENV_NAME_PATTERN, PLAN_NAME_PATTERN, SANDBOX_MODES } from './types.js';
import { describeValue } from './zod-issues.js';

export { MAX_TIMEOUT_MS };

/**
 * The plan file format as written by people (YAML or JSON) or built in code, before defaults
 * and cross-reference checks (see normalize.ts). Also the source of the published JSON Schema.
 */

const envNameSchema = z.string().regex(ENV_NAME_PATTERN, {
  error: (issue) =>
    `${describeValue(issue.input)} is not the name of an environment variable, e.g. GITHUB_TOKEN`,
});

const agentEnvSchema = strictObject(
  {
    pass: z
      .array(envNameSchema)
      .superRefine((names, ctx) => {
        names.forEach((name, index) => {
          if (STORE_SECRET_ENV.includes(name))
            ctx.addIssue({
              code: 'custom',
              path: [index],
              message: `${name} holds Baton's store URL or password, which never reaches an agent: remove it`,
            });
        });
      })
      .optional()
      .describe(
        "Only these variables of Baton's environment reach the agent, with the baseline (PATH, HOME, USER, LOGNAME, SHELL, LANG, LANGUAGE, LC_*, TZ, TMPDIR, TERM). Default: all of it except Baton's own secrets (store URL, hook URLs, BATON_SECRET_ENV) and model steps' API keys the agent CLI does not read.",
      ),
    set: z
      .record(
        envNameSchema,
        z.string({ error: (issue) => `expected a string, got ${describeValue(issue.input)}` }),
      )
      .superRefine((values, ctx) => {
        for (const name of Object.keys(values)) {
          const problem = setProblem(name);
          if (problem !== null) ctx.addIssue({ code: 'custom', path: [name], message: problem });
        }
      })
      .optional()
      .describe(
        'Variables set to these literal values for the agent (stored with the plan: no secrets here). Never one that makes programs load code (NODE_OPTIONS, LD_PRELOAD, PYTHON*, ...) nor a BATON_* variable.',
      ),
  },
  "an agent's environment: { pass?: [names], set?: { NAME: value } }",
).describe("Which variables of Baton's environment the agent gets, and which it gets set.");

/** Why `agent.env.set` may not set `name`, or null. */
function setProblem(name: string): string | null {
  if (isCodeLoadingVariable(name))
    return `setting ${name} can make the agent load or run code: it is refused; put the setting in the agent's own configuration`;
  if (name.toUpperCase().startsWith('BATON_'))
    return `${name} is Baton's own variable (Baton sets BATON_RUN_ID, BATON_STEP_ID, ... itself): remove it`;
  return null;
}

const agentExitCodesSchema = z
  .record(
    z.string().regex(/^(?:[1-9]|[1-9]\d|1\d\d|2[0-4]\d|25[0-5])$/, {
      error: (issue) =>
        `${describeValue(issue.input)} is not an exit code: use a whole number from 1 to 255 (0 is success)`,
    }),
    z.enum(DECLARABLE_CLASSES, {
      error: (issue) =>
        `${describeValue(issue.input)} is not a class an agent may declare: use ${DECLARABLE_CLASSES.join(', ')}`,
    }),
    {
      error: (issue) =>
        `expected a map of exit codes to failure classes, e.g. { 64: invalid, 75: transient }, got ${describeValue(issue.input)}`,
    },
  )
  .describe(
    'What the agent\'s exit codes mean, e.g. { 64: invalid, 75: transient, 77: fatal }: an exit with a code listed ends the attempt with that class (invalid and fatal go to a person at once, transient and agent_failed are retried), whatever the agent printed, unless it printed a {"baton":{"class":…}} line. Codes not listed are read as the profile reads them.',
  );

/** One rule of `agent.approve`. */
const toolApprovalRuleSchema = strictObject(
  {
    tool: z
      .string({ error: (issue) => `expected a tool name, e.g. Bash, got ${describeValue(issue.input)}` })
      .min(1, { error: 'expected a tool name, e.g. Bash' })
      .max(100)
      .describe("The agent CLI's own name of the tool: Bash, Write, Edit, … (claude)."),
    match: z
      .string()
      .min(1)
      .max(500)
      .optional()
      .describe(
        'A glob over the command a shell tool would run (* any text, ? one character), e.g. "git push*". Absent: every call of the tool.',
      ),
    path: z
      .string()
      .min(1)
      .max(500)
      .optional()
      .describe(
        'A glob over the path a file tool would write, relative to the workspace, e.g. ".env" or "secrets/*".',
      ),
  },
  'an approval rule: { tool, match?, path? }',
);

const agentSchema = strictObject(
  {
    command: z
      .array(argvElementSchema, {
        error: (issue) =>
          `expected the command as a list of arguments, e.g. [claude, -p], got ${describeValue(issue.input)}`,
      })
      .min(1, { error: 'the command needs at least the program, e.g. [claude, -p]' })
      .describe(
        'Argv of the agent CLI, e.g. [claude, -p]. Never run through a shell. The prompt is added as promptVia says.',
      ),
    promptVia: z
      .enum(['arg', 'placeholder', 'stdin'], {
        error: (issue) => `${describeValue(issue.input)} is not allowed: use arg, placeholder or stdin`,
      })
      .optional()
      .describe(
        'How the prompt reaches the agent: arg (appended as the last argument, default), placeholder (replaces the argument "{prompt}", which must appear exactly once), stdin.',
      ),
    profile: z
      .enum(AGENT_PROFILE_NAMES, {
        error: (issue) =>
          `${describeValue(issue.input)} is not a known agent profile: use ${AGENT_PROFILE_NAMES.join(', ')}`,
      })
      .optional()
      .describe(
        "How Baton reads the agent's output, exit codes and errors. Default: chosen from the program's name (claude, codex, gemini, openclaw, opencode, aider), else generic.",
      ),
    capRetries: z
      .boolean({ error: (issue) => `expected true or false, got ${describeValue(issue.input)}` })
      .optional()
      .describe(
        "Whether Baton caps the CLI's own retries to one (default true), so that Baton's retry policy, budgets and no-progress detection decide. false leaves the CLI's own retry settings alone.",
      ),
    env: agentEnvSchema.optional(),
    exitCodes: agentExitCodesSchema.optional(),
    resume: z
      .enum(['on-retry', 'never'], {
        error: (issue) => `expected on-retry or never, got ${describeValue(issue.input)}`,
      })
      .optional()
      .describe(
        "Whether a retry continues the agent CLI's own session (on-retry: the CLI resumes the conversation of the attempt before, with the troubleshoot prompt as its next turn; falls back to a fresh start when the session cannot be found) or starts fresh (never). Default on-retry; only the CLIs that support it resume (claude, codex, gemini, openclaw agent --local), the others start fresh.",
      ),
    stallTimeoutMs: silenceTimeoutSchema(
      'How long the agent may print nothing (no byte on stdout or stderr, a line repeated over and over not counted) before its attempt is stopped as stalled: a step.stalling event at half of it, then the attempt ends transient and is retried (an unsafe step is blocked unknown_outcome). Default 10m; 0 never stops it.',
    ).optional(),
    approve: z
      .array(toolApprovalRuleSchema, {
        error: (issue) =>
          `expected a list of rules, e.g. [{ tool: Bash, match: "git push*" }], got ${describeValue(issue.input)}`,
      })
      .min(1, { error: 'an empty list approves nothing: remove "approve"' })
      .max(50, { error: 'at most 50 approval rules' })
      .optional()
      .describe(
        "Tool calls of the running agent that wait for a person's yes: the agent keeps its session while `baton approve|reject <run> <step> --tool <call-id>` answers (a denial goes back to the model, which goes on). Calls no rule names run as the CLI allows. Only agent CLIs that can ask Baton before a tool runs (claude) take it.",
      ),
    approveTimeout: timeoutSchema(
      'How long a tool call waits for approval before onTimeout decides. Default 1h.',
    ).optional(),
    onTimeout: z
      .enum(['deny'], { error: (issue) => `expected deny, got ${describeValue(issue.input)}` })
      .optional()
      .describe(
        'What an unanswered tool approval becomes: deny (the model is told, and goes on). Default deny.',
      ),
  },
  'an agent: { command: [...], promptVia?, profile?, capRetries?, env?, exitCodes?, resume?, stallTimeoutMs?, approve?, approveTimeout?, onTimeout? }',
)
  .superRefine((agent, ctx) => {
    const placeholders = agent.command.filter((arg) => arg === '{prompt}').length;
    if ((agent.promptVia ?? 'arg') === 'placeholder' && placeholders !== 1) {
      ctx.addIssue({
        code: 'custom',
        path: ['command'],
        message: `promptVia is placeholder, so the command must contain the argument "{prompt}" exactly once (found ${placeholders})`,
      });
    } else if ((agent.promptVia ?? 'arg') !== 'placeholder' && placeholders > 0) {
      ctx.addIssue({
        code: 'custom',
        path: ['command'],
        message: `contains "{prompt}" but promptVia is ${agent.promptVia ?? 'arg (the default)'}: set promptVia: placeholder`,
      });
    }
  })
  .describe('The agent CLI that runs instruction steps. A step-level agent replaces defaults.agent whole.');

/** `sandbox:` of a step or of `defaults`. */
function sandboxSchema(description: string) {
  return z
    .enum(SANDBOX_MODES, {
      error: (issue) => `${describeValue(issue.input)} is not allowed: use workspace or none`,
    })
    .describe(description);
}

const retrySchema = strictObject(
  {
    maxAttempts: z
      .number()
      .int()
      .min(1)
      .max(100)
      .optional()
      .describe('Attempts in total, the first included (1..100). Default 3.'),
    initialDelayMs: durationSchema(
      'Delay before the second attempt; not more than maxDelayMs. Default 1s.',
    ).optional(),
    factor: z
      .number()
      .min(1)
      .max(1000)
      .optional()
      .describe('Multiplier of the delay after each failed attempt (>= 1). Default 2.'),
    maxDelayMs: durationSchema('Upper bound of any delay between attempts. Default 5m.').optional(),
    maxInterruptions: z
      .number()
      .int()
      .min(0)
      .max(1000)
      .optional()
      .describe(
        'Attempts ended by a dead worker or an expired lease allowed before the step is blocked (0..1000); they do not spend maxAttempts. Default 10.',
      ),
  },
  'a retry policy: { maxAttempts?, initialDelayMs?, factor?, maxDelayMs?, maxInterruptions? }',
).describe('Retry policy; the fields given are merged over defaults.retry, then over the built-in defaults.');

const budgetShape = {
  maxWallMs: durationSchema(
    "Wall-clock limit: from the run's creation (limits) or the step's first attempt (budget).",
  ).optional(),
  maxTokens: z
    .number()
    .int()
    .min(1)
    .optional()
    .describe('Input + output tokens reported by model steps and agent CLIs.'),
  maxCostUsd: z
    .number()
    .positive()
    .optional()
    .describe('US dollars, from reported costs or the price table.'),
};

const budgetSchema = strictObject(budgetShape, 'a budget: { maxWallMs?, maxTokens?, maxCostUsd? }').describe(
  'Limits of this step across its attempts; reaching one blocks the step (class budget).',
);

const fallbackSchema = strictObject(
  {
    instruction: z
      .string()
      .min(1)
      .optional()
      .describe("A prompt for an agent (the step's agent unless agent is given)."),
    agent: agentSchema.optional(),
    fn: z
      .string()
      .min(1)
      .optional()
      .describe('A registered function, e.g. a template that writes a plain result.'),
    args: jsonValueSchema.optional().describe('JSON passed to the fallback function.'),
    model: modelSchema.optional(),
  },
  'a fallback: { instruction, fn or model }',
).describe(
  "Another executor run when the step's retries are used up or its budget blocks it; the step then ends degraded and the run goes on.",
);

const compensateSchema = z
  .union(
    [
      z.string().min(1),
      strictObject(
        {
          instruction: z
            .string()
            .min(1)
            .optional()
            .describe("A prompt for an agent (the step's agent unless agent is given)."),
          agent: agentSchema.optional(),
          fn: z.string().min(1).optional().describe('A registered function that undoes the step.'),
          args: jsonValueSchema.optional().describe('JSON passed to the function.'),
          model: modelSchema.optional(),
        },
        'a compensation: an instruction, or { instruction, fn or model }',
      ),
    ],
    {
      error: (issue) =>
        `expected an instruction, or { instruction, fn or model }, got ${describeValue(issue.input)}`,
    },
  )
  .describe(
    "What undoes this step once it completed: an instruction for the step's agent, or { instruction, fn or model }. Run when the run is cancelled with --compensate or given up (onFailure: compensate): one compensation per completed step (per completed item of a forEach), in reverse order, once; a step that did not complete is not compensated. May use {{steps.<id>...}} of this step and its dependencies, and {{run.status}}.",
  );

const subPlanSchema = strictObject(
  {
    path: z
      .string({
        error: (issue) => `expected a plan file, e.g. ./fix-repo.yaml, got ${describeValue(issue.input)}`,
      })
      .min(1)
      .optional()
      .describe("The child plan's file, relative to this plan file's folder (give path or name)."),
    name: z
      .string({
        error: (issue) => `expected the name of a plan, e.g. fix-repo, got ${describeValue(issue.input)}`,
      })
      .min(1)
      .optional()
      .describe(
        'The name of a plan Baton already knows (give path or name): a workflow registered in the program (TypeScript API), else the plan of a schedule whose plan has that name, else the plan of the newest run of that name in this home. Found when the run starts; the child runs that plan as it was then.',
      ),
    inputs: z
      .record(z.string(), z.string({ error: (issue) => `expected text, got ${describeValue(issue.input)}` }))
      .optional()
      .describe(
        "The child run's inputs: templates over inputs.<name>, the results of the steps this one depends on, and {{item}} under forEach.",
      ),
  },
  'a sub-plan: { path or name, inputs? }',
).describe(
  "Run another plan as a child run (makes this a sub-plan step): the step waits, holding no worker slot, until the child ends; its result is the child's output (its plan's output:, else its step results) once it succeeded, else the step fails. Under forEach, one child per item.",
);

const stepSchema = strictObject(
  {
    id: idSchema('step id').describe('Unique step id: 1-64 letters, digits, "_" or "-".'),
    title: z.string().min(1).optional().describe('Human title. Defaults to the id.'),
    instruction: z
      .string()
      .min(1)
      .optional()
      .describe(
        'Prompt for the agent (makes this an agent step). May use {{inputs.<name>}}, {{steps.<id>.summary}}, {{steps.<id>.outputs}}, {{steps.<id>.result}}, {{steps.<id>.result.<path>}} (for steps it depends on), {{run.workspace}}, {{run.id}}.',
      ),
    fn: z
      .string()
      .min(1)
      .optional()
      .describe('Name of a registered TypeScript function (makes this a function step).'),
    args: jsonValueSchema.optional().describe('Any JSON value, passed to the function of a fn step.'),
    model: modelSchema.optional(),
    agent: agentSchema.optional(),
    wait: waitSchema.optional(),
    plan: subPlanSchema.optional(),
    dependsOn: z
      .array(z.string(), {
        error: (issue) => `expected a list of step ids, e.g. [fetch], got ${describeValue(issue.input)}`,
      })
      .optional()
      .describe('Ids of the steps that must succeed before this one starts.'),
    when: z
      .string({
        error: (issue) =>
          `expected a condition as text, e.g. "steps.check.result.passed == false", got ${describeValue(issue.input)}`,
      })
      .min(1, { error: 'expected a condition, e.g. "steps.check.result.passed == false", got an empty text' })
      .optional()
      .describe(
        'A condition (CEL) over inputs.<name> and steps.<id>.result / steps.<id>.status of the steps it depends on, e.g. steps.check.result.passed == false. False: the step is skipped (with the reason) and its dependents go on. Default: always run.',
      ),
    requiredOutputs: z
      .array(z.string().min(1), {
        error: (issue) => `expected a list of paths, e.g. [notes.md], got ${describeValue(issue.input)}`,
      })
      .optional()
      .describe('Files the step must leave, relative to the run workspace; the step fails without them.'),
    resultFile: resultFileSchema.optional(),
    resultSchema: resultSchemaSchema.optional(),
    verify: verifySchema.optional(),
    sideEffect: z
      .enum(['none', 'idempotent', 'unsafe'], {
        error: (issue) => `expected none, idempotent or unsafe, got ${describeValue(issue.input)}`,
      })
      .optional()
      .describe(
        'What running the step twice would do: none (safe to repeat), idempotent (repeating is harmless, e.g. keyed by BATON_IDEMPOTENCY_KEY), unsafe (an interrupted attempt is an unknown outcome for a human, never retried blindly). Default none.',
      ),
    budget: budgetSchema.optional(),
    flow: flowSchema(
      'Keyed flow control: { key: "customer:{{inputs.customer}}", concurrency: 1, rate: "10/m" }: its attempts count against the key rendered for its run, and the limit applies to each key it renders to, unless an operator set one for that key (baton flow set). Default: defaults.flow. Not with flowKey.',
    ).optional(),
    flowKey: flowKeySchema(
      "Flow-control key its attempts count against (limits: baton flow set <key>). Default: defaults.flowKey, else the executor: the agent command's base name (claude), the model provider (openai) or fn:<name>.",
    ).optional(),
    fallback: fallbackSchema.optional(),
    sandbox: sandboxSchema(
      "Confinement of this step's agent (and agent fallback): workspace runs it under bubblewrap (the workspace and the CLI's own config folders writable, a private /tmp, everything else read-only, the Baton home hidden; network kept), none runs it unconfined. Default: defaults.sandbox, else none. Refused where bubblewrap cannot run (baton agents says why).",
    ).optional(),
    checkpoint: checkpointSchema(
      "Agent steps: workspace records the workspace's files before each attempt (and after it) in a private store under the Baton home, so that rerun and fork --from this step, and rollback, put them back as they were before it; none records nothing; { exclude: [...] } is workspace with more left out. .git/ and node_modules/ are always left out. Default: defaults.checkpoint, else none.",
    ).optional(),
    shadowResult: jsonValueSchema
      .optional()
      .describe(
        'In a shadow run, the result this step passes on instead of running (when it has a side effect). Default null.',
      ),
    retry: retrySchema.optional(),
    timeoutMs: timeoutSchema(
      'Timeout of one attempt of this step. Default: defaults.timeoutMs, else 1h.',
    ).optional(),
    heartbeatTimeoutMs: silenceTimeoutSchema(
      "Function steps: how long the function may go without calling ctx.heartbeat() before its attempt is stopped as stalled: a step.stalling event at half of it, then its signal is aborted, the attempt ends transient and is retried (an unsafe step is blocked unknown_outcome). Counted from the attempt's start. Default: none (only timeoutMs); 0 is none.",
    ).optional(),
    delayBeforeMs: durationSchema(
      'Durable delay before the first attempt of this step. Default: defaults.delayBeforeMs, else 0.',
    ).optional(),
    notBefore: notBeforeSchema.optional(),
    priority: prioritySchema(
      "Claim priority of this step, 0 to 9, higher first (aged: see BATON_PRIORITY_AGING). Default: its run's priority (baton run --priority, else the plan's priority), else 0.",
    ).optional(),
    forEach: forEachSchema.optional(),
    compensate: compensateSchema.optional(),
  },
  'a step: { id, instruction, fn or model, ... }',
).meta({
  description:
    'One step: exactly one of instruction (agent step), fn (function step), model (model step) or wait (a step that waits for a person or an event).',
  // For editors; Baton itself checks this in normalize.ts with a clearer message.
  oneOf: [
    { required: ['instruction'] },
    { required: ['fn'] },
    { required: ['model'] },
    { required: ['wait'] },
  ],
});

const inputSchema = strictObject(
  {
    default: z
      .union([z.string(), z.number(), z.boolean()])
      .optional()
      .describe('Value used when the run does not give one. Without it the input is required.'),
    description: z.string().optional().describe('What the input is for.'),
  },
  'an input: { default?, description? } (or nothing, for a required input)',
)
  .nullable()
  .describe('A run input. Empty (null or {}) means required.');

const defaultsSchema = strictObject(
  {
    agent: agentSchema.optional(),
    retry: retrySchema.optional(),
    timeoutMs: timeoutSchema('Timeout of one attempt, for every step. Default 1h.').optional(),
    delayBeforeMs: durationSchema(
      'Durable delay before the first attempt of every step. Default 0.',
    ).optional(),
    flowKey: flowKeySchema('Flow-control key of every step that does not set its own.').optional(),
    flow: flowSchema(
      'Keyed flow control of every step that sets neither flow nor flowKey: { key, concurrency?, rate? }.',
    ).optional(),
    sandbox: sandboxSchema(
      'Confinement of every agent step that does not set its own: workspace or none. Default none.',
    ).optional(),
    checkpoint: checkpointSchema(
      'Workspace checkpoints of every agent step that does not set its own: workspace, none or { exclude: [...] }. Default none.',
    ).optional(),
  },
  'defaults: { agent?, retry?, timeoutMs?, delayBeforeMs?, flowKey?, flow?, sandbox?, checkpoint? }',
).describe('Applied to every step that does not set the field itself.');

const limitsSchema = strictObject(
  {
    maxSteps: z
      .number()
      .int()
      .min(1)
      .max(100_000)
      .optional()
      .describe('Step attempts per run, all steps together (1..100000). Default 50.'),
    noProgressAfter: z
      .number()
      .int()
      .min(2)
      .optional()
      .describe('Block a step after the same failure fingerprint this many times (>= 2). Default 3.'),
    concurrency: z
      .number()
      .int()
      .min(1)
      .max(256)
      .optional()
      .describe('Steps of one run that may run in parallel (1..256). Default 4.'),
    ...budgetShape,
  },
  'limits: { maxSteps?, noProgressAfter?, concurrency?, maxWallMs?, maxTokens?, maxCostUsd? }',
).describe('Guardrails of a run.');

const hookSchema = strictObject(
  {
    on: z
      .array(
        z.enum(['blocked', 'failed', 'succeeded', 'budget', 'waiting', 'cancelled'], {
          error: (issue) =>
            `expected blocked, failed, succeeded, budget, waiting or cancelled, got ${describeValue(issue.input)}`,
        }),
      )
      .min(1)
      .describe(
        'Events that call the hook: blocked (run blocked), failed (an attempt failed), succeeded (run done), budget (a budget reached), waiting (a step started waiting, or a running agent holds a tool call for a person: the payload carries what it waits for and the URLs or commands that answer it), cancelled (run cancelled).',
      ),
    command: z
      .array(argvElementSchema)
      .min(1)
      .optional()
      .describe('A command as argv (never a shell string); it gets the event as JSON on stdin.'),
    url: z
      .url({ protocol: /^https?$/, error: 'expected an http(s) URL' })
      .refine((url) => hookUrlProblem(url) === null, {
        error:
          'a hook URL cannot hold a user name or password (user:password@): fetch refuses such URLs, and the plan is stored as written; put the credential where the receiver accepts it, or call a hook command that reads it from its environment',
      })
      .optional()
      .describe('A URL that gets the event as a JSON POST.'),
    urlEnv: z
      .string()
      .regex(ENV_NAME_PATTERN, {
        error: 'expected the name of an environment variable, e.g. SLACK_WEBHOOK_URL',
      })
      .optional()
      .describe(
        'The name of an environment variable holding the URL, read when the hook is called and never stored: for webhook URLs that carry their token.',
      ),
    format: z
      .enum(HOOK_FORMATS, {
        error: (issue) => `expected json, slack, discord, feishu or ntfy, got ${describeValue(issue.input)}`,
      })
      .optional()
      .describe(
        "The body's shape: json (Baton's payload, default), or what that service's incoming webhook takes: slack, discord, feishu (a custom bot's card) or ntfy (url: the topic URL, e.g. https://ntfy.sh/my-topic).",
      ),
    timeoutMs: timeoutSchema('Timeout of one call. Default 10s.').optional(),
    retries: z
      .number()
      .int()
      .min(0)
      .max(10)
      .optional()
      .describe('Calls after a failed one, with backoff. Default 3.'),
  },
  'a hook: { on, command, url or urlEnv, format?, timeoutMs?, retries? }',
).describe('A notification: exactly one of command, url or urlEnv.');

export const planFileSchema = strictObject(
  {
    $schema: z.string().optional().describe('JSON Schema reference for editors; ignored by Baton.'),
    version: z
      .literal(1, { error: (issue) => `only version 1 is supported, got ${describeValue(issue.input)}` })
      .optional()
      .describe('Plan format version. Only 1.'),
    name: nameSchema('plan name', PLAN_NAME_PATTERN, '1-100 letters, digits, ".", "_" or "-"').describe(
      'Plan name: 1-100 letters, digits, ".", "_" or "-".',
    ),
    description: z.string().optional().describe('What the plan does.'),
    workspace: z
      .string({
        error: (issue) =>
          issue.input === null
            ? 'is empty (in YAML, ~ alone means nothing, not your home folder): name a folder, e.g. ./work'
            : `expected a folder, got ${describeValue(issue.input)}`,
      })
      .min(1)
      .optional()
      .describe('Working directory of runs, relative to the folder of the plan file.'),
    inputs: z
      .record(idSchema('input name'), inputSchema, {
        error: (issue) =>
          `expected the inputs as a mapping of names, e.g. { topic: { default: x } }, got ${describeValue(issue.input)}`,
      })
      .optional()
      .describe('Named run inputs, used in instructions as {{inputs.<name>}}.'),
    defaults: defaultsSchema.optional(),
    limits: limitsSchema.optional(),
    priority: prioritySchema(
      "Claim priority of runs of this plan, 0 to 9, higher first; baton run --priority overrides it, a step's own priority overrides both. Default 0.",
    ).optional(),
    hooks: z
      .array(hookSchema)
      .optional()
      .describe('Notifications on blocked, failed, succeeded and budget events.'),
    shadow: z
      .union(
        [
          z.boolean(),
          z.strictObject({
            approvals: z
              .enum(['approve', 'reject', 'wait'])
              .optional()
              .describe(
                'How a wait for approval is decided in a shadow run: approve (default) or reject at once, recorded as by shadow, or wait for a person.',
              ),
          }),
        ],
        {
          error: (issue) =>
            `expected true, false or { approvals: approve | reject | wait }, got ${describeValue(issue.input)}`,
        },
      )
      .optional()
      .describe(
        'Shadow run: steps with a side effect are recorded (step.would_execute), not executed. true, or { approvals: approve | reject | wait }.',
      ),
    steps: z
      .array(stepSchema, {
        error: (issue) => `expected a list of steps, got ${describeValue(issue.input)}`,
      })
      .min(1, { error: 'a plan needs at least one step' })
      .describe('The steps, in order. Steps run once their dependsOn have succeeded.'),
    finally: z
      .array(stepSchema, {
        error: (issue) => `expected a list of steps, got ${describeValue(issue.input)}`,
      })
      .optional()
      .describe(
        'Steps run once when the run ends, in any state (succeeded, failed, cancelled), after any compensations; {{run.status}} says how it ended. They depend only on each other; a step result they name is empty when that step has none. Until they are done the run shows e.g. cancelled (cleanup 1/2 done).',
      ),
    output: z
      .string({ error: (issue) => `expected a template as text, got ${describeValue(issue.input)}` })
      .min(1)
      .optional()
      .describe(
        'What a run of this plan gives the step that ran it as a sub-plan (plan:): a template over its steps\' results, e.g. "{{steps.pr.result.url}}". Default: its steps\' results by step id.',
      ),
    onFailure: z
      .enum(['block', 'compensate'], {
        error: (issue) => `expected block or compensate, got ${describeValue(issue.input)}`,
      })
      .optional()
      .describe(
        'What a step blocked for good does to the run: block (default) waits for a person; compensate gives the run up: every step not done is cancelled, the completed steps are compensated (compensate:), finally: runs, and the run ends failed. A plain baton cancel then compensates too.',
      ),
  },
  'a plan: a mapping with at least name and steps',
).meta({
  title: 'Baton plan',
  description: 'A Baton plan: named steps run by agents or functions, with retries.',
});

/** A plan file that passed the schema, before defaults and cross-reference checks. */
export type PlanFile = z.output<typeof planFileSchema>;
export type PlanFileStep = PlanFile['steps'][number];

/** The JSON Schema of the plan format (draft-07, which editors support best). */
export function planJsonSchema(): Record<string, unknown> {
  return z.toJSONSchema(planFileSchema, { target: 'draft-7', io: 'input', unrepresentable: 'any' });
}

/** The JSON Schema as committed in `schema/plan.schema.json`. */
export function planJsonSchemaText(): string {
  return `${JSON.stringify(planJsonSchema(), null, 2)}\n`;
}
