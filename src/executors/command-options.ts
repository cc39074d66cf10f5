/**
 * Reading a program's options as getopt does, up to its first operand (the script an interpreter
 * runs, the command a wrapper runs), refusing on the way the options that run code. The grammar of
 * each program is data (command-policy-rules.ts); command-policy.ts decides what the operand must be.
 */
import { findRule, type OptionGrammar, PROMPT_PLACEHOLDER } from './command-policy-rules.js';

/** Why a command is refused, and how to fix it; `index`: the argv element at fault, when one is. */
export interface Refusal {
  why: string;
  fix: string;
  index?: number;
}

/** An option as scanOptions read it: `-C` or the whole long name (`--chdir`), with its value if it takes one. */
export interface ParsedOption {
  option: string;
  value?: string;
}

export type Scan =
  | { kind: 'operand'; index: number; text: string | undefined }
  | { kind: 'refused'; refusal: Refusal };

export const FIX = {
  direct: 'run the agent binary directly, e.g. ["claude","-p"]',
  script: 'put the code in a script file and run that, e.g. ["python3","agent.py"]',
  wrapped: 'name the agent after the wrapper, e.g. ["timeout","600","claude","-p"]',
  shape: 'pass the program and each argument as separate non-empty strings, e.g. ["claude","-p"]',
  environment: 'set the variable in the environment Baton runs in, if the operator wants it',
  legacy: 'move the call into a script file, or use a native plan, where agent CLIs may take -c and -e',
} as const;

/** Walks the options from argv[start] to the first operand, refusing options that run code. */
export function scanOptions(
  argv: readonly string[],
  start: number,
  rule: OptionGrammar,
  label: string,
  fix: string,
  seen: ParsedOption[] = [],
): Scan {
  const refuse = (why: string, fixHint: string = FIX.script, index?: number): Scan => ({
    kind: 'refused',
    refusal: { why, fix: fixHint, ...(index === undefined ? {} : { index }) },
  });
  const valueProblem = (option: string, value: string | undefined, i: number): Scan | null => {
    if (!rule.codeValue?.includes(option)) return null;
    if (value === undefined)
      return refuse(`${at(argv, i)} would load the appended prompt as code`, FIX.script, i);
    if (value === PROMPT_PLACEHOLDER)
      return refuse(`"{prompt}" after ${quote(option)} would be loaded as code`, FIX.script, i);
    if (/^data:/i.test(value))
      return refuse(`${at(argv, i)} makes ${label} load inline code from a data: URL`, FIX.script, i);
    return null;
  };
  const optionProblem = (option: string, i: number): Scan | null => {
    const clustered = argv[i] !== option && !argv[i]!.startsWith(`${option}=`);
    const spelled = clustered ? `${at(argv, i)} includes ${option}, which` : at(argv, i);
    if (rule.code?.includes(option))
      return refuse(`${spelled} makes ${label} run inline code`, FIX.script, i);
    const why = rule.refused !== undefined ? findRule(rule.refused, [option]) : undefined;
    return why === undefined ? null : refuse(`${spelled} makes ${label} ${why}`, fix, i);
  };
  for (let i = start; i < argv.length; i += 1) {
    const arg = argv[i]!;
    if (arg === '--') return operandAt(argv, i + 1);
    if (arg === '-' && rule.dashIsOption === true) {
      seen.push({ option: '-' });
      return operandAt(argv, i + 1);
    }
    if (!arg.startsWith('-') || arg === '-') return operandAt(argv, i);
    if (arg.startsWith('--')) {
      const eq = arg.indexOf('=');
      const name = longOption(eq === -1 ? arg : arg.slice(0, eq), rule);
      const inline = eq === -1 ? undefined : arg.slice(eq + 1);
      const problem = optionProblem(name, i);
      if (problem !== null) return problem;
      if (rule.scriptOption?.includes(name)) {
        return inline === undefined ? operandAt(argv, i + 1) : { kind: 'operand', index: i, text: inline };
      }
      if (rule.longValue?.includes(name) || rule.codeValue?.includes(name)) {
        const value = inline ?? argv[i + 1];
        const valueRefusal = valueProblem(name, value, i);
        if (valueRefusal !== null) return valueRefusal;
        seen.push(value === undefined ? { option: name } : { option: name, value });
        if (inline === undefined) i += 1;
      } else seen.push({ option: name });
      continue;
    }
    for (let j = 1; j < arg.length; j += 1) {
      const letter = arg.charAt(j);
      const option = `-${letter}`;
      const rest = arg.slice(j + 1);
      const problem = optionProblem(option, i);
      if (problem !== null) return problem;
      if (rule.scriptOption?.includes(option)) {
        return rest === '' ? operandAt(argv, i + 1) : { kind: 'operand', index: i, text: rest };
      }
      if (rule.shortValue?.includes(letter) || rule.codeValue?.includes(option)) {
        const value = rest === '' ? argv[i + 1] : rest;
        const valueRefusal = valueProblem(option, value, i);
        if (valueRefusal !== null) return valueRefusal;
        seen.push(value === undefined ? { option } : { option, value });
        if (rest === '') i += 1;
        break;
      }
      seen.push({ option });
      if (rule.shortAttached?.includes(letter)) break;
    }
  }
  return { kind: 'operand', index: argv.length, text: undefined };
}

/**
 * The long option `name` stands for: getopt_long accepts any unambiguous abbreviation (`--sp` is
 * `--split-string`). An abbreviation of a refused or code option is read as that option even when
 * it could also start another (the program would refuse it as ambiguous, or run it: refusing is safe).
 */
function longOption(name: string, rule: OptionGrammar): string {
  const refused = [...Object.keys(rule.refused ?? {}), ...(rule.code ?? []), ...(rule.codeValue ?? [])];
  const known = [
    ...refused,
    ...(rule.longValue ?? []),
    ...(rule.scriptOption ?? []),
    ...(rule.longFlags ?? []),
  ];
  if (name.length < 3 || known.includes(name)) return name;
  const dangerous = refused.filter((option) => option.startsWith('--') && option.startsWith(name));
  if (dangerous.length > 0) return dangerous[0]!;
  const matches = known.filter((option) => option.startsWith(name));
  return matches.length === 1 ? matches[0]! : name;
}

function operandAt(argv: readonly string[], index: number): Scan {
  return { kind: 'operand', index, text: argv[index] };
}

export function quote(value: unknown): string {
  return JSON.stringify(value);
}

export function at(argv: readonly string[], index: number): string {
  return `${quote(argv[index]!)} (argv[${index}])`;
}
