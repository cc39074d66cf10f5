/**
 * How many terminal columns text takes: East Asian wide and fullwidth characters and emoji take 2,
 * combining marks, joiners and other invisible characters 0, colour escapes 0. Measured per
 * grapheme (what the terminal draws as one character), so `e` + U+0301 and a family emoji joined
 * by ZWJ each count once. Ambiguous-width characters (`·`, `—`) count 1, as most terminals draw them.
 */

/** East_Asian_Width W and F ranges (Unicode 14, plus the unassigned CJK planes); emoji apart. */
const WIDE: readonly number[] = [
  0x1100, 0x115f, 0x231a, 0x231b, 0x2329, 0x232a, 0x23e9, 0x23ec, 0x23f0, 0x23f0, 0x23f3, 0x23f3, 0x25fd,
  0x25fe, 0x2614, 0x2615, 0x2648, 0x2653, 0x267f, 0x267f, 0x2693, 0x2693, 0x26a1, 0x26a1, 0x26aa, 0x26ab,
  0x26bd, 0x26be, 0x26c4, 0x26c5, 0x26ce, 0x26ce, 0x26d4, 0x26d4, 0x26ea, 0x26ea, 0x26f2, 0x26f3, 0x26f5,
  0x26f5, 0x26fa, 0x26fa, 0x26fd, 0x26fd, 0x2705, 0x2705, 0x270a, 0x270b, 0x2728, 0x2728, 0x274c, 0x274c,
  0x274e, 0x274e, 0x2753, 0x2755, 0x2757, 0x2757, 0x2795, 0x2797, 0x27b0, 0x27b0, 0x27bf, 0x27bf, 0x2b1b,
  0x2b1c, 0x2b50, 0x2b50, 0x2b55, 0x2b55, 0x2e80, 0x2e99, 0x2e9b, 0x2ef3, 0x2f00, 0x2fd5, 0x2ff0, 0x2ffb,
  0x3000, 0x303e, 0x3041, 0x3096, 0x3099, 0x30ff, 0x3105, 0x312f, 0x3131, 0x318e, 0x3190, 0x31e3, 0x31f0,
  0x321e, 0x3220, 0x3247, 0x3250, 0x4dbf, 0x4e00, 0xa48c, 0xa490, 0xa4c6, 0xa960, 0xa97c, 0xac00, 0xd7a3,
  0xf900, 0xfaff, 0xfe10, 0xfe19, 0xfe30, 0xfe52, 0xfe54, 0xfe66, 0xfe68, 0xfe6b, 0xff01, 0xff60, 0xffe0,
  0xffe6, 0x16fe0, 0x16fe4, 0x16ff0, 0x16ff1, 0x17000, 0x187f7, 0x18800, 0x18cd5, 0x18d00, 0x18d08, 0x1aff0,
  0x1aff3, 0x1aff5, 0x1affb, 0x1affd, 0x1affe, 0x1b000, 0x1b122, 0x1b150, 0x1b152, 0x1b164, 0x1b167, 0x1b170,
  0x1b2fb, 0x1f004, 0x1f004, 0x1f0cf, 0x1f0cf, 0x1f18e, 0x1f18e, 0x1f191, 0x1f19a, 0x1f200, 0x1f202, 0x1f210,
  0x1f23b, 0x1f240, 0x1f248, 0x1f250, 0x1f251, 0x1f260, 0x1f265, 0x20000, 0x2fffd, 0x30000, 0x3fffd,
];

function isWide(codePoint: number): boolean {
  let low = 0;
  let high = WIDE.length / 2 - 1;
  while (low <= high) {
    const mid = (low + high) >> 1;
    if (codePoint < WIDE[mid * 2]!) high = mid - 1;
    else if (codePoint > WIDE[mid * 2 + 1]!) low = mid + 1;
    else return true;
  }
  return false;
}

/** A CSI escape (colours, cursor moves): drawn as nothing. */
const ESCAPE = /\x1b\[[0-9;?]*[A-Za-z]/y;
const PLAIN = /^[\x20-\x7e]*$/;
/** Emoji drawn as pictures: emoji presentation by default, or asked for with U+FE0F. */
const EMOJI = /\p{Emoji_Presentation}|\p{Emoji}\uFE0F|\p{Regional_Indicator}/u;
/** Marks (variation selectors too), format characters (ZWJ, ZWSP, soft hyphen) and controls. */
const INVISIBLE = /^[\p{M}\p{Cf}\p{Cc}]/u;

let segmenter: Intl.Segmenter | undefined;

function graphemeWidth(grapheme: string): number {
  if (EMOJI.test(grapheme)) return 2;
  if (INVISIBLE.test(grapheme)) return 0;
  return isWide(grapheme.codePointAt(0)!) ? 2 : 1;
}

/** The text's pieces in order: escapes (width 0, kept whole) and graphemes with their width. */
function* pieces(text: string): Generator<{ text: string; width: number }> {
  segmenter ??= new Intl.Segmenter(undefined, { granularity: 'grapheme' });
  let plainFrom = 0;
  const flush = function* (to: number) {
    if (to <= plainFrom) return;
    for (const { segment } of segmenter!.segment(text.slice(plainFrom, to)))
      yield { text: segment, width: graphemeWidth(segment) };
  };
  for (let i = text.indexOf('\x1b'); i !== -1; i = text.indexOf('\x1b', i + 1)) {
    ESCAPE.lastIndex = i;
    const match = ESCAPE.exec(text);
    if (!match) continue;
    yield* flush(i);
    yield { text: match[0], width: 0 };
    plainFrom = i + match[0].length;
    i = plainFrom - 1;
  }
  yield* flush(text.length);
}

/** Terminal columns `text` takes (one line). */
export function displayWidth(text: string): number {
  if (PLAIN.test(text)) return text.length;
  let width = 0;
  for (const piece of pieces(text)) width += piece.width;
  return width;
}

/** `text` padded with spaces to `width` columns (never cut). */
export function padToWidth(text: string, width: number): string {
  const missing = width - displayWidth(text);
  return missing > 0 ? text + ' '.repeat(missing) : text;
}

/**
 * `text` cut to at most `width` columns, never inside a character or an escape; a cut coloured
 * text ends with a reset, so the colour does not run on.
 */
export function fitToWidth(text: string, width: number): string {
  if (PLAIN.test(text)) return text.length > width ? text.slice(0, width) : text;
  let out = '';
  let used = 0;
  let escaped = false;
  for (const piece of pieces(text)) {
    if (piece.width === 0) {
      if (piece.text.startsWith('\x1b')) escaped = true;
      out += piece.text;
      continue;
    }
    if (used + piece.width > width) return escaped ? `${out}\x1b[0m` : out;
    out += piece.text;
    used += piece.width;
  }
  return out;
}
