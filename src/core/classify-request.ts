/**
 * The agent-step-sequencer skill's MULTI_STEP rule, with English and Chinese keyword sets:
 *
 *   MULTI_STEP = action_count >= 3 OR sequential language OR an output dependency
 *                OR high scope or risk OR the user asks for steps OR setup keywords
 *
 * Pure text matching, explainable: the verdict lists every criterion that fired and what matched.
 * Every pattern is bounded (no `.*`, no nested quantifiers), so a huge request classifies in linear time.
 */
export const CRITERIA = [
  'action_count',
  'sequential_language',
  'output_dependency',
  'high_scope_or_risk',
  'user_requests_steps',
  'setup_keywords',
] as const;
export type Criterion = (typeof CRITERIA)[number];

interface RequestVerdict {
  verdict: 'MULTI_STEP' | 'SINGLE_STEP';
  actionCount: number;
  actions: string[];
  fired: Criterion[];
  matches: Partial<Record<Criterion, string[]>>;
}

/** A whitespace-separated word list, so the lists below stay data. */
const words = (list: string): string[] => list.trim().split(/\s+/);

/** English verbs (any inflection) counted as distinct actions, when in imperative position. */
const ACTION_VERBS_EN = words(`
  research investigate summari[sz]e write draft send email post publish create build deploy test fix
  refactor update upgrade migrate install configure analy[sz]e review fetch pull download upload merge
  generate compile translate compare collect gather scrape clean plot document benchmark measure rename
  delete remove add implement design schedule extract convert export import backup restore notify commit
  push release audit optimi[sz]e profile debug verify validate edit organi[sz]e archive share group
`);
/**
 * Imperative position: the start of the request or of a clause, a list bullet, or after a connective or
 * a modal. So nouns that are also verbs ("the build", "this document", "a release") are not actions.
 */
const CLAUSE_OPENERS = words(
  "and or then to please also first finally just you we i let's must should can could would will",
);
const CLAUSE_START = String.raw`(?:^|[,;:.!?)](?=\s)|[(\n，。；：！？、]|\s[-*•]|\b(?:${CLAUSE_OPENERS.join('|')})\b)\s*`;
const EN_VERB = new RegExp(
  String.raw`${CLAUSE_START}\b((?:${ACTION_VERBS_EN.join('|')})(?:e?s|e?d|ing)?)\b`,
  'gi',
);
const EN_VERB_ENTRIES = ACTION_VERBS_EN.map((verb) => ({
  name: verb.replace(/\[sz\]/, 's'),
  pattern: new RegExp(`^(?:${verb})(?:e?s|e?d|ing)?$`, 'i'),
}));

/**
 * Chinese verbs counted as distinct actions. A verb inside a longer listed verb counts as that one;
 * a bare 发 ("send", as in 写报告并发给老板) counts once every word below that merely contains it is
 * set aside.
 */
const ACTION_VERBS_ZH = words(`
  研究 调研 调查 总结 汇总 统计 写 撰写 编写 起草 制作 发 发给 发送 转发 发布 上线 创建 构建 开发 部署 测试 修复
  修改 重构 优化 调试 更新 升级 迁移 安装 配置 分析 评估 审查 审核 评审 获取 拉取 查找 搜索 查询 下载 上传 同步
  合并 打包 生成 编译 翻译 校对 比较 对比 收集 整理 清理 画 记录 删除 添加 实现 设计 规划 安排 提取 转换 导出 导入
  备份 恢复 通知 回复 联系 提交 推送 检查 核对 验证 编辑 归档 分享 打印 预订
`).sort((a, b) => b.length - a.length);
/** Nouns that contain a Chinese verb: they count as no action (测试报告 is a report, 拼写 is spelling). */
const NOT_ACTIONS_ZH = words(`
  拼写 缩写 大写 小写 描写 书写 画面 动画 测试报告 测试用例 单元测试 测试环境 测试集群 配置文件 配置项
  更新日志 设计稿 设计图 设计文档 分析报告 总结报告 对比表 统计数据 统计表
  发现 发生 发票 出发 头发 理发 发烧 发展 沙发 发型 发音 发动机 引发 爆发 批发 开发者 发布会 发货单 记录仪
`);

