import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';
import { BatonError } from '../core/errors.js';
import { MAX_PAYLOAD_BYTES, payloadTooLarge, strictUtf8 } from '../core/payload-limit.js';

/**
 * The text of a file a person hands over as a payload or a result (`baton send --data @file`,
 * `baton resolve --result <file>`): a regular file (checked on the opened descriptor, so a path
 * swapped after a check cannot slip in a device or a pipe), at most the payload limit (at most one
 * byte more is ever read, so `/dev/zero` or a file still growing cannot grow memory), and valid
 * UTF-8. `where` names the argument in every message (`--data @big.json`).
 */
export function readPayloadFile(path: string, where: string): string {
  let fd: number;
  try {
    // Non-blocking: a FIFO without a writer opens at once (and is refused below) instead of hanging.
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const reason =
      code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'permission denied' : (error as Error).message;
    throw new BatonError('INVALID_ARGUMENT', `${where}: cannot read ${path}: ${reason}`, { cause: error });
  }
  try {
    const info = fstatSync(fd);
    if (!info.isFile())
      throw new BatonError(
        'INVALID_ARGUMENT',
        `${where}: ${path} is not a regular file (a directory, a device or a pipe): give a file holding the value`,
      );
    if (info.size > MAX_PAYLOAD_BYTES) throw payloadTooLarge(where, info.size);
    const buffer = Buffer.allocUnsafe(MAX_PAYLOAD_BYTES + 1);
    let length = 0;
    for (;;) {
      const read = readSync(fd, buffer, length, buffer.length - length, null);
      if (read === 0) break;
      length += read;
      // It grew while it was read: more than the limit, however much more.
      if (length > MAX_PAYLOAD_BYTES) throw payloadTooLarge(where, length, true);
    }
    const text = strictUtf8(buffer.subarray(0, length));
    if (text === null)
      throw new BatonError(
        'INVALID_ARGUMENT',
        `${where}: ${path} is not valid UTF-8 text: save it as UTF-8 (nothing was stored)`,
      );
    return text;
  } finally {
    closeSync(fd);
  }
}
