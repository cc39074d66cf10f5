/**
 * Whether a Node.js version satisfies a package's `engines.node` range, for the forms packages use:
 * comparators (`>=24.16.0`, `<25`, `>20`, `<=22`, `=20.1.0`, a bare version), `^x.y.z`, `~x.y.z`,
 * `x.x` wildcards, spaces for "and", `||` for "or". An unreadable range is taken as satisfied.
 */
export function satisfiesNodeRange(version: string, range: string): boolean {
  const have = parts(version);
  if (have === undefined) return true;
  const alternatives = range.split('||').map((alt) => alt.trim());
  return alternatives.some((alt) => {
    if (alt === '' || alt === '*') return true;
    return alt.split(/\s+/).every((comparator) => satisfies(have, comparator));
  });
}

type Version = [number, number, number];

function parts(text: string): Version | undefined {
  const match = /^v?(\d+)(?:\.(\d+|x|\*))?(?:\.(\d+|x|\*))?/.exec(text.trim());
  if (!match) return undefined;
  const n = (s: string | undefined) => (s === undefined || s === 'x' || s === '*' ? 0 : Number(s));
  return [n(match[1]), n(match[2]), n(match[3])];
}

function compare(a: Version, b: Version): number {
  for (let i = 0; i < 3; i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
  return 0;
}

function satisfies(have: Version, comparator: string): boolean {
  const match = /^(>=|<=|>|<|=|\^|~)?\s*(.+)$/.exec(comparator);
  const want = match ? parts(match[2]!) : undefined;
  if (!match || want === undefined) return true;
  const c = compare(have, want);
  switch (match[1]) {
    case '>=':
      return c >= 0;
    case '<=':
      return c <= 0;
    case '>':
      return c > 0;
    case '<':
      return c < 0;
    case '^':
      return c >= 0 && have[0] === want[0];
    case '~':
      return c >= 0 && have[0] === want[0] && have[1] === want[1];
    default: {
      // A bare or `=` version: `20` is any 20.x.y, `20.1` any 20.1.y, `20.1.0` exactly that.
      const given = (/^v?(\d+)(?:\.(\d+))?(?:\.(\d+))?/.exec(match[2]!.trim()) ?? []).filter(
        (part, index) => index > 0 && part !== undefined,
      ).length;
      return have.slice(0, given).every((value, index) => value === want[index]);
    }
  }
}