/** "after" is sequential, except as a phrasal verb's particle ("look after") or before a time ("after lunch"). */
const AFTER_PARTICLE_OF = words(
  'look looks looked looking take takes took taking named go goes going ask asked day',
);
const AFTER_TIME = words(
  String.raw`lunch dinner breakfast work school hours midnight noon tomorrow today tonight \d`,
);
const SEQUENTIAL_AFTER = new RegExp(
  String.raw`(?<!\b(?:${AFTER_PARTICLE_OF.join('|')})\s+)\bafter(?:wards| that| this| you| which)?\b(?!\s+(?:${AFTER_TIME.join('|')}))`,
  'i',
);
/** What an earlier step produces, for "use the results", "with the findings". */
const RESULT = '(?:results?|outputs?|findings|summary|answers?|numbers)';
/** Clause-bounded gap for "X ... Y" patterns: at most n characters, never across a sentence end. */
const GAP = (n: number) => `[^.;!?\\n。；！？]{0,${n}}?`;
const ZH_GAP = (n: number) => `[^，。；！？\\n]{0,${n}}?`;
/** Things a Chinese "complete/full ..." builds (完整的电商网站), as opposed to 完整的报错信息. */
const ZH_SYSTEM = '(?:系统|项目|应用|流程|方案|网站|平台|架构|流水线|服务|后端|前端|环境|体系)';

