import { BatonError } from '../errors.js';
import { ExpressionLimitError } from '../expression-meter.js';
import { itemText, listTemplateRefs, substituteRefs } from '../plan/template.js';
import {
  checkWhen,
  evaluateTriggerCondition,
  firstLineOf,
  parseWhen,
  TRIGGER_VARIABLES,
} from '../when-language.js';

/**
 * Webhook triggers: a signed HTTP delivery (`POST /hooks/<name>` of `baton serve`) becomes exactly
 * one run whose id names the trigger and the delivery, so a redelivery finds the run it started.
 * The rules here are pure: names, the run id, the condition and the inputs rendered from the body.
 * Verifying a signature is the runtime's (runtime/triggers/verify-delivery.ts).
 */

/** How a delivery proves it comes from the sender (`--source`). */
export const TRIGGER_SOURCES = ['github', 'slack', 'stripe', 'hmac', 'bearer'] as const;
export type TriggerSource = (typeof TRIGGER_SOURCES)[number];

/** The largest body a trigger reads: a bigger one is answered 413 and not read further. */
export const MAX_DELIVERY_BYTES = 1024 * 1024;

/** What a delivery says about itself, beside its body: `event.*` in `--when` and input templates. */
export interface DeliveryEvent {
  /** The trigger's source. */
  source: TriggerSource;
  /** The sender's event type (GitHub's X-GitHub-Event, Stripe's and Slack's `type`), else "". */
  type: string;
  /** The delivery id the run id is made from. */
  id: string;
}

const TRIGGER_NAME = /^[A-Za-z0-9_-]{1,24}$/;

/** Refuses a trigger name that cannot start a run id (at most 24 of [A-Za-z0-9_-]). */
export function validateTriggerName(name: string): string {
  if (!TRIGGER_NAME.test(name))
    throw new BatonError(
      'INVALID_ARGUMENT',
      `trigger name "${name}" must match [A-Za-z0-9_-]{1,24} (it starts the id of every run it starts), e.g. issues`,
    );
  return name;
}

export function parseTriggerSource(value: string): TriggerSource {
  if ((TRIGGER_SOURCES as readonly string[]).includes(value)) return value as TriggerSource;
  throw new BatonError(
    'INVALID_ARGUMENT',
    `--source ${value}: expected one of ${TRIGGER_SOURCES.join(', ')}`,
  );
}

/**
 * The id of the run a delivery starts: `<trigger>-<delivery id>` when the id is made of run-id
 * characters and fits in 64, else `<trigger>-h<hash of the delivery id>` (`hash`: a hex digest of
 * it the caller computed, at least 24 digits).
 */
export function deliveryRunId(trigger: string, deliveryId: string, hash: (text: string) => string): string {
  const plain = `${trigger}-${deliveryId}`;
  if (/^[A-Za-z0-9_-]+$/.test(deliveryId) && plain.length <= 64) return plain;
  return `${trigger}-h${hash(deliveryId).slice(0, 32)}`;
}

/**
 * The problems of a trigger's `--when` (CEL over `event` and `body`, true or false) and of its
 * input templates (`{{body.<path>}}`, `{{event.type}}`, `{{event.id}}`, `{{event.source}}`):
 * refused when the trigger is added, not at its first delivery.
 */
export function triggerProblems(when: string | null, inputs: Readonly<Record<string, string>>): string[] {
  const problems: string[] = [];
  if (when !== null) {
    try {
      parseWhen(when, TRIGGER_VARIABLES);
      const checked = checkWhen(when, TRIGGER_VARIABLES);
      if (!checked.valid) problems.push(`--when ${JSON.stringify(when)}: ${firstLineOf(checked.error)}`);
      else if (checked.type !== 'bool' && checked.type !== 'dyn')
        problems.push(`--when ${JSON.stringify(when)} is of type ${checked.type}, not true or false`);
    } catch (error) {
      problems.push(
        error instanceof ExpressionLimitError
          ? `--when: the expression ${error.message}`
          : `--when ${JSON.stringify(when)} does not parse: ${firstLineOf(error)}; e.g. --when 'body.action == "opened"'`,
      );
    }
  }
  for (const [name, text] of Object.entries(inputs)) {
    for (const ref of listTemplateRefs(text)) {
      const [head, ...path] = ref.path;
      const known =
        (head === 'body' && path.every((key) => key.length > 0)) ||
        (head === 'event' && path.length === 1 && ['type', 'id', 'source'].includes(path[0]!));
      if (!known)
        problems.push(
          `-i ${name}: ${ref.raw} is not a delivery reference; use {{body.<path>}}, {{event.type}}, {{event.id}} or {{event.source}}`,
        );
    }
  }
  return problems;
}

/** Whether a delivery passes the trigger's `--when`; a condition that is not true or false is a refusal. */
export function deliveryWanted(
  when: string | null,
  event: DeliveryEvent,
  body: unknown,
): { wanted: boolean } | { invalid: string } {
  if (when === null) return { wanted: true };
  let value: unknown;
  try {
    value = evaluateTriggerCondition(when, { event: { ...event }, body });
  } catch (error) {
    return { invalid: `--when ${when}: ${firstLineOf(error)}` };
  }
  if (typeof value !== 'boolean')
    return { invalid: `--when ${when}: gave ${typeof value}, not true or false` };
  return { wanted: value };
}

/**
 * The run's inputs: each template rendered over the delivery (`{{body.issue.title}}`: the field as
 * text, JSON for a list or a map). A field the body lacks is an error naming the input.
 */
export function renderDeliveryInputs(
  inputs: Readonly<Record<string, string>>,
  event: DeliveryEvent,
  body: unknown,
): Record<string, string> {
  const rendered: Record<string, string> = {};
  for (const [name, text] of Object.entries(inputs)) {
    rendered[name] = substituteRefs(text, (raw, path) => {
      const [head, ...rest] = path;
      const source = head === 'event' ? event : head === 'body' ? body : undefined;
      const found = source === undefined ? undefined : itemText(source, rest);
      if (found === undefined)
        throw new BatonError(
          'INVALID_ARGUMENT',
          `input ${name}: ${raw}: the delivery has no ${path.join('.')}`,
        );
      return found;
    });
  }
  return rendered;
}

/** The one message for an unknown trigger name, wherever it is looked up. */
export function triggerNotFound(name: string): BatonError {
  return new BatonError(
    'TRIGGER_NOT_FOUND',
    `no trigger named "${name}" (list them with: baton trigger list)`,
  );
}
