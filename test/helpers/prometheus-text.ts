/**
 * A strict parser of the Prometheus text exposition format 0.0.4, for the tests of `/metrics`: it
 * throws, naming the line, on anything a Prometheus server would refuse or misread (a bad name,
 * label or escape, a value that is not a number, a sample before its TYPE or away from its family,
 * a series twice, a histogram whose buckets are not cumulative or whose +Inf bucket is not its
 * count). No npm parser is both maintained and strict (parse-prometheus-text-format reads
 * "garbage line here" as a sample), hence this one.
 */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Family {
  name: string;
  type: 'counter' | 'gauge' | 'histogram' | 'summary' | 'untyped';
  help: string | null;
  samples: Sample[];
}

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const TYPES = new Set(['counter', 'gauge', 'histogram', 'summary', 'untyped']);

export function parsePrometheusText(text: string): Map<string, Family> {
  if (!text.endsWith('\n')) throw new Error('the exposition does not end with a newline');
  const families = new Map<string, Family>();
  const series = new Set<string>();
  let current: Family | null = null;
  const lines = text.slice(0, -1).split('\n');
  lines.forEach((line, index) => {
    const where = `line ${index + 1} (${JSON.stringify(line)})`;
    if (line === '') throw new Error(`${where}: empty line`);
    if (line.startsWith('#')) {
      const match = /^# (HELP|TYPE) (\S+) ?(.*)$/.exec(line);
      if (!match) return; // a comment
      const [, keyword, name, rest] = match as unknown as [string, string, string, string];
      if (!METRIC_NAME.test(name)) throw new Error(`${where}: bad metric name`);
      let family = families.get(name);
      if (family && family !== current) throw new Error(`${where}: family ${name} is not contiguous`);
      if (!family) {
        family = { name, type: 'untyped', help: null, samples: [] };
        families.set(name, family);
        current = family;
      }
      if (keyword === 'HELP') {
        if (family.help !== null) throw new Error(`${where}: second HELP of ${name}`);
        family.help = unescaped(rest, false, where);
      } else {
        if (!TYPES.has(rest)) throw new Error(`${where}: unknown type ${rest}`);
        if (family.samples.length > 0 || family.type !== 'untyped')
          throw new Error(`${where}: TYPE of ${name} after its samples or twice`);
        family.type = rest as Family['type'];
      }
      return;
    }
    const sample = parseSample(line, where);
    const family = familyOf(sample.name, current);
    if (family === null) throw new Error(`${where}: sample outside its family (no HELP/TYPE before it)`);
    const key = `${sample.name}${JSON.stringify(Object.entries(sample.labels).sort())}`;
    if (series.has(key)) throw new Error(`${where}: the same series twice`);
    series.add(key);
    family.samples.push(sample);
  });
  for (const family of families.values()) if (family.type === 'histogram') checkHistogram(family);
  return families;
}

/** The family a sample belongs to: the current one, by its name or a histogram/summary suffix. */
function familyOf(name: string, current: Family | null): Family | null {
  if (current === null) return null;
  if (name === current.name) return current.type === 'histogram' ? null : current;
  if (current.type === 'histogram' || current.type === 'summary') {
    for (const suffix of ['_bucket', '_sum', '_count'])
      if (name === `${current.name}${suffix}`) return current;
  }
  return null;
}

function parseSample(line: string, where: string): Sample {
  const nameMatch = /^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(line);
  if (!nameMatch) throw new Error(`${where}: bad metric name`);
  const name = nameMatch[0];
  let at = name.length;
  const labels: Record<string, string> = {};
  if (line[at] === '{') {
    at++;
    while (line[at] !== '}') {
      const labelMatch = /^([a-zA-Z_][a-zA-Z0-9_]*)="/.exec(line.slice(at));
      if (!labelMatch || !LABEL_NAME.test(labelMatch[1]!)) throw new Error(`${where}: bad label at ${at}`);
      const label = labelMatch[1]!;
      at += labelMatch[0].length;
      let raw = '';
      while (line[at] !== '"') {
        if (at >= line.length) throw new Error(`${where}: unterminated label value`);
        if (line[at] === '\\') {
          raw += line.slice(at, at + 2);
          at += 2;
        } else raw += line[at++];
      }
      at++;
      if (label in labels) throw new Error(`${where}: label ${label} twice`);
      labels[label] = unescaped(raw, true, where);
      if (line[at] === ',') at++;
      else if (line[at] !== '}') throw new Error(`${where}: expected , or } at ${at}`);
    }
    at++;
  }
  const rest = line.slice(at);
  const valueMatch = /^ (\S+)(?: (-?\d+))?$/.exec(rest);
  if (!valueMatch) throw new Error(`${where}: expected " <value> [timestamp]" after the series`);
  return { name, labels, value: parseValue(valueMatch[1]!, where) };
}

function parseValue(text: string, where: string): number {
  if (text === '+Inf') return Number.POSITIVE_INFINITY;
  if (text === '-Inf') return Number.NEGATIVE_INFINITY;
  if (text === 'NaN') return Number.NaN;
  if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(text)) throw new Error(`${where}: bad value ${text}`);
  return Number(text);
}

/** Label values know \\ \" \n; HELP texts \\ and \n. Any other escape is refused. */
function unescaped(text: string, label: boolean, where: string): string {
  return text.replace(/\\(.?)/g, (_, next: string) => {
    if (next === '\\') return '\\';
    if (next === 'n') return '\n';
    if (next === '"' && label) return '"';
    throw new Error(`${where}: bad escape \\${next}`);
  });
}

function checkHistogram(family: Family): void {
  const buckets = family.samples.filter((s) => s.name === `${family.name}_bucket`);
  const count = family.samples.find((s) => s.name === `${family.name}_count`);
  const sum = family.samples.find((s) => s.name === `${family.name}_sum`);
  if (!count || !sum || buckets.length === 0) throw new Error(`histogram ${family.name}: missing parts`);
  let previous = Number.NEGATIVE_INFINITY;
  let previousCount = 0;
  for (const bucket of buckets) {
    const le = bucket.labels.le;
    if (le === undefined) throw new Error(`histogram ${family.name}: a bucket without le`);
    const bound = parseValue(le, `histogram ${family.name}`);
    if (bound <= previous) throw new Error(`histogram ${family.name}: bucket bounds not increasing`);
    if (bucket.value < previousCount) throw new Error(`histogram ${family.name}: buckets not cumulative`);
    previous = bound;
    previousCount = bucket.value;
  }
  if (previous !== Number.POSITIVE_INFINITY) throw new Error(`histogram ${family.name}: no +Inf bucket`);
  if (previousCount !== count.value) throw new Error(`histogram ${family.name}: +Inf bucket is not _count`);
}

/** The value of one series of a parsed exposition (throws when absent). */
export function seriesValue(
  families: Map<string, Family>,
  name: string,
  labels: Record<string, string> = {},
): number {
  for (const family of families.values()) {
    const found = family.samples.find(
      (s) =>
        s.name === name &&
        Object.keys(s.labels).length === Object.keys(labels).length &&
        Object.entries(labels).every(([k, v]) => s.labels[k] === v),
    );
    if (found) return found.value;
  }
  throw new Error(`no series ${name}${JSON.stringify(labels)}`);
}
