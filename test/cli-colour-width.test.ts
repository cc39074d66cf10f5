/**
 * What `status` and `timeline` print through the real `baton`: status words in colour only where
 * colour is asked for (FORCE_COLOR stands in for a TTY, which node cannot fake), never with
 * NO_COLOR, in a pipe or in --json; and step tables aligned by terminal columns with CJK, fullwidth,
 * emoji and combining characters in the titles.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectExit, removeTempDirs, runBaton, writePlan } from './helpers/cli.js';
import { fixturePlan, planDir } from './helpers/plans.js';

let baton: Awaited<ReturnType<typeof succeededRun>>;

beforeAll(async () => {
  baton = await succeededRun();
}, 30_000);

afterAll(removeTempDirs);

const TITLES = ['下载数据', 'ＡＢＣ report', 'cafe\u0301 au lait', '🚀 launch', 'plain title'];

/** A run `r` of one step per title, run to success in the foreground. */
async function succeededRun() {
  const { dir, home } = planDir('baton-colour-');
  const steps = TITLES.map((title, i) => ({ id: `s${i}`, title, instruction: 'go' }));
  const file = writePlan(dir, fixturePlan(steps, {}, 'agent-gated'));
  expectExit(await runBaton(['run', file, '--id', 'r'], { home, cwd: dir }), 0);
  return (args: string[], env: Record<string, string> = {}) => runBaton(args, { home, cwd: dir, env });
}

/**
 * Terminal columns of text, counted independently of the code under test for the characters used
 * here: CJK, fullwidth forms and pictographs take 2, combining marks 0.
 */
function columns(text: string): number {
  let width = 0;
  for (const char of text) {
    if (/\p{M}/u.test(char)) continue;
    width += /[\u3000-\u9fff\uff01-\uff60]|\p{Extended_Pictographic}/u.test(char) ? 2 : 1;
  }
  return width;
}

describe('colours', () => {
  it('colour status words only when asked, never with NO_COLOR, in a pipe or in --json', async () => {
    const green = '\x1b[32msucceeded\x1b[0m';
    const forced = await baton(['status', 'r'], { FORCE_COLOR: '1' });
    expectExit(forced, 0);
    expect(forced.stdout).toContain(`plan cli-test  ${green}  5/5 steps done`);
    expect(forced.stdout).toMatch(/s0 +下载数据 +\x1b\[32msucceeded\x1b\[0m/);
    expect((await baton(['status'], { FORCE_COLOR: '1' })).stdout).toContain(green);
    expect((await baton(['timeline', 'r'], { FORCE_COLOR: '1' })).stdout).toContain('\x1b[32mrun succeeded');

    const plain = [
      [['status', 'r'], {}],
      [['timeline', 'r'], {}],
      [['status', 'r'], { NO_COLOR: '1', FORCE_COLOR: '1' }],
      [['status', 'r'], { FORCE_COLOR: '0' }],
    ] as const;
    for (const [args, env] of plain) {
      const result = await baton([...args], env);
      expectExit(result, 0);
      expect(result.stdout, `${args.join(' ')} ${JSON.stringify(env)}`).not.toContain('\x1b');
      expect(result.stdout).toContain('succeeded');
    }
    const json = await baton(['status', 'r', '--json'], { FORCE_COLOR: '1' });
    expect(json.stdout).not.toContain('\x1b');
    expect(JSON.parse(json.stdout).status).toBe('succeeded');
  }, 30_000);
});

describe('table alignment', () => {
  it('starts STATUS and ATTEMPTS at the same terminal column on every row, whatever the title', async () => {
    const { stdout } = expectExit(await baton(['status', 'r']), 0);
    const lines = stdout.split('\n');
    const header = lines.find((line) => line.startsWith('STEP '))!;
    expect(header).toMatch(/^STEP +TITLE +STATUS +ATTEMPTS/);
    const rows = lines.filter((line) => /^s\d /.test(line));
    expect(rows).toHaveLength(TITLES.length);
    for (const [i, row] of rows.entries()) expect(row).toContain(TITLES[i]);
    for (const column of ['STATUS', 'ATTEMPTS']) {
      const want = header.indexOf(column);
      const at = rows.map((row) => {
        const cells = row.split(/ {2,}/);
        const index = column === 'STATUS' ? 2 : 3;
        return columns(row.slice(0, row.indexOf(`  ${cells[index]}`) + 2));
      });
      expect(at, column).toEqual(rows.map(() => want));
    }
  }, 30_000);
});
