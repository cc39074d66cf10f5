import { type McpServer, ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import { SubscribeRequestSchema, UnsubscribeRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { BatonError } from '../core/errors.js';
import type { McpContext } from './mcp-context.js';
import { boundedValue } from './tool-output.js';
import { runStatusView } from './tools-runs.js';

/**
 * Each run as the resource `baton://runs/<id>`: its status as JSON (run_status's answer). A client
 * that subscribes to one is sent `notifications/resources/updated` when the run changes, so a host
 * follows a run without polling: the server looks at the store's newest event seq every `pollMs`
 * (one indexed read), and only when it moved, at each subscribed run's events after the last seen.
 * Everything is read through the command context's store, behind the masking boundary.
 */

const RUN_URI = /^baton:\/\/runs\/([A-Za-z0-9_-]{1,64})$/;

function runIdOf(uri: string): string {
  const match = RUN_URI.exec(uri);
  if (!match) throw new BatonError('INVALID_ARGUMENT', `${uri}: expected baton://runs/<run id>`);
  return match[1]!;
}

interface Subscription {
  runId: string;
  /** The seq of the newest event of the run already reported. */
  seenSeq: number;
}

export function registerRunResources(server: McpServer, ctx: McpContext, pollMs: number): { close(): void } {
  server.registerResource(
    'run',
    new ResourceTemplate('baton://runs/{runId}', {
      list: async () => {
        if (!ctx.hasStore()) return { resources: [] };
        const runs = await (await ctx.commands()).store.listRuns({ limit: 20 });
        return {
          resources: runs.map((run) => ({
            uri: `baton://runs/${run.id}`,
            name: `run ${run.id} (${run.planName}, ${run.status})`,
            mimeType: 'application/json',
          })),
        };
      },
    }),
    {
      description: "A Baton run's status as JSON (run_status's answer); subscribe to hear when it changes.",
      mimeType: 'application/json',
    },
    async (uri) => {
      const view = await runStatusView(ctx, runIdOf(uri.href));
      return {
        contents: [
          {
            uri: uri.href,
            mimeType: 'application/json',
            text: JSON.stringify(boundedValue(view, ctx.secrets)),
          },
        ],
      };
    },
  );

  const subscriptions = new Map<string, Subscription>();
  let lastSeq = -1;
  const newestSeqOf = async (runId: string) => {
    const events = await (await ctx.existingCommands()).store.getEvents(runId);
    return events.at(-1)?.seq ?? 0;
  };
  server.server.setRequestHandler(SubscribeRequestSchema, async (request) => {
    const uri = request.params.uri;
    const runId = runIdOf(uri);
    // The run must exist: a subscription to nothing would never hear anything.
    await runStatusView(ctx, runId);
    subscriptions.set(uri, { runId, seenSeq: await newestSeqOf(runId) });
    return {};
  });
  server.server.setRequestHandler(UnsubscribeRequestSchema, async (request) => {
    subscriptions.delete(request.params.uri);
    return {};
  });

  let polling = false;
  const poll = async () => {
    if (polling || subscriptions.size === 0) return;
    polling = true;
    try {
      const { store } = await ctx.existingCommands();
      const seq = await store.lastEventSeq();
      if (seq === lastSeq) return;
      lastSeq = seq;
      for (const [uri, subscription] of subscriptions) {
        const events = await store.getEvents(subscription.runId, { afterSeq: subscription.seenSeq });
        if (events.length === 0) continue;
        subscription.seenSeq = events.at(-1)!.seq;
        await server.server.sendResourceUpdated({ uri });
      }
    } catch (error) {
      process.stderr.write(`baton mcp: watching subscribed runs: ${String(error)}\n`);
    } finally {
      polling = false;
    }
  };
  const timer = setInterval(() => void poll(), pollMs);
  timer.unref();
  return { close: () => clearInterval(timer) };
}
