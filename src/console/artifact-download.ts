import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import type { ServerResponse } from 'node:http';
import { basename } from 'node:path';
import { checkOutputPath, lexicalPathProblem } from '../executors/workspace-paths.js';
import type { AttemptRecord } from '../runtime/types.js';
import { SECURITY_HEADERS } from './respond.js';

/** Why a download is refused: 403 for a path that leaves the workspace, 404 for one that is not there. */
type DownloadRefusal = { status: 403 | 404; message: string };

/**
 * The file of an artifact, or why it is refused. The workspace rules of requiredOutputs decide
 * (workspace-paths.ts): no absolute path, no `..`, no symlink out of the workspace; and only a
 * file the attempt recorded as an output is served.
 */
export async function artifactFile(
  workspace: string,
  attempt: AttemptRecord,
  relPath: string,
): Promise<{ file: string; size: number } | DownloadRefusal> {
  const lexical = lexicalPathProblem(relPath);
  if (lexical !== null) return { status: 403, message: `artifact path ${lexical}` };
  const check = await checkOutputPath(workspace, relPath);
  if (!check.ok) {
    const status = check.problem === 'missing' ? 404 : 403;
    return { status, message: check.message.replace(/^requiredOutputs /, 'artifact ') };
  }
  if (!attempt.outputs.some((output) => output.path === relPath))
    return {
      status: 404,
      message: `${JSON.stringify(relPath)} is not an artifact of attempt ${attempt.attempt}`,
    };
  const info = await stat(check.absPath);
  if (!info.isFile()) return { status: 404, message: `${JSON.stringify(relPath)} is not a file` };
  return { file: check.absPath, size: info.size };
}

/** Streams the file as a download (never rendered by the browser). */
export function sendDownload(res: ServerResponse, file: string, size: number): void {
  const name = basename(file);
  const ascii = name.replace(/[^A-Za-z0-9._-]/g, '_');
  res.writeHead(200, {
    ...SECURITY_HEADERS,
    'Content-Type': 'application/octet-stream',
    'Content-Length': String(size),
    'Content-Disposition': `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(name)}`,
    'Content-Security-Policy': "default-src 'none'; sandbox",
  });
  createReadStream(file)
    .on('error', () => res.destroy())
    .pipe(res);
}
