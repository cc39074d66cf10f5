import { describe, expect, it } from 'vitest';
import { CRITERIA, type Criterion, classifyRequest } from '../src/core/classify-request.js';
import { runBaton } from './helpers/cli.js';

type Case = [request: string, fired: Criterion[]];

/** Requests an operator would send an agent. `fired` empty means SINGLE_STEP, anything else MULTI_STEP. */
const MULTI_EN: Case[] = [
  ['Research the top 5 vector databases, then write a comparison table.', ['sequential_language']],
  [
    'Download the sales CSV, clean the bad rows, plot revenue by month and email the chart to finance.',
    ['action_count'],
  ],
  [
    "Analyze last quarter's churn data, summarize the findings, and draft an email to the leadership team.",
    ['action_count'],
  ],
  ['After you merge the PR, tag a release and publish the package to npm.', ['sequential_language']],
  ['Step 1: back up the database. Step 2: run the schema change.', ['sequential_language']],
  ['Fetch the latest benchmark numbers and write a blog post based on the results.', ['output_dependency']],
  ['Rename the `userId` field to `accountId` in all files under src/.', ['high_scope_or_risk']],
  ['Delete all logs older than 30 days across the servers.', ['high_scope_or_risk']],
  ['Migrate the user service from MySQL to Postgres.', ['high_scope_or_risk', 'setup_keywords']],
  ['Deploy the new build to production once the tests pass.', ['high_scope_or_risk']],
  ['Walk me through configuring nginx step by step.', ['user_requests_steps']],
  ['Break this down for me: a landing page with signup and Stripe payments.', ['user_requests_steps']],
  ['Set up CI for this repo with GitHub Actions.', ['setup_keywords']],
  ['Build a todo app from scratch in React.', ['setup_keywords']],
];

const SINGLE_EN: Case[] = [
  ['Fix the authentication bug in login.ts.', []], // "then" inside "authentication"
  ["Can you look after the staging server while I'm out?", []], // "after" as a phrasal verb
  ['Remind me to call the vendor after lunch.', []], // "after" + a time
  ['Remind me to renew the SSL certificate next week.', []], // "next" + a time
  ['Explain what the afterEach hook does in vitest.', []], // "after" inside a word
  ['Send me the complete quarterly report as a PDF.', []], // "report" as a noun, not "complete Y"
  ['Review the design document for the next release.', []], // nouns that are also verbs
  ['Delete this one temp file: /tmp/build-cache.tmp', []], // one file: not a bulk destructive op
  ['Rewrite this paragraph to sound more friendly.', []], // rewriting text, not a system
  ['Format the config file using the project Prettier settings.', []], // "using the" + no prior output
  ['Run the end-to-end tests for the checkout flow.', []], // "end-to-end tests" is a noun
  ['Translate this error message into Spanish.', []],
  ["What's the difference between a mutex and a semaphore?", []],
  ['Add a unit test for the parseDate function.', []],
];

const MULTI_ZH: Case[] = [
  ['先调研竞品，然后写一份总结报告', ['sequential_language']],
  ['下载日志文件，分析错误原因，之后把结论发到群里', ['sequential_language']],
  ['第一步备份数据库，第二步执行数据库变更脚本', ['sequential_language']],
  ['先把接口文档看一遍，再给出改进建议', ['sequential_language']],
  ['根据这份需求文档写测试用例', ['output_dependency']],
  ['把调研结果整理成一份对比表格', ['output_dependency']],
  ['收集用户反馈，整理成表格，再生成一份分析报告', ['action_count']],
  ['删除所有服务器上超过30天的日志', ['high_scope_or_risk']],
  ['重构整个项目的错误处理', ['high_scope_or_risk']],
  ['把数据库从 MySQL 迁移到 PostgreSQL', ['high_scope_or_risk', 'setup_keywords']],
  ['请分步完成：注册域名、配置 DNS、部署网站', ['user_requests_steps']],
  ['一步一步教我配置 Nginx 反向代理', ['user_requests_steps']],
  ['帮我搭建一个 Kubernetes 测试集群', ['setup_keywords']],
  ['从零实现一个简单的 Redis 客户端', ['setup_keywords']],
  ['写一个完整的电商网站，包括前端和后端', ['setup_keywords']],
];