const PATTERNS: Record<Exclude<Criterion, 'action_count'>, RegExp[]> = {
  sequential_language: [
    /\bthen\b/i,
    SEQUENTIAL_AFTER,
    new RegExp(`\\bfirst(?:ly)?\\b${GAP(200)}\\bsecond(?:ly)?\\b`, 'i'),
    /\bnext,|\bnext step\b/i,
    /\bfinally\b/i,
    /\bstep\s*\d+\b/i,
    /\bfollowed by\b/i,
    /\bonce (?:that|this|it)(?: is|'s)? done\b/i,
    /先[^。；！？\n]{0,40}?再/, // 先A，再B (may cross a comma)
    /然后/,
    /之后/,
    /接着/,
    /随后/,
    /最后(?![一两几]?[个行段条页句列项次张位天周])/, // 最后一行 is "the last line", not "finally"
    /第[一二三四五六七八九十\d]+步/,
    /完成后/,
    /接下来/,
    /紧接着/,
    /首先[^。；！？\n]{0,60}?(?:其次|然后|再|接着)/, // 首先A，其次B
    /等[^，。；！？\n]{0,20}?(?:完成|结束|好了|完)(?:之后|以后|后)/, // 等测试跑完以后
    /(?:做|写|跑|弄|搞|改|测)完(?:了)?(?:之后|以后|后|再)/,
    /[，,、]\s*(?:再|并|并且)(?:把|将)/, // 写报告，再把它发给老板
  ],
  output_dependency: [
    new RegExp(`\\bus(?:e|ing) (?:the|that|this|those|its|their) ${RESULT}\\b`, 'i'),
    /\bbased on (?:the|that|this|it|those)\b/i,
    /\bfrom (?:the )?(?:previous |last )?step\b/i,
    new RegExp(`\\bwith the ${RESULT}\\b`, 'i'),
    /\b(?:summari[sz]e|turn|convert|compile|distil) (?:it|them|that|those) into\b/i,
    /\bfrom (?:it|that|them)\b/i,
    /根据/,
    /基于/,
    /用(?:上一步|前面|之前)?的?结果/,
    /把.{0,12}(?:写成|整理成|做成|转成|汇总成)/,
    /利用.{0,8}结果/,
  ],
  high_scope_or_risk: [
    /\bmigrat(?:e|es|ed|ing|ions?)\b/i,
    /\b(?:all|every|many|multiple|several) (?:of )?(?:the )?(?:files?|modules?|services?|repos?|repositories|tables?|servers?|hosts?|databases?)\b/i,
    /\b(?:entire|whole) (?:codebase|repo|repository|project|system|monorepo|database)\b/i,
    /\bacross (?:the |all )?(?:codebase|repos?|project|servers|hosts|machines|fleet|clusters?|environments|services)\b/i,
    // A destructive verb applied in bulk; deleting one named file is a single step.
    new RegExp(
      `\\b(?:delete|remove|drop|purge|erase|truncate)\\b${GAP(40)}\\b(?:all|every|everything|each|multiple|many|older than|stale)\\b`,
      'i',
    ),
    /\bwipe\b/i,
    /\bdrop (?:the |a )?(?:table|database|schema)\b/i,
    /\b(?:to|on|in|into|against) (?:the )?prod(?:uction)?\b/i,
    /\bdatabase schema\b/i,
    /\brewrit(?:e|ing) (?:the |our |this )?(?:entire |whole )?(?:codebase|backend|frontend|app|application|service|system|module|engine|api)\b/i,
    /\bdestructive\b/i,
    /\brm -rf\b/i,
    /\bforce[- ]push\b/i,
    /迁移/,
    new RegExp(`(?:删除|删掉|清空|清除|清理)${ZH_GAP(12)}(?:所有|全部|每个|多个|一切|过期)`),
    new RegExp(`(?:所有|全部|每个|多个)${ZH_GAP(12)}(?:删除|删掉|清空|清除)`),
    /(?:所有|全部|多个)文件/,
    /整个(?:项目|代码库|系统|仓库|数据库)/,
    /(?:到|在|上|对)生产环境|生产环境(?:上|中|里)/, // changing production, not asking about it
    /数据库结构|表结构/,
    /重写(?:整个)?(?:项目|代码库|系统|模块|服务|后端|前端)/,
    /批量/,
  ],
  user_requests_steps: [
    /\bstep[- ]by[- ]step\b/i,
    /\bbreak (?:this|it) down\b/i,
    /\bone (?:at a time|by one)\b/i,
    /\bin (?:stages|phases|steps)\b/i,
    /\bsplit (?:this|it) into\b/i,
    /\bplan (?:it|this) out\b/i,
    /分步/,
    /一步一步/,
    /一步步/,
    /逐步/,
    /分阶段/,
    /拆分成/,
    /分成几步/,
  ],
  setup_keywords: [
    /\bset(?:s|ting)? up\b/i,
    /\bsetup (?:a|an|the|our|my|new)\b/i, // "setup" used as a verb, not "my setup"
    /\bmigrat(?:e|ing)\b/i,
    /\bfrom scratch\b/i,
    /\bfull[- ](?:\w+ )?(?:stack|pipeline|app|application|system|setup|suite|website|site|workflow|platform)\b/i,
    /\bcomplete (?:\w+ )?(?:pipeline|app|application|system|setup|suite|website|site|workflow|overhaul|platform)\b/i,
    /\bend[- ]to[- ]end\b(?![- ]tests?\b)/i, // "the end-to-end tests" is a noun
    /\bbootstrap\b/i,
    /\bscaffold\b/i,
    /搭建/,
    /迁移/,
    /从零(?:开始|实现)?/,
    /从头(?:开始|实现)/,
    new RegExp(`(?:完整|全套|一整套)的?[^，。；！？\\s]{0,6}?${ZH_SYSTEM}`),
    new RegExp(`初始化(?:一个)?(?:新的)?${ZH_SYSTEM}`),
  ],
};

function actionsIn(text: string): string[] {
  const found = new Set<string>();
  for (const match of text.matchAll(EN_VERB)) {
    const entry = EN_VERB_ENTRIES.find(({ pattern }) => pattern.test(match[1]!));
    if (entry) found.add(entry.name);
  }
  let rest = text;
  for (const noun of NOT_ACTIONS_ZH) rest = rest.replaceAll(noun, ' ');
  for (const verb of ACTION_VERBS_ZH) {
    if (!rest.includes(verb)) continue;
    found.add(verb);
    rest = rest.replaceAll(verb, ' '); // longest first: 撰写 is not also 写
  }
  return [...found];
}

export function classifyRequest(request: string): RequestVerdict {
  const matches: Partial<Record<Criterion, string[]>> = {};
  const actions = actionsIn(request);
  if (actions.length >= 3) matches.action_count = actions;
  for (const [criterion, patterns] of Object.entries(PATTERNS) as [Criterion, RegExp[]][]) {
    const hits = patterns
      .map((pattern) => pattern.exec(request)?.[0])
      .filter((hit): hit is string => hit !== undefined);
    if (hits.length > 0) matches[criterion] = [...new Set(hits)];
  }
  const fired = CRITERIA.filter((criterion) => matches[criterion] !== undefined);
  return {
    verdict: fired.length > 0 ? 'MULTI_STEP' : 'SINGLE_STEP',
    actionCount: actions.length,
    actions,
    fired,
    matches,
  };
}
