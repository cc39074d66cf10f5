/**
 * The agent-step-sequencer skill's MULTI_STEP rule, with English and Chinese keyword sets:
 *
 *   MULTI_STEP = action_count >= 3 OR sequential language OR an output dependency
 *                OR high scope or risk OR the user asks for steps OR setup keywords
 *
 * Pure text matching, explainable: the verdict lists every criterion that fired and what matched.
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

export interface RequestVerdict {
  verdict: 'MULTI_STEP' | 'SINGLE_STEP';
  actionCount: number;
  actions: string[];
  fired: Criterion[];
  matches: Partial<Record<Criterion, string[]>>;
}

/** Distinct actions: an English verb (any inflection) or a Chinese verb. */
const ACTION_VERBS_EN = [
  'research',
  'investigate',
  'summari[sz]e',
  'write',
  'draft',
  'send',
  'email',
  'post',
  'publish',
  'create',
  'build',
  'deploy',
  'test',
  'fix',
  'refactor',
  'update',
  'upgrade',
  'migrate',
  'install',
  'configure',
  'analy[sz]e',
  'review',
  'fetch',
  'pull',
  'download',
  'upload',
  'merge',
  'generate',
  'compile',
  'translate',
  'compare',
  'collect',
  'gather',
  'scrape',
  'clean',
  'plot',
  'document',
  'benchmark',
  'measure',
  'rename',
  'delete',
  'remove',
  'add',
  'implement',
  'design',
  'schedule',
  'extract',
  'convert',
  'export',
  'import',
  'backup',
  'restore',
  'notify',
  'commit',
  'push',
  'release',
  'audit',
  'optimi[sz]e',
  'profile',
  'debug',
  'verify',
  'validate',
  'edit',
  'organi[sz]e',
  'archive',
  'share',
];
const ACTION_VERBS_ZH = [
  '研究',
  '调研',
  '总结',
  '汇总',
  '写',
  '撰写',
  '起草',
  '发送',
  '发布',
  '创建',
  '构建',
  '部署',
  '测试',
  '修复',
  '重构',
  '更新',
  '升级',
  '迁移',
  '安装',
  '配置',
  '分析',
  '审查',
  '评审',
  '获取',
  '拉取',
  '下载',
  '上传',
  '合并',
  '生成',
  '编译',
  '翻译',
  '比较',
  '对比',
  '收集',
  '整理',
  '清理',
  '画',
  '报告',
  '记录',
  '删除',
  '添加',
  '实现',
  '设计',
  '规划',
  '提取',
  '转换',
  '导出',
  '导入',
  '备份',
  '恢复',
  '通知',
  '提交',
  '推送',
  '检查',
  '验证',
  '编辑',
  '归档',
  '分享',
];

const PATTERNS: Record<Exclude<Criterion, 'action_count'>, RegExp[]> = {
  sequential_language: [
    /\bthen\b/i,
    /\bafter(?:wards| that| this)?\b/i,
    /\bfirst\b[^.]*\b(?:then|next|after)\b/i,
    /\bnext,|\bnext step\b/i,
    /\bfinally\b/i,
    /\bstep\s*\d+\b/i,
    /\bfollowed by\b/i,
    /\bonce (?:that|this|it)(?: is|'s)? done\b/i,
    /先.*(?:然后|再|接着)/,
    /然后/,
    /之后/,
    /接着/,
    /随后/,
    /最后/,
    /第[一二三四五六七八九十\d]+步/,
    /完成后/,
  ],
  output_dependency: [
    /\busing (?:the|that|this|those|its|their)\b/i,
    /\bbased on (?:the|that|this|it|those)\b/i,
    /\bfrom (?:the )?step\b/i,
    /\bwith the (?:results?|output|summary|findings|data)\b/i,
    /\buse (?:the|that|its) (?:output|results?|summary)\b/i,
    /\b(?:summari[sz]e|turn|convert|compile|distil) (?:it|them|that|this|the \w+) into\b/i,
    /\bfrom (?:it|that|them)\b/i,
    /根据/,
    /基于/,
    /用(?:上一步|前面|之前)?的?结果/,
    /把.{0,12}(?:写成|整理成|做成|转成|汇总成)/,
    /利用.{0,8}结果/,
  ],
  high_scope_or_risk: [
    /\bmigrat(?:e|ion|ing)\b/i,
    /\b(?:all|every|many|multiple) (?:the )?(?:files|modules|services|repos|repositories|tables)\b/i,
    /\bentire (?:codebase|repo|repository|project|system)\b/i,
    /\bacross the (?:codebase|repo|project)\b/i,
    /\bdelete\b/i,
    /\bdrop (?:the )?(?:table|database)\b/i,
    /\bwipe\b/i,
    /\bproduction\b/i,
    /\bdatabase schema\b/i,
    /\brewrite\b/i,
    /\bdestructive\b/i,
    /\brm -rf\b/i,
    /\bforce[- ]push\b/i,
    /迁移/,
    /删除/,
    /所有文件/,
    /整个(?:项目|代码库|系统|仓库)/,
    /生产环境/,
    /数据库(?:结构|表)/,
    /重写/,
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
    /\bset(?:ting)? ?up\b/i,
    /\bmigrate\b/i,
    /\b(?:implement|build|write) (?:\w+ )?from scratch\b/i,
    /\bfrom scratch\b/i,
    /\bfull (?:\w+ )?(?:stack|pipeline|app|application|system|setup|suite|report|website|site|workflow)\b/i,
    /\bcomplete (?:\w+ )?(?:pipeline|app|application|system|setup|suite|report|website|site|workflow|overhaul)\b/i,
    /\bend[- ]to[- ]end\b/i,
    /\bbootstrap\b/i,
    /\bscaffold\b/i,
    /搭建/,
    /从零(?:开始|实现)?/,
    /从头(?:开始|实现)/,
    /完整的/,
    /全套/,
    /一整套/,
    /初始化/,
  ],
};

function actionsIn(text: string): string[] {
  const found = new Set<string>();
  for (const verb of ACTION_VERBS_EN) {
    const match = new RegExp(`\\b(${verb})(?:e?s|e?d|ing)?\\b`, 'i').exec(text);
    if (match) found.add(verb.replace(/\[sz\]/, 's'));
  }
  for (const verb of ACTION_VERBS_ZH) if (text.includes(verb)) found.add(verb);
  // "写" is part of "撰写": count the longer word only.
  if (found.has('撰写')) found.delete('写');
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