const SINGLE_ZH: Case[] = [
  ['翻译这句话', []],
  ['修复这个拼写错误', []], // 写 inside 拼写
  ['今天天气怎么样', []],
  ['删除这个临时文件', []], // one file
  ['总结一下这篇文章', []],
  ['帮我看一下这份测试报告有没有错别字', []], // 测试报告 is a noun
  ['修改一下配置文件里的端口号', []], // 配置文件 is a noun
  ['生产环境的数据库地址是多少？', []], // asking about production, not changing it
  ['给我完整的报错信息', []], // 完整的 + not a system
  ['重写这个函数的注释', []], // rewriting a comment
  ['最后一行代码为什么报错？', []], // 最后 = "the last", not "finally"
  ['下周一提醒我续费域名', []],
];

/**
 * Added with the sending, shipping and sequencing vocabulary (发/发给/发送, 提交, 部署/上线, 通知,
 * 汇总, 首先…其次, 接下来, 等…完以后), and the words that merely contain 发 (发现, 发票, 头发…).
 */
const MULTI_ZH_MORE: Case[] = [
  ['调研竞争对手、写一份报告并发给老板', ['action_count']],
  ['汇总本周的工单数据，画成图表，发到团队群里', ['action_count']],
  ['开发登录功能，测试通过后提交代码并部署上线', ['action_count']],
  ['首先检查服务器日志，其次定位问题原因', ['sequential_language']],
  ['接下来把文档翻译成英文', ['sequential_language']],
  ['等测试跑完以后再合并分支', ['sequential_language']],
  ['写一份周报，再把它发给经理', ['sequential_language']],
  ['统计每个渠道的销量，分析趋势，通知市场部调整预算', ['action_count']],
  ['紧接着更新一下版本号', ['sequential_language']],
  ['查询昨天的订单，核对金额，回复客户的邮件', ['action_count']],
];
const SINGLE_ZH_MORE: Case[] = [
  ['我发现这个函数有内存泄漏', []], // 发现 is "find out", not "send"
  ['发票抬头写错了怎么办？', []], // 发票 is an invoice
  ['这个错误是什么时候发生的？', []],
  ['帮我发一下这封邮件', []], // one action
  ['把这个文件发给张三', []],
  ['提交这次的修改', []],
  ['头发剪短一点好看吗', []],
  ['公司未来五年的发展方向是什么', []],
  ['通知大家明天下午开会', []],
  ['开发者文档在哪里', []], // 开发者 is "developer"
];
const MULTI_EN_MORE: Case[] = [
  ['Collect the error logs, group them by service and send the summary to on-call.', ['action_count']],
  ['Once that is done, tag the commit and push it.', ['sequential_language']],
  ['Compile the release notes based on the merged PRs.', ['output_dependency']],
  ['Write the migration, then run it against staging.', ['sequential_language']],
  ['Scrape the pricing pages, compare the plans and draft a memo.', ['action_count']],
  ['Set up a staging environment for the payments service.', ['setup_keywords']],
  ['Drop the table of stale sessions and rebuild the indexes.', ['high_scope_or_risk']],
  ['Do it one at a time: rename the modules, update the imports, fix the tests.', ['user_requests_steps']],
];
const SINGLE_EN_MORE: Case[] = [
  ['Send the invoice to accounting.', []],
  ['Submit the expense report.', []],
  ['Notify me when the build is green.', []],
  ['What does the deploy script do?', []],
  ['Summarize this thread in two sentences.', []],
  ['Post a short update in the team channel.', []],
  ['Email Bob the meeting notes.', []],
  ['Which file defines the retry policy?', []],
];

const TABLE: Case[] = [
  ...MULTI_EN,
  ...MULTI_EN_MORE,
  ...SINGLE_EN,
  ...SINGLE_EN_MORE,
  ...MULTI_ZH,
  ...MULTI_ZH_MORE,
  ...SINGLE_ZH,
  ...SINGLE_ZH_MORE,
];
const MORE = MULTI_ZH_MORE.length + SINGLE_ZH_MORE.length + MULTI_EN_MORE.length + SINGLE_EN_MORE.length;

