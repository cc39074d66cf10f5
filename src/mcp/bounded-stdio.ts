import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  ErrorCode,
  type JSONRPCMessage,
  JSONRPCMessageSchema,
  type RequestId,
} from '@modelcontextprotocol/sdk/types.js';
import { strictUtf8 } from '../core/payload-limit.js';
import { MAX_MCP_REQUEST_BYTES, requestTooLargeMessage } from './request-limit.js';

/**
 * `baton mcp`'s stdio transport: newline-delimited JSON-RPC, as the SDK's StdioServerTransport
 * reads it, but every line bounded. The SDK's transport keeps a line in one buffer up to
 * `maxBufferSize` and past it throws and closes the transport: the host loses the server without an
 * answer. Here a line over the request limit is not kept (its bytes are counted and dropped up to
 * its newline, so memory stays bounded however long it is), and is answered with a JSON-RPC error
 * naming the limit; a line that is not UTF-8, not JSON or not a JSON-RPC message is answered with
 * the error JSON-RPC gives it. The session goes on either way.
 */

/** How many bytes of each end of an oversized line are kept, to find its request id. */
const EDGE_BYTES = 256;

/** A request's id in the first bytes of its line: `{"jsonrpc":"2.0","id":1,...` (other simple keys may come first). */
const ID_AT_START =
  /^\s*\{\s*(?:"(?:jsonrpc|method)"\s*:\s*"[^"\\]*"\s*,\s*)*"id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.){0,200}")/;
/** Or in its last: the SDK writes `{...,"jsonrpc":"2.0","id":1}`; a nested "id" is followed by more closing braces. */
const ID_AT_END = /"id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.){0,200}")\s*\}\s*$/;

export class BoundedStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  private chunks: Buffer[] = [];
  private size = 0;
  /** The line being dropped: its size so far and its two ends. */
  private oversized: { size: number; head: Buffer; tail: Buffer } | null = null;

  constructor(
    private readonly input: NodeJS.ReadableStream = process.stdin,
    private readonly output: NodeJS.WritableStream = process.stdout,
    private readonly maxLineBytes = MAX_MCP_REQUEST_BYTES,
  ) {}

  async start(): Promise<void> {
    this.input.on('data', this.onData);
    this.input.on('error', this.onInputError);
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve) => {
      if (this.output.write(`${JSON.stringify(message)}\n`)) resolve();
      else this.output.once('drain', resolve);
    });
  }

  async close(): Promise<void> {
    this.input.off('data', this.onData);
    this.input.off('error', this.onInputError);
    if (this.input.listenerCount('data') === 0) this.input.pause();
    this.chunks = [];
    this.oversized = null;
    this.onclose?.();
  }

  private readonly onInputError = (error: Error) => this.onerror?.(error);

  private readonly onData = (chunk: Buffer | string) => {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    for (let from = 0; ; ) {
      const newline = bytes.indexOf(0x0a, from);
      this.take(bytes.subarray(from, newline === -1 ? bytes.length : newline));
      if (newline === -1) return;
      this.endLine();
      from = newline + 1;
    }
  };

  /** Part of the current line: kept while the line is within the limit, else counted and dropped. */
  private take(part: Buffer): void {
    if (part.length === 0) return;
    if (this.oversized) {
      this.oversized.size += part.length;
      this.oversized.tail = lastBytes(Buffer.concat([this.oversized.tail, part]));
      return;
    }
    if (this.size + part.length <= this.maxLineBytes) {
      this.chunks.push(part);
      this.size += part.length;
      return;
    }
    const head = Buffer.concat([...this.chunks, part.subarray(0, EDGE_BYTES)]).subarray(0, EDGE_BYTES);
    this.oversized = { size: this.size + part.length, head: Buffer.from(head), tail: lastBytes(part) };
    this.chunks = [];
    this.size = 0;
  }

  private endLine(): void {
    if (this.oversized) {
      const { size, head, tail } = this.oversized;
      this.oversized = null;
      this.answerError(idOfOversized(head, tail), ErrorCode.InvalidRequest, requestTooLargeMessage(size));
      return;
    }
    const line = Buffer.concat(this.chunks);
    this.chunks = [];
    this.size = 0;
    this.dispatch(line);
  }

  private dispatch(line: Buffer): void {
    const text = strictUtf8(line)?.replace(/\r$/, '');
    if (text === undefined) {
      this.answerError(undefined, ErrorCode.ParseError, 'Parse error: the request is not valid UTF-8 text');
      return;
    }
    if (text.trim() === '') return;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      this.answerError(undefined, ErrorCode.ParseError, 'Parse error: the request is not JSON');
      return;
    }
    const parsed = JSONRPCMessageSchema.safeParse(value);
    if (!parsed.success) {
      const id = (value as { id?: unknown } | null)?.id;
      const known = typeof id === 'string' || typeof id === 'number' ? id : undefined;
      this.answerError(known, ErrorCode.InvalidRequest, 'Invalid Request: not a JSON-RPC 2.0 message');
      return;
    }
    this.onmessage?.(parsed.data);
  }

  /** A JSON-RPC error answer; without a known id it has none (the SDK's schema takes no null id). */
  private answerError(id: RequestId | undefined, code: number, message: string): void {
    this.onerror?.(new Error(message));
    const answer = { jsonrpc: '2.0' as const, ...(id === undefined ? {} : { id }), error: { code, message } };
    this.send(answer as JSONRPCMessage).catch((error: unknown) => this.onerror?.(error as Error));
  }
}

function lastBytes(bytes: Buffer): Buffer {
  return bytes.length <= EDGE_BYTES ? bytes : Buffer.from(bytes.subarray(bytes.length - EDGE_BYTES));
}

/** The id of an oversized request, from its first or last bytes; undefined when neither shows it. */
function idOfOversized(head: Buffer, tail: Buffer): RequestId | undefined {
  const found = ID_AT_START.exec(head.toString('utf8'))?.[1] ?? ID_AT_END.exec(tail.toString('utf8'))?.[1];
  if (found === undefined) return undefined;
  try {
    const id = JSON.parse(found) as unknown;
    return typeof id === 'number' || typeof id === 'string' ? id : undefined;
  } catch {
    return undefined;
  }
}
