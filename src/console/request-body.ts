import type { IncomingMessage } from 'node:http';

/**
 * A request's body, or null once it is larger than `maxBytes`. Past the cap nothing more is kept,
 * but the rest is still read and dropped rather than the request destroyed: a client that is still
 * sending gets the answer (413), and its connection stays usable for its next request (destroying
 * the request would reset the socket under a keep-alive client's next request).
 */
export function readBoundedBody(request: IncomingMessage, maxBytes: number): Promise<Buffer | null> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const stop = () => {
      request.off('data', onData);
      request.off('end', onEnd);
      request.off('error', onError);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= maxBytes) {
        chunks.push(chunk);
        return;
      }
      stop();
      chunks.length = 0;
      // Still flowing without a listener: the rest is read and dropped.
      request.on('error', () => {});
      request.resume();
      resolve(null);
    };
    const onEnd = () => {
      stop();
      resolve(Buffer.concat(chunks));
    };
    const onError = (error: Error) => {
      stop();
      reject(error);
    };
    request.on('data', onData);
    request.on('end', onEnd);
    request.on('error', onError);
  });
}
