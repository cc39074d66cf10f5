/**
 * A hook's `format` and the notification it renders, in the pure core: what a plan may say, and
 * what each service's body holds when a run's text tries to ping everyone or many steps block.
 */
import { describe, expect, it } from 'vitest';
import { hookBody } from '../src/core/hook-format.js';
import { ntfyTarget } from '../src/core/hook-formats/ntfy.js';
import { type NotificationFacts, notificationOf } from '../src/core/notification.js';
import { validatePlanObject } from '../src/core/plan/parse.js';
import {
  checkDiscordMessage,
  checkFeishuMessage,
  checkNtfyMessage,
  checkSlackMessage,
} from './helpers/webhook-shapes.js';

const plan = (hook: Record<string, unknown>) => ({
  name: 'p',
  hooks: [{ on: ['blocked'], ...hook }],
  steps: [{ id: 'a', fn: 'noop' }],
});

describe('hooks[].format in a plan', () => {
  it('takes json, slack, discord, feishu and ntfy; json is the default and is not stored', () => {
    for (const format of ['slack', 'discord', 'feishu'])
      expect(
        validatePlanObject(plan({ url: 'https://hooks.example.com/x', format }), 'p.yaml').hooks?.[0]?.format,
      ).toBe(format);
    expect(
      validatePlanObject(plan({ url: 'https://ntfy.sh/baton-alerts', format: 'ntfy' }), 'p.yaml').hooks?.[0]
        ?.format,
    ).toBe('ntfy');
    expect(
      validatePlanObject(plan({ url: 'https://x.example.com', format: 'json' }), 'p.yaml').hooks?.[0],
    ).not.toHaveProperty('format');
  });

  it('refuses an unknown format, an ntfy hook that is a command, and an ntfy URL without a topic, naming the field', () => {
    expect(() =>
      validatePlanObject(plan({ url: 'https://x.example.com', format: 'teams' }), 'p.yaml'),
    ).toThrow(/hooks\[0\]\.format: expected json, slack, discord, feishu or ntfy, got "teams"/);
    expect(() => validatePlanObject(plan({ command: ['notify'], format: 'ntfy' }), 'p.yaml')).toThrow(
      /hooks\[0\]\.format: is ntfy, which posts to a topic URL/,
    );
    expect(() => validatePlanObject(plan({ url: 'https://ntfy.sh/', format: 'ntfy' }), 'p.yaml')).toThrow(
      /hooks\[0\]\.format: is ntfy, but url is not an ntfy topic URL/,
    );
  });

  it('ntfy: the topic URL is split into the server root and the topic', () => {
    expect(ntfyTarget('https://ntfy.example.com/alerts')).toEqual({
      postUrl: 'https://ntfy.example.com/',
      topic: 'alerts',
    });
    expect(ntfyTarget('https://example.com/ntfy/alerts')).toEqual({
      postUrl: 'https://example.com/ntfy/',
      topic: 'alerts',
    });
  });
});

const blockedFacts = (steps: number, reason: string): NotificationFacts => ({
  trigger: 'blocked',
  runId: 'r1',
  planName: 'deploy',
  runStatus: 'blocked',
  blockedReason: reason,
  event: { type: 'run.blocked', reason, seq: 9, runId: 'r1', at: 0 },
  publicUrl: 'https://baton.example.com',
  blocked: Array.from({ length: steps }, (_, i) => ({
    stepId: `s${i}`,
    reason,
    urls: {
      retry: `https://baton.example.com/blocked/r1/s${i}/t/retry`,
      skip: `https://baton.example.com/blocked/r1/s${i}/t/skip`,
    },
  })),
});

