/**
 * The request limit of `baton mcp`: one JSON-RPC message (a line over stdio, a body over HTTP) is
 * at most this many bytes. It is above every tool's own limits (a plan's text: 1,000,000
 * characters, at most 6 MB as escaped JSON; an event's payload or a result: 1 MiB, the payload
 * limit), so a tool's argument is refused by the tool with its own limit's name, and only a request
 * larger than any tool takes meets this one: it is answered with a JSON-RPC error naming it, and
 * the server goes on serving the session.
 */
export const MAX_MCP_REQUEST_BYTES = 8 * 1024 * 1024;

/** The error answered to a request over the limit (`bytes`: its size, or how much arrived). */
export function requestTooLargeMessage(bytes: number): string {
  return `Request too large: ${bytes} bytes, more than the request limit of baton mcp, 8 MiB (${MAX_MCP_REQUEST_BYTES} bytes): send less (a plan's text is at most 1,000,000 characters, a payload or result 1 MiB); nothing was done`;
}
