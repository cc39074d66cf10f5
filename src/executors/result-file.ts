import { constants } from 'node:fs';
import { open, realpath } from 'node:fs/promises';
import path from 'node:path';
import { parseJsonWithLimits } from '../core/json-text.js';
import { compileSchema, describeViolations } from './result-schema.js';

/**
 * An agent step's `resultFile`, read once the agent has exited and its required outputs are there:
 * the file must resolve (symlinks followed) to a regular file inside the workspace, be at most
 * RESULT_FILE_MAX_BYTES, hold one strict JSON value within the JSON limits (nesting, no repeated
 * key), and match the step's `resultSchema`. Each problem is the agent's to fix, so the message
 * names the file and what is wrong, and the retry's troubleshoot prompt quotes it.
 */

/** 1 MiB: a result is data for later steps' prompts, not a document (those are requiredOutputs). */
export const RESULT_FILE_MAX_BYTES = 1024 * 1024;

type ResultFileRead = { ok: true; value: unknown } | { ok: false; message: string };

export async function readResultFile(
  workspace: string,
  file: string,
  schema: Record<string, unknown> | undefined,
): Promise<ResultFileRead> {
  const name = `resultFile ${file}`;
  const fail = (problem: string): ResultFileRead => ({ ok: false, message: `${name} ${problem}` });
  const root = await realpath(workspace).catch(() => null);
  if (root === null) return fail(`cannot be read: the workspace ${workspace} does not exist`);
  // Checked when the plan was validated; checked again for a plan stored before that rule.
  if (path.isAbsolute(file) || path.normalize(file).split(path.sep).includes('..')) {
    return fail('is not a path inside the workspace: name it relative to the workspace');
  }
  const declared = path.join(root, path.normalize(file));
  const real = await realpath(declared).catch(() => null);
  if (real === null) {
    return fail(`was not written: write the step's result as JSON to ${file} in the workspace ${workspace}`);
  }
  const relative = path.relative(root, real);
  if (
    relative === '' ||
    relative === '..' ||
    relative.startsWith(`..${path.sep}`) ||
    path.isAbsolute(relative)
  ) {
    return fail(
      `resolves through a symlink to ${real}, outside the workspace ${workspace}: write the file itself in the workspace`,
    );
  }
  const read = await readBounded(real);
  if ('problem' in read) return fail(read.problem);
  const text = read.text.replace(/^\uFEFF/, '');
  let parsed: ReturnType<typeof parseJsonWithLimits>;
  try {
    parsed = parseJsonWithLimits(text);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    return fail(`is not valid JSON (${reason}): write one JSON value, e.g. {"passed": true}`);
  }
  if ('problem' in parsed) {
    return { ok: false, message: `${name}:${parsed.line}:${parsed.column}: ${parsed.problem}` };
  }
  if (schema === undefined) return { ok: true, value: parsed.value };
  const compiled = compileSchema(schema);
  if (!compiled.ok)
    return fail(
      `cannot be checked: the step's resultSchema is not a valid JSON Schema (${compiled.problem})`,
    );
  if (compiled.validate(parsed.value)) return { ok: true, value: parsed.value };
  return fail(
    `does not match the step's resultSchema: ${describeViolations(compiled.validate.errors ?? [])}`,
  );
}

/**
 * The file's text, read through one descriptor: not a symlink (the realpath was checked), not a
 * FIFO or device (opened without blocking, then refused), and never more than the limit + 1 bytes.
 */
async function readBounded(file: string): Promise<{ text: string } | { problem: string }> {
  const handle = await open(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK).catch(
    (error: NodeJS.ErrnoException) => error,
  );
  if (handle instanceof Error) return { problem: `cannot be read (${handle.code ?? handle.message})` };
  try {
    const info = await handle.stat();
    if (!info.isFile()) return { problem: 'is not a regular file: write the JSON result to a file' };
    if (info.size > RESULT_FILE_MAX_BYTES) return { problem: tooLarge(info.size) };
    const buffer = Buffer.alloc(RESULT_FILE_MAX_BYTES + 1);
    let length = 0;
    while (length < buffer.length) {
      const { bytesRead } = await handle.read(buffer, length, buffer.length - length, length);
      if (bytesRead === 0) break;
      length += bytesRead;
    }
    if (length > RESULT_FILE_MAX_BYTES) return { problem: tooLarge(length) };
    const text = new TextDecoder('utf-8', { fatal: true }).decode(buffer.subarray(0, length));
    return { text };
  } catch (error) {
    if (error instanceof TypeError)
      return { problem: 'is not UTF-8 text: write the result as JSON in UTF-8' };
    throw error;
  } finally {
    await handle.close();
  }
}

function tooLarge(bytes: number): string {
  return `is ${bytes} bytes, over the limit of 1 MiB (${RESULT_FILE_MAX_BYTES} bytes): write a smaller result, and put large content in a file named in requiredOutputs`;
}