describe('the services’ bodies', () => {
  it("a run's text cannot ping a channel: Slack's control characters are escaped, Discord allows no mentions", () => {
    const notification = notificationOf(blockedFacts(1, 'failed: <!channel> @everyone look'));
    const slack = hookBody('slack', {}, notification);
    checkSlackMessage(slack);
    expect(JSON.stringify(slack.blocks)).not.toContain('<!channel>');
    expect(JSON.stringify(slack.blocks)).toContain('&lt;!channel&gt;');
    const discord = hookBody('discord', {}, notification);
    checkDiscordMessage(discord);
    expect(discord.allowed_mentions).toEqual({ parse: [] });
  });

  it('many blocked steps stay within each service’s limits: ntfy three actions, Slack 25 buttons, Discord 4,096 characters', () => {
    const notification = notificationOf(blockedFacts(30, 'x'.repeat(3000)));
    expect(checkSlackMessage(hookBody('slack', {}, notification)).length).toBeLessThanOrEqual(25);
    const discordLinks = checkDiscordMessage(hookBody('discord', {}, notification));
    // The links survive a long text: the text gives way.
    expect(discordLinks.map((l) => l.label)).toContain('Retry s0');
    checkFeishuMessage(hookBody('feishu', {}, notification));
    const ntfy = checkNtfyMessage(hookBody('ntfy', {}, notification, 'alerts'));
    expect(ntfy.map((a) => a.label)).toEqual(['Retry s0', 'Skip s0', 'Retry s1']);
  });

  it('a run over its budget says which limit, and gives baton resume as the command', () => {
    const notification = notificationOf({
      trigger: 'budget',
      runId: 'r2',
      planName: 'deploy',
      runStatus: 'blocked',
      blockedReason: 'budget: maxCostUsd 1 reached; to allow as much again: baton resume r2',
      event: { type: 'budget.exceeded', limit: 'maxCostUsd', value: 1.2, max: 1, seq: 4, runId: 'r2', at: 0 },
      publicUrl: null,
    });
    expect(notification.title).toBe('Over budget: deploy');
    expect(notification.text).toContain('Run r2 reached its maxCostUsd budget (1.2 of 1).');
    expect(notification.commands).toEqual(['baton resume r2']);
    expect(notification.consoleUrl).toBeNull();
  });

  it("a failed attempt: the blocked step's retry and skip when it left the step blocked, else only the run's page", () => {
    const failed = (blocked: NotificationFacts['blocked']): NotificationFacts => ({
      trigger: 'failed',
      runId: 'r3',
      planName: 'deploy',
      runStatus: blocked ? 'blocked' : 'running',
      blockedReason: null,
      event: {
        type: 'step.failed',
        stepId: 's0',
        attempt: 2,
        durationMs: 10,
        failureClass: 'fatal',
        message: 'HTTP 401',
        exitCode: 1,
        fingerprint: 'f',
        seq: 7,
        runId: 'r3',
        at: 0,
      },
      publicUrl: 'https://baton.example.com',
      ...(blocked ? { blocked } : {}),
    });
    const stepUrls = blockedFacts(2, 'fatal').blocked!;
    const blockedNow = notificationOf(failed(stepUrls));
    // Only the failed step's answers, though another step is listed as blocked.
    expect(blockedNow.actions.map((a) => a.label)).toEqual(['Retry s0', 'Skip s0', 'Open in Baton']);
    expect(blockedNow.text).toContain('Step s0 is blocked');
    const retrying = notificationOf(failed(undefined));
    expect(retrying.actions.map((a) => a.label)).toEqual(['Open in Baton']);
    expect(retrying.text).toContain('Baton tries it again');
  });

  it("a held tool call: the tool and its command, Approve and Reject as the call's URLs; each service's body is valid", () => {
    const facts: NotificationFacts = {
      trigger: 'waiting',
      runId: 'r4',
      planName: 'release',
      runStatus: 'running',
      blockedReason: null,
      event: {
        type: 'step.tool_approval_requested',
        stepId: 'push',
        attempt: 1,
        callId: 'toolu_1',
        tool: 'Bash',
        digest: 'a'.repeat(64),
        summary: 'git push --force',
        timeoutAt: 0,
        seq: 9,
        runId: 'r4',
        at: 0,
      },
      publicUrl: 'https://baton.example.com',
      waiting: {
        stepId: 'push',
        for: 'tool',
        tool: 'Bash',
        summary: 'git push --force',
        urls: {
          approve: 'https://baton.example.com/tool/r4/push/t1/approve',
          reject: 'https://baton.example.com/tool/r4/push/t2/reject',
        },
      },
    };
    const notification = notificationOf(facts);
    expect(notification.title).toBe('Tool approval needed at push: release');
    expect(notification.text).toContain('wants to use Bash:\ngit push --force');
    expect(notification.actions.map((a) => [a.label, a.url])).toEqual([
      ['Approve push', 'https://baton.example.com/tool/r4/push/t1/approve'],
      ['Reject push', 'https://baton.example.com/tool/r4/push/t2/reject'],
      ['Open in Baton', 'https://baton.example.com/runs/r4'],
    ]);
    const payload = { hook: 'waiting', runId: 'r4' };
    checkSlackMessage(hookBody('slack', payload, notification));
    checkDiscordMessage(hookBody('discord', payload, notification));
    checkFeishuMessage(hookBody('feishu', payload, notification));
    checkNtfyMessage(hookBody('ntfy', payload, notification, 'baton'));
  });

  it('a cancelled run: said as cancelled, with its page and no action', () => {
    const notification = notificationOf({
      trigger: 'cancelled',
      runId: 'r5',
      planName: 'deploy',
      runStatus: 'cancelled',
      blockedReason: null,
      event: { type: 'run.cancelled', seq: 3, runId: 'r5', at: 0 },
      publicUrl: 'https://baton.example.com',
    });
    expect(notification.title).toBe('Cancelled: deploy');
    expect(notification.text).toContain('Run r5 was cancelled');
    expect(notification.actions.map((a) => a.label)).toEqual(['Open in Baton']);
  });
});
