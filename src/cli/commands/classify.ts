import { classifyRequest } from '../../core/classify-request.js';
import { BatonError } from '../../core/errors.js';
import { EXIT } from '../exit-codes.js';
import { printJson } from '../format.js';
import type { GlobalOptions } from '../global-options.js';

/** `baton classify "<request>"`: the skill's MULTI_STEP rule, with the criteria that fired. */
export async function classifyCommand(words: string[], options: GlobalOptions): Promise<number> {
  const request = words.join(' ').trim();
  if (request.length === 0)
    throw new BatonError(
      'INVALID_ARGUMENT',
      'give the request to classify, e.g. baton classify "research X, then write a report"',
    );
  const verdict = classifyRequest(request);
  if (options.json) {
    printJson(verdict);
    return EXIT.ok;
  }
  process.stdout.write(`${verdict.verdict}\n`);
  for (const criterion of verdict.fired)
    process.stdout.write(`  ${criterion}: ${(verdict.matches[criterion] ?? []).join(', ')}\n`);
  if (verdict.verdict === 'MULTI_STEP')
    process.stdout.write('propose a plan and wait for approval: baton propose <plan.yaml>\n');
  return EXIT.ok;
}