describe('classifyRequest table', () => {
  it('is balanced: about half English, half Chinese, half MULTI_STEP', () => {
    expect(TABLE.length).toBeGreaterThanOrEqual(60);
    expect(MORE).toBeGreaterThanOrEqual(30);
    const english = MULTI_EN.length + MULTI_EN_MORE.length + SINGLE_EN.length + SINGLE_EN_MORE.length;
    const multi = MULTI_EN.length + MULTI_EN_MORE.length + MULTI_ZH.length + MULTI_ZH_MORE.length;
    expect(Math.abs(english * 2 - TABLE.length)).toBeLessThanOrEqual(4);
    expect(Math.abs(multi * 2 - TABLE.length)).toBeLessThanOrEqual(4);
    for (const [, fired] of [...MULTI_EN, ...MULTI_EN_MORE, ...MULTI_ZH, ...MULTI_ZH_MORE])
      expect(fired.length).toBeGreaterThan(0);
  });

  it.each(TABLE)('%s', (request, expected) => {
    const verdict = classifyRequest(request);
    if (expected.length === 0) {
      expect(verdict).toMatchObject({ verdict: 'SINGLE_STEP', fired: [], matches: {} });
    } else {
      expect(verdict.verdict).toBe('MULTI_STEP');
      expect(verdict.fired).toEqual(expect.arrayContaining(expected));
    }
  });
});

describe('classifyRequest explanations', () => {
  it('is deterministic and its matches explain every fired criterion', () => {
    for (const [request] of TABLE) {
      const verdict = classifyRequest(request);
      expect(classifyRequest(request)).toEqual(verdict);
      expect(verdict.verdict).toBe(verdict.fired.length > 0 ? 'MULTI_STEP' : 'SINGLE_STEP');
      expect(Object.keys(verdict.matches).sort()).toEqual([...verdict.fired].sort());
      expect(verdict.fired).toEqual(CRITERIA.filter((c) => verdict.fired.includes(c))); // rule order
      expect(verdict.actionCount).toBe(verdict.actions.length);
      for (const criterion of verdict.fired) {
        const hits = verdict.matches[criterion] ?? [];
        expect(hits.length).toBeGreaterThan(0);
        if (criterion === 'action_count') {
          expect(hits).toEqual(verdict.actions);
          expect(hits.length).toBeGreaterThanOrEqual(3);
        } else {
          for (const hit of hits) expect(request.toLowerCase()).toContain(hit.toLowerCase());
        }
      }
    }
  });

  it('classifies an empty request as SINGLE_STEP', () => {
    expect(classifyRequest('')).toEqual({
      verdict: 'SINGLE_STEP',
      actionCount: 0,
      actions: [],
      fired: [],
      matches: {},
    });
  });

  it('classifies 100 KB requests without catastrophic backtracking', () => {
    const size = 100 * 1024;
    const fill = (unit: string) => unit.repeat(Math.ceil(size / unit.length));
    const requests = [
      fill('first '), // "first ... second" with no "second"
      fill('先'), // "先 ... 再" with no 再
      fill('delete the '), // destructive verb with no bulk word
      fill('删除这个'),
      fill('full '),
      fill('完整的'),
      fill('a'),
      fill(' ,'),
      `${fill('Research the market, ')}then write a report.`,
      fill('根据结果写报告，然后迁移数据库。'),
    ];
    for (const request of requests) {
      const verdict = classifyRequest(request);
      expect(['MULTI_STEP', 'SINGLE_STEP']).toContain(verdict.verdict);
    }
    expect(classifyRequest(requests[8]!).fired).toContain('sequential_language');
  });
});

describe('baton classify --json', () => {
  it('prints the verdict as JSON and exits 0', async () => {
    const request = '先调研竞品，然后写一份总结报告';
    const result = await runBaton(['classify', '--json', request]);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual(classifyRequest(request));
  });
});
