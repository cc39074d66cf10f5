/**
 * Display width, the one measure every table of the CLI is aligned by: what a terminal draws,
 * column for column (CJK and emoji two, combining marks and colour escapes none).
 */
import { describe, expect, it } from 'vitest';
import { table } from '../src/cli/format.js';
import { displayWidth, fitToWidth, padToWidth } from '../src/cli/text-width.js';

describe('displayWidth', () => {
  it.each([
    ['plain ASCII', 'fetch data', 10],
    ['CJK ideographs', '下载数据', 8],
    ['kana and Hangul', 'テスト한국', 10],
    ['Hangul from conjoining jamo', '\u1112\u1161\u11ab', 2],
    ['fullwidth forms', 'ＡＢ１', 6],
    ['a combining accent', 'cafe\u0301', 4],
    ['a mark stacked twice', 'a\u0300\u0316', 1],
    ['an emoji', '🚀 go', 5],
    ['an emoji joined by ZWJ', '👩‍👩‍👧', 2],
    ['a flag', '🇯🇵', 2],
    ['a text symbol asked to be an emoji', '✔\uFE0F', 2],
    ['a text symbol', '✔ done', 6],
    ['a keycap', '1\uFE0F\u20E3', 2],
    ['ambiguous punctuation', '·—', 2],
    ['a zero-width space', 'a\u200Bb', 2],
    ['colour escapes', '\x1b[32msucceeded\x1b[0m', 9],
    ['colour around CJK', '\x1b[31m失败\x1b[0m', 4],
  ])('%s', (_what, text, width) => {
    expect(displayWidth(text)).toBe(width);
  });
});

describe('padToWidth and fitToWidth', () => {
  it('pads by columns, not by UTF-16 units', () => {
    expect(padToWidth('数据', 6)).toBe('数据  ');
    expect(padToWidth('\x1b[32mok\x1b[0m', 4)).toBe('\x1b[32mok\x1b[0m  ');
    expect(padToWidth('too long', 3)).toBe('too long');
  });

  it('cuts at a column without splitting a character, and resets a colour it cuts', () => {
    expect(fitToWidth('下载数据', 5)).toBe('下载');
    expect(fitToWidth('👩‍👩‍👧 family', 3)).toBe('👩‍👩‍👧 ');
    expect(fitToWidth('cafe\u0301 noir', 4)).toBe('cafe\u0301');
    expect(fitToWidth('\x1b[31mblocked\x1b[0m', 3)).toBe('\x1b[31mblo\x1b[0m');
    expect(fitToWidth('short', 10)).toBe('short');
  });
});

describe('table', () => {
  it('pads cells by terminal columns, so wide, combining and coloured cells line up', () => {
    const rows = [
      ['STEP', 'TITLE', 'STATUS'],
      ['fetch', '下载数据', 'ok'],
      ['mix', 'cafe\u0301 🚀', '\x1b[31mblocked\x1b[0m'],
      ['sum', 'ＡＢ', 'ready'],
    ];
    expect(table(rows).split('\n')).toEqual([
      'STEP   TITLE     STATUS',
      'fetch  下载数据  ok',
      'mix    cafe\u0301 🚀   \x1b[31mblocked\x1b[0m',
      'sum    ＡＢ      ready',
    ]);
  });
});
